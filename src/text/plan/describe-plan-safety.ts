/**
 * The words for a plan's change budget, shared by `plan` (which shows it and exits 1 when over) and
 * `apply` (which refuses, changing nothing). Pure: composed from the budget's numbers, never by
 * editing another message.
 */
import type { ChangeBudget } from '../../plan/check-plan-safety.js';

/** `The plan has 5 changes, more than --max-changes 2. [Nothing was changed. ]Review the plan; …` */
export function describeOverBudget(budget: ChangeBudget, options: { nothingChanged: boolean }): string {
  const changed = options.nothingChanged ? ' Nothing was changed.' : '';
  return `The plan has ${budget.changes} changes, more than --max-changes ${budget.maxChanges}.${changed} Review the plan; then raise --max-changes to at least ${budget.changes}, or apply in parts with --target or --shard.`;
}

/** The line shown under a text plan: `Change budget: 5 of at most 10.`, or that apply will refuse it. */
export function describeChangeBudget(budget: ChangeBudget): string {
  const within = budget.changes <= budget.maxChanges;
  return `Change budget: ${budget.changes} of at most ${budget.maxChanges}${within ? '.' : ' — over budget: apply will refuse this plan.'}\n`;
}
