/**
 * UpdateBillingDetails semantics (decisions, "Billing update semantics"): every field optional,
 * a present field replaces the value under its response spelling, unknown fields are ignored.
 */
import { BILLING_RESPONSE_FIELD, BILLING_UPDATE_FIELDS, type Billing } from '../api/types.js';
import { fail, succeed, type StoreResult } from './failure.js';

// Deliberately loose: one @, something on each side, a dot in the domain.
const EMAIL_PATTERN = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** Validates `body` and returns the billing changes (response spelling) without applying them. */
export function parseBillingUpdate(body: unknown): StoreResult<Partial<Billing>> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return fail(400, 'invalid_request', 'The request body must be a JSON object.');
  }
  const record = body as Record<string, unknown>;
  const changes: Record<string, string> = {};
  for (const field of BILLING_UPDATE_FIELDS) {
    if (!Object.hasOwn(record, field)) continue;
    const value = record[field];
    if (typeof value !== 'string') {
      return fail(422, 'validation_failed', `${field} must be a string.`, field);
    }
    if (field === 'billingEmail' && !EMAIL_PATTERN.test(value)) {
      return fail(422, 'validation_failed', 'billingEmail must be an e-mail address.', field);
    }
    changes[BILLING_RESPONSE_FIELD[field]] = value;
  }
  return succeed(changes as Partial<Billing>);
}
