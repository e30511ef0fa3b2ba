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
 * The plan's digest: `sha256:…`, the same as `digestEssence(essenceOf(plan))`, made one change at a
 * time: the essence of every change, held at once, was about 70 MB at 100,000 changes, at the peak
 * of a text plan and of an apply.
 */
export function digestPlan(plan: Pick<Plan, 'baseUrl' | 'changes' | 'observedActiveId'>): string {
  const { changes, observedActiveId } = plan;
  return digestLines(plan.baseUrl, changes.length, inAddressOrder(changes), (i) => essenceLine(changeEssence(changes[i]!, observedActiveId)));
}

/** The digest of an essence, whatever order its changes are in. */
export function digestEssence(essence: PlanEssence): string {
  const { changes } = essence;
  return digestLines(essence.service, changes.length, inAddressOrder(changes), (i) => essenceLine(changes[i]!));
}

function digestLines(service: string, count: number, order: ((i: number) => number) | undefined, line: (i: number) => EssenceLine): string {
  const hash = createHash('sha256');
  hash.update(`${SCHEME}\n${JSON.stringify(service)}\n`);
  for (let i = 0; i < count; i += 1) hash.update(`${JSON.stringify(line(order === undefined ? i : order(i)))}\n`);
  return `sha256:${hash.digest('hex')}`;
}

/** Where the i-th change in address order is: undefined when they are in that order already (a plan's are). */
function inAddressOrder(changes: ReadonlyArray<{ address: string }>): ((i: number) => number) | undefined {
  let sorted = true;
  for (let i = 1; i < changes.length && sorted; i += 1) sorted = byAddress(changes[i - 1]!, changes[i]!) <= 0;
  if (sorted) return undefined;
  const order = Uint32Array.from(changes.keys()).sort((a, b) => byAddress(changes[a]!, changes[b]!));
  return (i) => order[i]!;
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
