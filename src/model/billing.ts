/**
 * Billing as orgform means it: the four billing details it manages, named as orgs.yaml names them
 * (which is how an UpdateBillingDetails request spells them). From the config to the plan billing
 * has one shape, `BillingDetails`: the fields that are set, declared or to be sent. What was read
 * from the service is `BillingValues`: every field, null where the service holds none, and
 * "unknown" kept apart from "empty" (`BillingObservation`). Pure.
 */

export const BILLING_FIELDS = ['billingEmail', 'customerID', 'subscriptionID', 'platformID'] as const;
export type BillingField = (typeof BILLING_FIELDS)[number];

/** The billing fields that are set, each to a string; a field left out is not declared (or not sent). */
export type BillingDetails = Partial<Record<BillingField, string>>;

/** Every billing field as read, null when the service holds no value for it. */
export type BillingValues = Record<BillingField, string | null>;

/** Billing as read, or why it could not be: a write built from what was not read could clear values. */
export type BillingObservation = { known: true; values: BillingValues } | { known: false; reason: string };

/** The billing to send: the declared fields, and every other one as it was read. */
export function fullBillingUpdate(declared: BillingDetails, current: BillingValues): BillingDetails {
  const body: BillingDetails = {};
  for (const field of BILLING_FIELDS) {
    const value = declared[field] ?? current[field];
    // A field the service holds no value for stays out: under replace and merge alike it stays empty.
    if (value !== null && value !== undefined) body[field] = value;
  }
  return body;
}

/** The declared fields whose value differs from what was read. */
export function differingFields(declared: BillingDetails, current: BillingValues): BillingField[] {
  return BILLING_FIELDS.filter((field) => declared[field] !== undefined && declared[field] !== current[field]);
}
