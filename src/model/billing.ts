/**
 * Billing as orgform means it: the four billing details it manages, named as orgs.yaml names them
 * (which is how an UpdateBillingDetails request spells them). From the config to the plan billing
 * has one shape, `BillingDetails`: the fields that are set, declared or to be sent. What was read
 * from the service is `BillingValues`: every field, null where the service holds none (an empty
 * string is none too), and "unknown" kept apart from "empty" (`BillingObservation`). Pure.
 */

export const BILLING_FIELDS = ['billingEmail', 'customerID', 'subscriptionID', 'platformID'] as const;
export type BillingField = (typeof BILLING_FIELDS)[number];

/** The billing fields that are set, each to a string; a field left out is not declared (or not sent). */
export type BillingDetails = Partial<Record<BillingField, string>>;

/** Every billing field as read, null when the service holds no value for it. */
export type BillingValues = Record<BillingField, string | null>;

/** The declared fields of a billing change as the plan read them (null: no value): what apply checks the fresh read against. */
export type SeenBilling = Partial<Record<BillingField, string | null>>;

/** Billing as read, or why it could not be: a write built from what was not read could clear values. */
export type BillingObservation = { known: true; values: BillingValues } | { known: false; reason: string };

/** The billing to send: the declared fields, and every other one as it was read. */
export function fullBillingUpdate(declared: BillingDetails, current: BillingValues): BillingDetails {
  const body: BillingDetails = {};
  for (const field of BILLING_FIELDS) {
    const value = declared[field] ?? current[field];
    // A field the service holds no value for stays out: under replace and merge alike it stays empty.
    if (value !== null && value !== undefined && value !== '') body[field] = value;
  }
  return body;
}

/** The declared fields whose value differs from what was read. */
export function differingFields(declared: BillingDetails, current: BillingValues): BillingField[] {
  return BILLING_FIELDS.filter((field) => declared[field] !== undefined && declared[field] !== current[field]);
}

/** The declared fields as `current` holds them: what a plan records of what it saw. */
export function seenOf(declared: BillingDetails, current: BillingValues): SeenBilling {
  const seen: SeenBilling = {};
  for (const field of BILLING_FIELDS) if (declared[field] !== undefined) seen[field] = current[field];
  return seen;
}

/** What to do with a billing change, given what the service holds now. */
export type BillingWrite =
  /** Send this body: the declared fields, the others as they are now. */
  | { kind: 'write'; body: BillingDetails }
  /** Every declared field already holds its value: nothing to send. */
  | { kind: 'current' }
  /** A declared field changed since the plan so that the write would differ from what was shown: refuse. */
  | { kind: 'stale'; changed: Array<{ field: BillingField; seen: string | null; now: string | null; declared: string }> };

/**
 * The write a billing change makes now. `seen` is what the plan saw of the declared fields (absent
 * when it could see nothing: billing known only after an accept). A declared field that now holds
 * neither what the plan saw nor the declared value makes the change stale: the write would change it
 * from a value no one reviewed (a field that was equal when planned and differs now included). One
 * that now already holds the declared value is simply no longer a change. Undeclared fields are
 * carried as they are now.
 */
export function decideBillingWrite(declared: BillingDetails, seen: SeenBilling | undefined, now: BillingValues): BillingWrite {
  if (seen !== undefined) {
    const changed: Extract<BillingWrite, { kind: 'stale' }>['changed'] = [];
    for (const field of BILLING_FIELDS) {
      const value = declared[field];
      if (value === undefined) continue;
      const was = seen[field] ?? null;
      if (now[field] !== was && now[field] !== value) changed.push({ field, seen: was, now: now[field], declared: value });
    }
    if (changed.length > 0) return { kind: 'stale', changed };
  }
  if (differingFields(declared, now).length === 0) return { kind: 'current' };
  return { kind: 'write', body: fullBillingUpdate(declared, now) };
}
