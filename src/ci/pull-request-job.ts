/**
 * Whether this process runs in a job started by a pull request (GitHub) or a merge request
 * (GitLab): a job whose files, and on GitHub even whose workflow, the request's author controls.
 * ORGFORM_PLAN_KEY is refused there: with it the author could sign any plan. A pull request's plan
 * is for review and is not signed; the key belongs where only the default branch reaches it.
 */
import { UsageError } from '../errors.js';
import { planKeyFromEnv } from '../plan/saved-plan.js';

type Env = Readonly<Record<string, string | undefined>>;

/** The pull request job this is, described with the variable that says so; undefined outside one. */
export function pullRequestJob(env: Env): string | undefined {
  const event = env.GITHUB_EVENT_NAME;
  if (env.GITHUB_ACTIONS === 'true' && event !== undefined && event.startsWith('pull_request')) return `a GitHub Actions job of a pull request (GITHUB_EVENT_NAME=${event})`;
  for (const name of ['CI_MERGE_REQUEST_IID', 'CI_EXTERNAL_PULL_REQUEST_IID']) {
    const iid = env[name];
    if (env.GITLAB_CI === 'true' && iid !== undefined && iid !== '') return `a GitLab merge request pipeline (${name}=${iid})`;
  }
  return undefined;
}

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
