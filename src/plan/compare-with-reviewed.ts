/**
 * How a fresh plan differs from the one reviewed, change by change: the changes added since, the
 * changes gone, and for a change in both, each value that differs (what it writes, what it was
 * planned from, whom it writes to). Pure; the views decide the words.
 */
import { BILLING_FIELDS, type BillingField } from '../model/billing.js';
import type { ChangeEssence, PlanEssence } from './plan-digest.js';

/** One value of a change that is not what it was when reviewed (undefined: not part of it then, or now). */
export interface ValueDifference {
  /** `declared`: the value written; `seen`: the value it was planned from; the others, whom it writes to or waits for. */
  aspect: 'kind' | 'organisation' | 'target' | 'declared' | 'seen' | 'knownAfter' | 'activeFrom';
  /** For `declared` and `seen`: which billing field. */
  field?: BillingField;
  reviewed: string | null | undefined;
  now: string | null | undefined;
}

export interface ChangedChange {
  address: string;
  values: ValueDifference[];
}

export interface PlanDifference {
  /** When the plans were made against different services. */
  service?: { reviewed: string; now: string };
  /** In the fresh plan, not in the reviewed one. */
  added: ChangeEssence[];
  /** In the reviewed plan, not in the fresh one. */
  gone: ChangeEssence[];
  /** In both, with different values. */
  changed: ChangedChange[];
}

export function compareWithReviewed(reviewed: PlanEssence, now: PlanEssence): PlanDifference {
  const before = new Map(reviewed.changes.map((c) => [c.address, c]));
  const added: ChangeEssence[] = [];
  const changed: ChangedChange[] = [];
  for (const change of now.changes) {
    const was = before.get(change.address);
    before.delete(change.address);
    if (was === undefined) {
      added.push(change);
      continue;
    }
    const values = valueDifferences(was, change);
    if (values.length > 0) changed.push({ address: change.address, values });
  }
  return {
    ...(reviewed.service === now.service ? {} : { service: { reviewed: reviewed.service, now: now.service } }),
    added,
    gone: [...before.values()],
    changed,
  };
}

/** Whether there is no difference at all. */
export function isSamePlan(difference: PlanDifference): boolean {
  return difference.service === undefined && difference.added.length === 0 && difference.gone.length === 0 && difference.changed.length === 0;
}

function valueDifferences(reviewed: ChangeEssence, now: ChangeEssence): ValueDifference[] {
  const values: ValueDifference[] = [];
  const compare = (aspect: ValueDifference['aspect'], a: string | null | undefined, b: string | null | undefined, field?: BillingField) => {
    if (a !== b) values.push({ aspect, ...(field === undefined ? {} : { field }), reviewed: a, now: b });
  };
  compare('kind', reviewed.kind, now.kind);
  compare('organisation', reviewed.organisation, now.organisation);
  compare('target', reviewed.target, now.target);
  for (const field of BILLING_FIELDS) compare('declared', reviewed.declared?.[field], now.declared?.[field], field);
  for (const field of BILLING_FIELDS) compare('seen', reviewed.seen?.[field], now.seen?.[field], field);
  compare('knownAfter', reviewed.knownAfter, now.knownAfter);
  compare('activeFrom', reviewed.activeFrom, now.activeFrom);
  return values;
}
