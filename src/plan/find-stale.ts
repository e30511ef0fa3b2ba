/**
 * Whether a saved plan still describes the service (findStale: every observed value a change
 * depends on is compared with a fresh read; the reasons name exactly what changed), and whether its
 * changes are the ones its desired state and the service give (matchSavedChanges). Pure.
 */
import { organisationAddress } from '../model/address.js';
import { BILLING_FIELDS, type BillingDetails, type SeenBilling } from '../model/billing.js';
import type { ObservedOrganisation } from '../model/observed-organisation.js';
import type { PlanProblem } from '../model/plan-problem.js';
import type { ApplicableChange, Change, Plan } from './types.js';

export interface FreshObservation {
  organisations: ReadonlyMap<string, ObservedOrganisation>;
  activeId: string | null;
  problems: readonly PlanProblem[];
  /** SHA-256 of each config file now, or null when it cannot be read. */
  fileHashes: ReadonlyMap<string, string | null>;
  baseUrl: string;
}

const show = (v: string | null | undefined) => (v === null || v === undefined ? '(none)' : JSON.stringify(v));

export function findStale(plan: Plan, configFiles: ReadonlyArray<{ path: string; sha256: string }>, fresh: FreshObservation): string[] {
  const reasons: string[] = [];
  if (fresh.baseUrl !== plan.baseUrl) {
    reasons.push(`the plan was made for ${plan.baseUrl}, not ${fresh.baseUrl}`);
    return reasons;
  }
  reasons.push(...findChangedFiles(configFiles, fresh.fileHashes));
  const declaredBilling = new Map<string, BillingDetails>();
  for (const change of plan.changes) if (change.kind === 'billing' && change.declared !== undefined) declaredBilling.set(change.organisation.slug, change.declared);
  for (const [slug, before] of Object.entries(plan.observed)) {
    const address = organisationAddress(slug);
    const after = fresh.organisations.get(slug);
    if (after === undefined) {
      const why = fresh.problems.find((p) => p.organisation === slug)?.message ?? 'it cannot be read now';
      reasons.push(`${address}: ${why}`);
      continue;
    }
    if (after.id !== before.id) reasons.push(`${address}: id changed from ${show(before.id)} to ${show(after.id)}`);
    if (after.member !== before.member) reasons.push(`${address}: membership changed (${before.member ? 'member' : 'not a member'} → ${after.member ? 'member' : 'not a member'})`);
    // Only the declared fields: the others are written as apply reads them just before the write.
    const declared = declaredBilling.get(slug);
    for (const field of BILLING_FIELDS) {
      if (declared?.[field] === undefined) continue;
      const b = before.billing?.[field] ?? null;
      const a = after.billing?.[field] ?? null;
      if (a !== b) reasons.push(`${address}.billing.${field} changed from ${show(b)} to ${show(a)}`);
    }
  }
  if (plan.changes.some((c) => c.kind === 'set-active') && fresh.activeId !== plan.observedActiveId) {
    reasons.push(`activeOrganisation: the active organisation changed from ${show(plan.observedActiveId)} to ${show(fresh.activeId)}`);
  }
  return reasons;
}

/** The config files that cannot be read now, or hold other bytes than when planned (`now`: their SHA-256, null when unreadable). */
export function findChangedFiles(configFiles: ReadonlyArray<{ path: string; sha256: string }>, now: ReadonlyMap<string, string | null>): string[] {
  const reasons: string[] = [];
  for (const file of configFiles) {
    const hash = now.get(file.path);
    if (hash === null || hash === undefined) reasons.push(`config file ${file.path} cannot be read now`);
    else if (hash !== file.sha256) reasons.push(`config file ${file.path} changed since the plan`);
  }
  return reasons;
}

/** What apply takes of a saved plan once its changes are checked against a fresh derivation. */
export interface SavedChangesMatch {
  /** The derived changes the saved plan holds, in its order: these are applied, not the file's. */
  changes: Change[];
  /** Saved changes the derivation does not give (edited, or made otherwise): the file is refused. */
  notDerived: string[];
  /** Derived changes the saved plan does not hold (the service changed since, or the file lost some): stale. */
  missing: string[];
}

/**
 * The saved plan's changes against the changes its desired state and the fresh observations give
 * (`derived`, planned with every one-shot change whatever the journal says). A saved change must be
 * given exactly: same address, organisation, target, declared values and values seen. A derived
 * one-shot change the plan left out is fine when the journal records it done, now or (`journaled`,
 * the plan's own list) when the plan was made: invitations and channels cannot be read, so only
 * the journal says they are done. The plan's list counts only when it is signed: anyone may edit
 * an unsigned file to leave a change out and list it there; then the list only says why it is missing.
 */
export function matchSavedChanges(
  saved: readonly ApplicableChange[],
  derived: readonly Change[],
  isJournaledNow: (change: Change) => boolean,
  journaled: readonly string[] = [],
  plan: { signed: boolean } = { signed: true },
): SavedChangesMatch {
  const listed = new Set(journaled);
  const journaledThen = plan.signed ? listed : new Set<string>();
  const byAddress = new Map(derived.map((change) => [change.address, change]));
  const changes: Change[] = [];
  const notDerived: string[] = [];
  const held = new Set<string>();
  for (const change of saved) {
    const match = byAddress.get(change.address);
    if (match === undefined || held.has(change.address) || !sameChange(change, match)) notDerived.push(change.address);
    else changes.push(match);
    held.add(change.address);
  }
  const missing = derived
    .filter((change) => !held.has(change.address) && !journaledThen.has(change.address) && !isJournaledNow(change))
    .map((change) => `${change.address}: ${listed.has(change.address) ? UNSIGNED_LIST : NOT_HELD}`);
  return { changes, notDerived, missing };
}

const NOT_HELD = 'the plan does not hold this change, which its desired state and the service now give';
const UNSIGNED_LIST =
  'the plan lists this change as done by the journal when it was made, but the journal does not record it now, and an unsigned plan’s list is not taken (ORGFORM_PLAN_KEY signs plans): planned again, it is applied, or found already done';

/** Whether two changes would make the same writes (their displays aside). */
function sameChange(a: ApplicableChange, b: ApplicableChange): boolean {
  return (
    a.kind === b.kind &&
    a.action === b.action &&
    a.organisation.slug === b.organisation.slug &&
    a.organisation.id === b.organisation.id &&
    a.targetId === b.targetId &&
    a.knownAfter === b.knownAfter &&
    sameFields(a.declared, b.declared) &&
    sameFields(a.seen, b.seen)
  );
}

function sameFields(a: BillingDetails | SeenBilling | undefined, b: BillingDetails | SeenBilling | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return Object.keys(a).length === Object.keys(b).length && BILLING_FIELDS.every((field) => a[field] === b[field]);
}
