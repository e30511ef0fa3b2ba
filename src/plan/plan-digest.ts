/**
 * The plan's digest: one SHA-256 over what apply would send and what each change was planned from,
 * so that "the plan that was reviewed" and "the plan about to be applied" can be compared by a
 * string (`apply --expect-digest`). Pure.
 *
 * In it, per change (sorted by address, so the order organisations were read in never counts):
 * the address, the kind, the id of the organisation written to, the invitation or channel id, and
 * for billing the declared values and the values of those same fields as the plan read them (`seen`:
 * a field changed by hand since the review, even one that needed nothing then, gives another
 * digest, so a reviewed plan never reverts it), or the accept it waits for; for the active
 * organisation, the one active when planned. And the service, as its normalised address (the
 * client's key: `https://API.example.com:443/` and `https://api.example.com` are one service).
 *
 * Left out: everything kept for display (the fields shown, notes, names), the time, the run, the
 * config files and where they are, organisations that need nothing, one-shot changes the journal
 * records done, and problems (an incomplete plan is refused whatever its digest). Billing fields
 * that are not declared are left out too: apply never writes them from the plan, it carries them
 * as it reads them just before the write (model/billing.ts), so a change made to them by hand is
 * kept, never reverted.
 */
import { createHash } from 'node:crypto';
import { BILLING_FIELDS, type BillingDetails, type SeenBilling } from '../model/billing.js';
import type { ChangeKind } from '../model/change-kind.js';
import type { ApplicableChange, Plan } from './types.js';

export { DIGEST_PATTERN, parseDigest, shortDigest } from './digest-form.js';

/** One change as the digest sees it. */
export interface ChangeEssence {
  address: string;
  kind: ChangeKind;
  /** The id of the organisation written to (for set-active, the one made active). */
  organisation: string;
  target?: string;
  /** Billing: the declared fields and their values. */
  declared?: BillingDetails;
  /** Billing: the declared fields as the plan read them (null: no value). */
  seen?: SeenBilling;
  /** Billing that is read only once this accept (the address) has made a membership. */
  knownAfter?: string;
  /** set-active: the id of the organisation active when the plan was made (null: none). */
  activeFrom?: string | null;
}

/** What a plan would send, as data: what a review record carries, and what the digest is made of. */
export interface PlanEssence {
  /** The service's normalised address (Plan.baseUrl). */
  service: string;
  /** Sorted by address. */
  changes: ChangeEssence[];
}

/** The scheme's name and version, hashed first: a new scheme can never give an old digest. */
const SCHEME = 'orgform-plan-digest/1';

export function essenceOf(plan: Pick<Plan, 'baseUrl' | 'changes' | 'observedActiveId'>): PlanEssence {
  const changes = plan.changes.map((change) => changeEssence(change, plan.observedActiveId));
  changes.sort(byAddress);
  return { service: plan.baseUrl, changes };
}

function changeEssence(change: ApplicableChange, observedActiveId: string | null): ChangeEssence {
  return {
    address: change.address,
    kind: change.kind,
    organisation: change.organisation.id,
    ...(change.targetId === undefined ? {} : { target: change.targetId }),
    ...(change.declared === undefined ? {} : { declared: change.declared }),
    ...(change.seen === undefined ? {} : { seen: change.seen }),
    ...(change.knownAfter === undefined ? {} : { knownAfter: change.knownAfter }),
    ...(change.kind === 'set-active' ? { activeFrom: observedActiveId } : {}),
  };
}

function byAddress(a: { address: string }, b: { address: string }): number {
  return a.address < b.address ? -1 : a.address > b.address ? 1 : 0;
}

/**
 * The plan's digest: `sha256:…`, that of its essence, each change's essence made as it is hashed:
 * every plan output computes it, and the essence of 500,000 changes held at once is as large again
 * as a tenth of the plan.
 */
export function digestPlan(plan: Pick<Plan, 'baseUrl' | 'changes' | 'observedActiveId'>): string {
  return hashInOrder(plan.baseUrl, plan.changes, (change) => changeEssence(change, plan.observedActiveId));
}

/** The digest of an essence, whatever order its changes are in. */
export function digestEssence(essence: PlanEssence): string {
  return hashInOrder(essence.service, essence.changes, (change) => change);
}

function hashInOrder<T extends { address: string }>(service: string, changes: readonly T[], essence: (change: T) => ChangeEssence): string {
  const hash = createHash('sha256');
  hash.update(`${SCHEME}\n${JSON.stringify(service)}\n`);
  // A copy of the references only, sorted: the changes themselves stay in the plan's order.
  for (const change of [...changes].sort(byAddress)) hash.update(`${JSON.stringify(essenceLine(essence(change)))}\n`);
  return `sha256:${hash.digest('hex')}`;
}

/** A change as one array, each part in its place: the same change always gives the same line. */
export type EssenceLine = [
  address: string,
  kind: ChangeKind,
  organisation: string,
  target: string | null,
  declared: Array<[string, string]> | null,
  seen: Array<[string, string | null]> | null,
  knownAfter: string | null,
  activeFrom: string | null,
];

export function essenceLine(change: ChangeEssence): EssenceLine {
  return [
    change.address,
    change.kind,
    change.organisation,
    change.target ?? null,
    change.declared === undefined ? null : fieldPairs(change.declared),
    change.seen === undefined ? null : fieldPairs(change.seen),
    change.knownAfter ?? null,
    change.kind === 'set-active' ? (change.activeFrom ?? null) : null,
  ];
}

/** The fields that are there, in the one order of BILLING_FIELDS. */
function fieldPairs<V>(values: Partial<Record<(typeof BILLING_FIELDS)[number], V>>): Array<[string, V]> {
  const pairs: Array<[string, V]> = [];
  for (const field of BILLING_FIELDS) if (values[field] !== undefined) pairs.push([field, values[field] as V]);
  return pairs;
}
