/**
 * The plan's verdict, in the words every view of a plan shares (the text plan and its digest, the
 * Markdown comments, the job summary, the pages, apply's review and its refusals): the headline and
 * its counts, why there is nothing to do, and the change budget. Each sentence is written here
 * once; the views compose them. Pure.
 */
import type { ChangeBudget } from '../../plan/check-plan-safety.js';
import { summarisePlan, type Plan, type PlanSummary } from '../../plan/types.js';

/** A plan without changes whose organisations could all be read (also apply's, when it had nothing to do). */
export const NO_CHANGES = 'No changes. Your organisations match the configuration.';

/** A plan without changes where some organisations could not be read, as the Markdown summary line says it (no full stop). */
export const NO_CHANGES_READ = 'No changes in the organisations that could be read';

/** What a refusal (or a cancelled apply) adds: the service was not touched. */
export const NOTHING_CHANGED = 'Nothing was changed.';

/** Under the problems of a plan: why they matter to a reviewer. */
export const PROBLEMS_MISSING = 'These could not be read; their changes are missing from this plan.';

/** `2 to change, 2 to remove, 1 to accept`. */
export function planCounts(s: Pick<PlanSummary, 'change' | 'remove' | 'accept'>): string {
  return `${s.change} to change, ${s.remove} to remove, ${s.accept} to accept`;
}

/** The plan's verdict in one line: `Plan: 2 to change, 2 to remove, 1 to accept.`; also the title of the plan's group in a log. */
export function planHeadline(plan: Plan): string {
  const s = summarisePlan(plan);
  if (plan.changes.length > 0) return `Plan: ${planCounts(s)}.`;
  return s.problems > 0 ? `${NO_CHANGES_READ}.` : NO_CHANGES;
}

/** `The plan has 5 changes, more than --max-changes 2. [Nothing was changed. ]Review the plan; …` */
export function describeOverBudget(budget: ChangeBudget, options: { nothingChanged: boolean }): string {
  const changed = options.nothingChanged ? ` ${NOTHING_CHANGED}` : '';
  return `The plan has ${budget.changes} changes, more than --max-changes ${budget.maxChanges}.${changed} Review the plan; then raise --max-changes to at least ${budget.changes}, or apply in parts with --target or --shard.`;
}

/** The line shown under a text plan: `Change budget: 5 of at most 10.`, or that apply will refuse it. */
export function describeChangeBudget(budget: ChangeBudget): string {
  const within = budget.changes <= budget.maxChanges;
  return `Change budget: ${budget.changes} of at most ${budget.maxChanges}${within ? '.' : ' — over budget: apply will refuse this plan.'}\n`;
}
