/**
 * Billing as the organisations get it: `defaults.billing` under each organisation's own billing,
 * field by field, so that a file states shared values (the billing e-mail, say) once.
 */
import { BILLING_FIELDS, type BillingDetails } from '../model/billing.js';
import { detachString } from './detached-string.js';
import { isRecord, own } from './value-at.js';

/** The billing fields that `value` sets as strings; the rest were reported by the schema. */
export function pickBilling(value: unknown): BillingDetails {
  const billing: BillingDetails = {};
  if (!isRecord(value)) return billing;
  for (const field of BILLING_FIELDS) {
    const v = own(value, field);
    if (typeof v === 'string') billing[field] = detachString(v);
  }
  return billing;
}

/** The organisation's own values over the defaults, in the canonical field order. */
export function mergeBilling(defaults: BillingDetails, own: BillingDetails): BillingDetails {
  const merged: BillingDetails = {};
  for (const field of BILLING_FIELDS) {
    const value = own[field] ?? defaults[field];
    if (value !== undefined) merged[field] = value;
  }
  return merged;
}
