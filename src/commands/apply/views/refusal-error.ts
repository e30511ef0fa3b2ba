/**
 * A refused apply as the error the CLI shows: what stands in the way, that nothing was changed,
 * and what to do. Built from the refusal's data; the plan's own problems are its details.
 */
import { OrgformError, UsageError } from '../../../errors.js';
import { describeOverBudget, NOTHING_CHANGED } from '../../../text/plan/plan-headline.js';
import type { PlanHazard } from '../../../plan/check-plan-safety.js';
import { describeDifference, describeNotReviewed } from '../../../text/plan/describe-digest.js';

export type Refusal =
  | PlanHazard
  /** A fresh plan needs an answer, and no one can give it (no terminal). */
  | { kind: 'cannot-confirm'; why: string }
  /** A saved plan made against another service. */
  | { kind: 'other-service'; madeFor: string; serviceKey: string }
  /** A saved plan holding changes that its own desired state and the service do not give (edited by hand, say). */
  | { kind: 'not-derived'; changes: readonly string[] };

export function refusalError(refusal: Refusal, planFile?: string): OrgformError {
  // The machines' view tells a refusal before the command names the file: then it is "the saved plan".
  const saved = planFile === undefined ? 'The saved plan' : `The saved plan ${planFile}`;
  switch (refusal.kind) {
    case 'cannot-confirm':
      return new UsageError(
        `apply asks for confirmation, but no one can answer: ${refusal.why}. Review the plan (orgform plan), then run orgform apply --auto-approve, or save it with orgform plan --out FILE and run orgform apply FILE. ${NOTHING_CHANGED}`,
      );
    case 'other-service':
      return new OrgformError('PLAN_STALE', `${saved} was made for ${refusal.madeFor}, not ${refusal.serviceKey}. ${NOTHING_CHANGED} Make a new plan against this service.`);
    case 'not-derived':
      return new OrgformError(
        'PLAN_INVALID',
        `${saved} holds ${refusal.changes.length === 1 ? 'a change' : 'changes'} that its own desired state and the service do not give: it was edited after it was made, or made otherwise than by orgform plan. ${NOTHING_CHANGED} Make a new plan with orgform plan --out FILE.`,
        { details: [...refusal.changes] },
      );
    case 'stale':
      return new OrgformError('PLAN_STALE', `${saved} is stale: what it was based on changed. ${NOTHING_CHANGED} Run orgform plan again.`, { details: refusal.changed });
    case 'incomplete': {
      const n = refusal.problems.length;
      return new OrgformError(
        'PLAN_UNSAFE',
        `${n} organisation${n === 1 ? '' : 's'} could not be read, so the plan is incomplete. ${NOTHING_CHANGED} Fix the problems above (or leave those organisations out with --target), then run apply again.`,
        { details: refusal.problems.map((p) => p.message) },
      );
    }
    case 'not-reviewed':
      return new OrgformError(
        'PLAN_NOT_REVIEWED',
        `${describeNotReviewed(refusal)} ${NOTHING_CHANGED} What differs is below. If the plan now is what you want, review it (above) and apply exactly it with orgform apply --expect-digest ${refusal.actual}; otherwise find what changed since the review (the configuration, or the service by hand) and plan again.`,
        { details: describeDifference(refusal) },
      );
    case 'over-budget':
      return new OrgformError('PLAN_UNSAFE', describeOverBudget(refusal, { nothingChanged: true }));
    default: {
      const unreachable: never = refusal;
      throw new Error(`unknown refusal ${JSON.stringify(unreachable)}`);
    }
  }
}
