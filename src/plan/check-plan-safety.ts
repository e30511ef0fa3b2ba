/**
 * Whether a plan may be applied, as data: what stands in the way (a saved plan gone stale, an
 * organisation that could not be read, a plan that is not the one reviewed, more changes than
 * --max-changes) and the change budget to show. Pure. Apply refuses on the first hazard; views and
 * errors decide the words.
 */
import type { PlanProblem } from '../model/plan-problem.js';
import { compareWithReviewed, type PlanDifference } from './compare-with-reviewed.js';
import { digestEssence, essenceOf, type PlanEssence } from './plan-digest.js';
import type { Plan } from './types.js';

export type PlanHazard =
  /** A saved plan whose organisations, active organisation or files changed since it was made. */
  | { kind: 'stale'; changed: readonly string[] }
  /** Organisations that could not be read: their changes are missing, so the plan is incomplete. */
  | { kind: 'incomplete'; problems: readonly PlanProblem[] }
  /** `--expect-digest`: the plan has changes, and they are not the reviewed ones; with the reviewed plan's record, how they differ. */
  | { kind: 'not-reviewed'; expected: string; actual: string; difference?: PlanDifference }
  /** The blast-radius guard (octoDNS's "too much change", as an absolute number). */
  | { kind: 'over-budget'; changes: number; maxChanges: number };

/** `--max-changes` as the plan stands against it. */
export interface ChangeBudget {
  changes: number;
  maxChanges: number;
}

export interface PlanSafety {
  /** In the order they are refused: stale first (nothing else about the plan can be trusted), then incomplete, not reviewed, over budget. */
  hazards: PlanHazard[];
  /** Present when --max-changes was given. */
  budget?: ChangeBudget;
}

export interface SafetyLimits {
  maxChanges?: number;
  /** What a fresh read found changed since a saved plan was made (find-stale.ts); empty for a fresh plan. */
  staleReasons?: readonly string[];
  /**
   * `--expect-digest`: the digest of the plan that was reviewed, and the plan itself when its record
   * came along (for the difference). A plan with no changes at all passes: there is nothing to apply.
   */
  expect?: { digest: string; reviewed?: PlanEssence };
}

export function checkPlanSafety(plan: Pick<Plan, 'changes' | 'problems' | 'baseUrl' | 'observedActiveId'>, limits: SafetyLimits = {}): PlanSafety {
  const hazards: PlanHazard[] = [];
  const stale = limits.staleReasons ?? [];
  if (stale.length > 0) hazards.push({ kind: 'stale', changed: [...stale] });
  if (plan.problems.length > 0) hazards.push({ kind: 'incomplete', problems: plan.problems });
  const notReviewed = limits.expect === undefined ? undefined : checkReviewed(plan, limits.expect);
  if (notReviewed !== undefined) hazards.push(notReviewed);
  const changes = plan.changes.length;
  const { maxChanges } = limits;
  if (maxChanges !== undefined && changes > maxChanges) hazards.push({ kind: 'over-budget', changes, maxChanges });
  return { hazards, ...(maxChanges === undefined ? {} : { budget: { changes, maxChanges } }) };
}

function checkReviewed(plan: Pick<Plan, 'changes' | 'baseUrl' | 'observedActiveId'>, expect: NonNullable<SafetyLimits['expect']>): PlanHazard | undefined {
  if (plan.changes.length === 0) return undefined;
  const essence = essenceOf(plan);
  const actual = digestEssence(essence);
  if (actual === expect.digest) return undefined;
  return { kind: 'not-reviewed', expected: expect.digest, actual, ...(expect.reviewed === undefined ? {} : { difference: compareWithReviewed(expect.reviewed, essence) }) };
}
