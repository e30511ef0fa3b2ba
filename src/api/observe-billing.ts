/**
 * The edge from the wire to the model for billing: the four billing fields orgform manages, as read
 * from an Organisation (response spelling, or the request's, which a service may also use), with
 * "unknown" kept apart from "empty". A PUT built from a value that was not read can clear it (a
 * service may replace the whole billing on update), so anything orgform cannot read with certainty
 * is unknown, never empty. An empty string is no value: read as null, so that it is never sent
 * back (a service that stores "" for an e-mail refuses it in a write). Pure.
 */
import { BILLING_FIELDS, type BillingField, type BillingObservation, type BillingValues } from '../model/billing.js';
import { BILLING_RESPONSE_FIELD } from './types.js';

// Responses spell customerId; a service may also use the update's spelling, customerID.
const SPELLINGS = new Map<BillingField, readonly string[]>(BILLING_FIELDS.map((field) => [field, [...new Set<string>([BILLING_RESPONSE_FIELD[field], field])]]));

/**
 * `authoritative` says whether an answer without billing means "no billing": true for GetOrganisation,
 * false for a listing, which may leave billing out.
 */
export function observeBilling(raw: unknown, authoritative: boolean): BillingObservation {
  if (raw === undefined || raw === null) {
    if (!authoritative) return { known: false, reason: 'the listing does not show billing' };
    return { known: true, values: { billingEmail: null, customerID: null, subscriptionID: null, platformID: null } };
  }
  if (typeof raw !== 'object' || Array.isArray(raw)) return { known: false, reason: `the service sent a billing that is not an object (${describe(raw)})` };
  const billing = raw as Record<string, unknown>;
  const values = {} as BillingValues;
  for (const field of BILLING_FIELDS) {
    const spellings = SPELLINGS.get(field)!;
    const seen = spellings.map((name) => billing[name]).filter((v) => v !== undefined && v !== null && v !== '');
    const strings = seen.filter((v): v is string => typeof v === 'string');
    if (strings.length < seen.length) {
      const odd = seen.find((v) => typeof v !== 'string');
      return { known: false, reason: `billing.${spellings[0]} came back as ${describe(odd)}, not a string` };
    }
    if (new Set(strings).size > 1) return { known: false, reason: `billing has two different values for ${spellings.join(' and ')}` };
    values[field] = strings[0] ?? null;
  }
  return { known: true, values };
}

function describe(value: unknown): string {
  if (Array.isArray(value)) return 'an array';
  return value === null ? 'null' : `a ${typeof value}`;
}
