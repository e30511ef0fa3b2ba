/**
 * The blast-radius guard (octoDNS's "too much change", as an absolute number): a plan with more
 * changes than the budget is refused, with what to do next.
 */
import { OrgformError } from '../errors.js';
import type { Plan } from './types.js';

export function checkChangeBudget(plan: Plan, maxChanges: number | undefined): OrgformError | undefined {
  if (maxChanges === undefined || plan.changes.length <= maxChanges) return undefined;
  return new OrgformError(
    'PLAN_UNSAFE',
    `The plan has ${plan.changes.length} changes, more than --max-changes ${maxChanges}. Nothing was changed. Review the plan; then raise --max-changes to at least ${plan.changes.length}, or apply in parts with --target or --shard.`,
  );
}

export function describeChangeBudget(plan: Plan, maxChanges: number): string {
  const within = plan.changes.length <= maxChanges;
  return `Change budget: ${plan.changes.length} of at most ${maxChanges}${within ? '.' : ' — over budget: apply will refuse this plan.'}\n`;
}
