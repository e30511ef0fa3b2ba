/**
 * The difference between the desired state and what was observed, as a plan. Pure: data in,
 * data out, deterministically sorted.
 */
import type { DesiredOrganisation, DesiredState } from '../config/types.js';
import { changeAddress } from '../model/address.js';
import { BILLING_FIELDS, differingFields, fullBillingUpdate, type BillingDetails, type BillingField } from '../model/billing.js';
import { KIND_ORDER, type ChangeKind } from '../model/change-kind.js';
import type { ObservedOrganisation } from '../model/observed-organisation.js';
import type { ObservedState } from '../model/observed-state.js';
import type { Change, FieldChange, Plan } from './types.js';

export interface PlanInputs {
  desired: DesiredState;
  observed: ObservedState;
  baseUrl: string;
  /** Whether the journal records this one-shot change as done. */
  isJournaled: (kind: ChangeKind, organisationId: string, targetId: string) => boolean;
}

const KNOWN_AFTER_ACCEPT = 'current billing is known after the invitation is accepted: apply reads it then, and fields not declared keep their values';
const UNCHECKABLE_INVITATION = 'cannot be checked before apply: the interface cannot list invitations';
const UNCHECKABLE_CHANNEL = 'cannot be checked before apply: the interface cannot list notification channels';

function billingChange(d: DesiredOrganisation, o: ObservedOrganisation, prerequisite: string | undefined): Change | undefined {
  if (d.billing === undefined) return undefined;
  const declared: BillingDetails = {};
  for (const field of BILLING_FIELDS) if (d.billing[field] !== undefined) declared[field] = d.billing[field];
  // Every change is written out as one object literal: V8 (Node 20) gives each object built by
  // spreading (`{ ...base, request }`) in a hot loop a hidden class of its own, about 230 bytes a
  // change (23 MB of a 100,000-change plan).
  const address = changeAddress('billing', d.slug);
  const organisation = { slug: d.slug, id: o.id };
  if (o.billing === null) {
    // Not readable before the invitation is accepted: never write from what was not seen. Apply reads
    // the organisation once the accept has succeeded and builds the body then.
    if (prerequisite === undefined) return undefined; // the state reader records a problem for this case
    const fields: FieldChange[] = Object.entries(declared).map(([field, after]) => ({ field: field as BillingField, before: null, after }));
    return { address, kind: 'billing', action: 'update', organisation, knownAfter: prerequisite, declared, display: { fields, note: KNOWN_AFTER_ACCEPT } };
  }
  const current = o.billing;
  const fields: FieldChange[] = differingFields(declared, current).map((field) => ({ field, before: current[field], after: declared[field] as string }));
  if (fields.length === 0) return undefined;
  // UpdateBillingDetails is a PUT: send all four fields, the undeclared ones as they were read, so
  // that only the declared fields change whether the service merges or replaces.
  return { address, kind: 'billing', action: 'update', organisation, request: fullBillingUpdate(declared, current), display: { fields } };
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

/** One declared organisation's changes, and the addresses of its one-shot changes the journal records done. */
export function planOrganisation(d: DesiredOrganisation, o: ObservedOrganisation, isJournaled: PlanInputs['isJournaled']): { changes: Change[]; journaled: string[] } {
  const changes: Change[] = [];
  const journaled: string[] = [];
  if (!o.member) {
    for (const inv of d.invitations.accept) changes.push(oneShot('accept-invitation', d, o, inv));
  }
  const billing = billingChange(d, o, changes[changes.length - 1]?.address);
  if (billing) changes.push(billing);
  for (const inv of d.invitations.revoke) {
    if (isJournaled('revoke-invitation', o.id, inv)) journaled.push(changeAddress('revoke-invitation', d.slug, inv));
    else changes.push(oneShot('revoke-invitation', d, o, inv, UNCHECKABLE_INVITATION));
  }
  for (const ch of d.notificationChannels.remove) {
    if (isJournaled('remove-channel', o.id, ch)) journaled.push(changeAddress('remove-channel', d.slug, ch));
    else changes.push(oneShot('remove-channel', d, o, ch, UNCHECKABLE_CHANNEL));
  }
  return { changes, journaled };
}

function compareChanges(a: Change, b: Change): number {
  const aActive = a.kind === 'set-active' ? 1 : 0;
  const bActive = b.kind === 'set-active' ? 1 : 0;
  if (aActive !== bActive) return aActive - bActive;
  if (a.organisation.slug !== b.organisation.slug) return a.organisation.slug < b.organisation.slug ? -1 : 1;
  if (a.kind !== b.kind) return KIND_ORDER[a.kind] - KIND_ORDER[b.kind];
  const at = a.targetId ?? '';
  const bt = b.targetId ?? '';
  return at < bt ? -1 : at > bt ? 1 : 0;
}

export function computePlan(inputs: PlanInputs): Plan {
  const { desired, observed } = inputs;
  const changes: Change[] = [];
  const unchanged: string[] = [];
  const journaled: string[] = [];
  // As [slug, observed] pairs, made into the plan's record once, in slug order: a record filled one
  // key at a time, then copied to sort it, costs a bulk plan three large tables for one.
  const observedWithChanges: Array<[string, ObservedOrganisation]> = [];

  for (const d of desired.organisations) {
    const o = observed.organisations.get(d.slug);
    if (o === undefined) continue; // a problem was recorded for it, or it was read and needs nothing
    const mine = planOrganisation(d, o, inputs.isJournaled);
    journaled.push(...mine.journaled);
    if (mine.changes.length === 0) unchanged.push(d.slug);
    else {
      changes.push(...mine.changes);
      observedWithChanges.push([d.slug, o]);
    }
  }
  // Read, found to need nothing, and not kept (see readObservedState's `keep`). One by one: a
  // spread of a million arguments overflows the stack.
  for (const slug of observed.settled) unchanged.push(slug);

  const active = desired.activeOrganisation;
  if (active !== undefined) {
    const target = observed.organisations.get(active.slug);
    const targetId = target?.id ?? [...observed.slugsById].find(([, slug]) => slug === active.slug)?.[0];
    if (targetId !== undefined && targetId !== observed.activeId) {
      const from = observed.activeId === null ? null : (observed.slugsById.get(observed.activeId) ?? observed.activeId);
      changes.push({
        address: changeAddress('set-active', active.slug),
        kind: 'set-active',
        action: 'update',
        organisation: { slug: active.slug, id: targetId },
        display: { fromActive: from },
      });
      if (target && !observedWithChanges.some(([slug]) => slug === active.slug)) observedWithChanges.push([active.slug, target]);
    }
  }

  changes.sort(compareChanges);
  unchanged.sort();
  journaled.sort();
  return {
    formatVersion: 2,
    baseUrl: inputs.baseUrl,
    changes,
    unchanged,
    problems: observed.problems,
    journaled,
    observed: Object.fromEntries(observedWithChanges.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))),
    observedActiveId: observed.activeId,
  };
}
