/**
 * Whether a plan may be applied, as data: what stands in the way (a saved plan gone stale, an
 * organisation that could not be read, more changes than --max-changes) and the change budget to
 * show. Pure. Apply refuses on the first hazard; views and errors decide the words.
 */
import type { PlanProblem } from '../model/plan-problem.js';
import type { Plan } from './types.js';

export type PlanHazard =
  /** A saved plan whose organisations, active organisation or files changed since it was made. */
  | { kind: 'stale'; changed: readonly string[] }
  /** Organisations that could not be read: their changes are missing, so the plan is incomplete. */
  | { kind: 'incomplete'; problems: readonly PlanProblem[] }
  /** The blast-radius guard (octoDNS's "too much change", as an absolute number). */
  | { kind: 'over-budget'; changes: number; maxChanges: number };

/** `--max-changes` as the plan stands against it. */
export interface ChangeBudget {
  changes: number;
  maxChanges: number;
}

export interface PlanSafety {
  /** In the order they are refused: stale first (nothing else about the plan can be trusted), then incomplete, then over budget. */
  hazards: PlanHazard[];
  /** Present when --max-changes was given. */
  budget?: ChangeBudget;
}

export interface SafetyLimits {
  maxChanges?: number;
  /** What a fresh read found changed since a saved plan was made (find-stale.ts); empty for a fresh plan. */
  staleReasons?: readonly string[];
}

export function checkPlanSafety(plan: Pick<Plan, 'changes' | 'problems'>, limits: SafetyLimits = {}): PlanSafety {
  const hazards: PlanHazard[] = [];
  const stale = limits.staleReasons ?? [];
  if (stale.length > 0) hazards.push({ kind: 'stale', changed: [...stale] });
  if (plan.problems.length > 0) hazards.push({ kind: 'incomplete', problems: plan.problems });
  const changes = plan.changes.length;
  const { maxChanges } = limits;
  if (maxChanges !== undefined && changes > maxChanges) hazards.push({ kind: 'over-budget', changes, maxChanges });
  return { hazards, ...(maxChanges === undefined ? {} : { budget: { changes, maxChanges } }) };
}
