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
  return billingRecord((field) => (declared[field] === undefined ? undefined : current[field]));
}

/** For each set of billing fields (by bit mask, a bit per field in field order): an object of exactly those fields, each null. */
const SHAPES: Array<Readonly<Record<string, null>> | undefined> = [];

function shapeOf(mask: number): Readonly<Record<string, null>> {
  let shape = SHAPES[mask];
  if (shape === undefined) {
    const fields = BILLING_FIELDS.filter((_, bit) => (mask & (1 << bit)) !== 0);
    // Parsed: V8 gives a parsed object room for its own properties only.
    shape = JSON.parse(`{${fields.map((field) => `"${field}":null`).join(',')}}`) as Record<string, null>;
    SHAPES[mask] = shape;
  }
  return shape;
}

/**
 * The fields `valueOf` gives a value for, in field order, as an object that holds exactly those
 * fields. An object built field by field keeps room for four properties: 24 bytes more for each of
 * the declared and the seen billing of every organisation (5 MB at 100,000, 48 MB at 1,000,000);
 * a copy of an object that has them all takes only their room.
 */
export function billingRecord<T>(valueOf: (field: BillingField) => T | undefined): Partial<Record<BillingField, T>> {
  let mask = 0;
  for (let bit = 0; bit < BILLING_FIELDS.length; bit++) if (valueOf(BILLING_FIELDS[bit]!) !== undefined) mask |= 1 << bit;
  const record: Record<string, unknown> = { ...shapeOf(mask) };
  for (let bit = 0; bit < BILLING_FIELDS.length; bit++) if ((mask & (1 << bit)) !== 0) record[BILLING_FIELDS[bit]!] = valueOf(BILLING_FIELDS[bit]!);
  return record as Partial<Record<BillingField, T>>;
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
