/**
 * One declared organisation's changes, from its desired state and what was observed of it. Pure;
 * the plan builder (plan-builder.ts) puts them together.
 */
import type { DesiredOrganisation } from '../model/desired-state.js';
import { changeAddress } from '../model/address.js';
import { BILLING_FIELDS, differingFields, seenOf, type BillingDetails, type BillingField, type SeenBilling } from '../model/billing.js';
import type { ChangeKind } from '../model/change-kind.js';
import type { ObservedOrganisation } from '../model/observed-organisation.js';
import { isRecordedDone, type IsJournaled } from './is-recorded-done.js';
import type { Change, FieldChange, OrganisationRef } from './types.js';

export type { IsJournaled } from './is-recorded-done.js';

const KNOWN_AFTER_ACCEPT = 'current billing is known once an invitation is accepted: apply reads it then, and fields not declared keep their values';
const UNCHECKABLE_INVITATION = 'cannot be checked before apply: the interface cannot list invitations';
const UNCHECKABLE_CHANNEL = 'cannot be checked before apply: the interface cannot list notification channels';

function billingChange(d: DesiredOrganisation, o: ObservedOrganisation, prerequisite: string | undefined): Change | undefined {
  if (d.billing === undefined) return undefined;
  // The desired state's own object (the declared fields only, in field order), not a copy: 100,000
  // copies would be 100,000 objects more at an apply's peak.
  const declared: BillingDetails = d.billing;
  // Every change is written out whole (an object literal, or ReadBillingChange's constructor):
  // V8 (Node 20) gives each object built by spreading (`{ ...base, seen }`) in a hot loop a hidden
  // class of its own, about 230 bytes a change (23 MB of a 100,000-change plan).
  const address = changeAddress('billing', d.slug);
  const organisation = { slug: d.slug, id: o.id };
  if (o.billing === null) {
    // Not readable before the invitation is accepted: never write from what was not seen. Apply reads
    // the organisation once the accept has succeeded and builds the body then.
    if (prerequisite === undefined) return undefined; // the state reader records a problem for this case
    const fields: FieldChange[] = Object.entries(declared).map(([field, after]) => ({ field: field as BillingField, before: null, after }));
    return { address, kind: 'billing', action: 'update', organisation, declared, knownAfter: prerequisite, display: { fields, note: KNOWN_AFTER_ACCEPT } };
  }
  const current = o.billing;
  if (differingFields(declared, current).length === 0) return undefined;
  // No body is built here: UpdateBillingDetails is a PUT of all four fields, and the undeclared ones
  // must go as the service holds them when the write is sent, not as they were now (a billing
  // system renews subscriptions meanwhile). Apply reads the organisation again just before writing;
  // `seen` is what it checks that read against.
  const seen = seenOf(declared, current);
  return new ReadBillingChange(address, organisation, declared, seen);
}

/**
 * A billing change whose current values were read. Its display (the declared fields that differ
 * from what was seen) is worked out from its own `declared` and `seen` each time it is read, not
 * held: the list and an object per field were 100 bytes of each change, and an object holding the
 * two references 40 more (4 MB of a plan of 100,000, at an apply's peak, when its plan is complete
 * and everything else is still held). Its own properties are the plain data apply reads; it is
 * written (a saved plan, `JSON.stringify`) as the same object literal with `display: { fields }`,
 * so the bytes are those of a change built as a literal.
 */
export class ReadBillingChange implements Change {
  readonly address: string;
  readonly kind = 'billing' as const;
  readonly action = 'update' as const;
  readonly organisation: OrganisationRef;
  readonly declared: BillingDetails;
  readonly seen: SeenBilling;

  constructor(address: string, organisation: OrganisationRef, declared: BillingDetails, seen: SeenBilling) {
    this.address = address;
    this.organisation = organisation;
    this.declared = declared;
    this.seen = seen;
  }

  get display(): { fields: FieldChange[] } {
    return { fields: differingFieldChanges(this.declared, this.seen) };
  }

  /** Nothing is held to let go (see dropDisplays): the display is made when it is read. */
  set display(_shown: Change['display']) {}

  toJSON(): Omit<Change, 'display'> & { display: { fields: FieldChange[] } } {
    return { address: this.address, kind: this.kind, action: this.action, organisation: this.organisation, declared: this.declared, seen: this.seen, display: this.display };
  }
}

/** The declared fields whose value differs from the one seen, in field order. */
function differingFieldChanges(declared: BillingDetails, seen: SeenBilling): FieldChange[] {
  const fields: FieldChange[] = [];
  for (const field of BILLING_FIELDS) {
    const after = declared[field];
    const before = seen[field];
    if (after !== undefined && before !== undefined && after !== before) fields.push({ field, before, after });
  }
  return fields;
}

function oneShot(kind: ChangeKind, d: DesiredOrganisation, o: ObservedOrganisation, targetId: string, note?: string): Change {
  return {
    address: changeAddress(kind, d.slug, targetId),
    kind,
    action: kind === 'accept-invitation' ? 'accept' : 'delete',
    organisation: { slug: d.slug, id: o.id },
    targetId,
    display: note === undefined ? {} : { note },
  };
}

/**
 * One declared organisation's changes, and the addresses of its one-shot changes the journal records
 * done. What decides each kind (membership, values, the journal) is said in is-recorded-done.ts.
 */
export function planOrganisation(d: DesiredOrganisation, o: ObservedOrganisation, isJournaled: IsJournaled): { changes: Change[]; journaled: string[] } {
  const changes: Change[] = [];
  const journaled: string[] = [];
  // Membership decides the accepts, never the journal. They are alternatives: apply tries each until
  // one makes you a member.
  if (!o.member) {
    for (const inv of d.invitations.accept) changes.push(oneShot('accept-invitation', d, o, inv));
  }
  // Known after the last of them: apply runs billing once every accept has ended, if one made you a member.
  const billing = billingChange(d, o, changes[changes.length - 1]?.address);
  if (billing) changes.push(billing);
  const journaledChange = (change: Change) => {
    if (isRecordedDone(change, isJournaled)) journaled.push(change.address);
    else changes.push(change);
  };
  for (const inv of d.invitations.revoke) journaledChange(oneShot('revoke-invitation', d, o, inv, UNCHECKABLE_INVITATION));
  for (const ch of d.notificationChannels.remove) journaledChange(oneShot('remove-channel', d, o, ch, UNCHECKABLE_CHANNEL));
  return { changes, journaled };
}
