/**
 * ORGFORM_PLAN_KEY is refused in a pull request's job (pullRequestJob): with it the request's author
 * could sign any plan. A pull request's plan is for review and is not signed; the key belongs where
 * only the default branch reaches it.
 */
import { UsageError } from '../errors.js';
import { planKeyFromEnv } from '../plan/saved-plan.js';
import { pullRequestJob } from '../pull-request-job.js';

type Env = Readonly<Record<string, string | undefined>>;

/** ORGFORM_PLAN_KEY for plan, apply and show (planKeyFromEnv), refused in a pull request's job before anything is done. */
export function planKeyOutsidePullRequests(env: Env): string | undefined {
  const key = planKeyFromEnv(env);
  const job = key === undefined ? undefined : pullRequestJob(env);
  if (job !== undefined) {
    throw new UsageError(
      `ORGFORM_PLAN_KEY is set in ${job}, where the pull request's author can read it and sign any plan with it. Nothing was done. ` +
        'Give the key only to the jobs of the default branch (a GitHub environment with protection rules, a GitLab protected variable): see docs/pipelines.md#split-credentials.',
    );
  }
  return key;
}
