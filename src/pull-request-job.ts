/**
 * Whether this process runs in a job started by a pull request (GitHub) or a merge request
 * (GitLab): a job whose files, and on GitHub even whose workflow, the request's author controls.
 * What orgform does differently there: ci/pull-request-job.ts refuses ORGFORM_PLAN_KEY, and the
 * token command runs outside the pull request's files (api/connect/open-client.ts).
 */

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
