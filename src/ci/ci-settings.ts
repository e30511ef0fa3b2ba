/**
 * The CI service orgform runs in, as its own variables say (cli/output-settings.ts reads them), and
 * the two facts derived from them. Whether this is a job a pull request (GitHub) or a merge request
 * (GitLab) started: a job whose files, and on GitHub even whose workflow, the request's author
 * controls. ORGFORM_PLAN_KEY is refused there (cli/settings.ts): with it the author could sign any
 * plan (a pull request's plan is for review and is not signed); and the token command runs in the
 * home directory, outside the request's files (cli/settings.ts decides where). And the checkout the
 * job runs on, whose working tree the configuration must lie in (work-tree.ts).
 */
export interface CiSettings {
  /** GITHUB_ACTIONS=true: annotations, folded groups and the guard on every line written. */
  githubActions: boolean;
  /** GITHUB_EVENT_NAME: `pull_request…` in a pull request's job. */
  githubEvent?: string;
  /** GITHUB_WORKSPACE: where annotations' paths start. */
  githubWorkspace?: string;
  /** GITHUB_STEP_SUMMARY: the job summary file. */
  githubStepSummary?: string;
  /** GITLAB_CI=true. */
  gitlabCi: boolean;
  /** CI_PROJECT_DIR: where the paths of GitLab's reports start. */
  gitlabProjectDir?: string;
  /** CI_MERGE_REQUEST_IID or CI_EXTERNAL_PULL_REQUEST_IID, in a merge request pipeline: which, and its value. */
  mergeRequest?: { variable: string; iid: string };
}

/** The pull request job this is, described with the variable that says so; undefined outside one. */
export function pullRequestJob(ci: CiSettings): string | undefined {
  const event = ci.githubEvent;
  if (ci.githubActions && event !== undefined && event.startsWith('pull_request')) return `a GitHub Actions job of a pull request (GITHUB_EVENT_NAME=${event})`;
  if (ci.gitlabCi && ci.mergeRequest !== undefined) return `a GitLab merge request pipeline (${ci.mergeRequest.variable}=${ci.mergeRequest.iid})`;
  return undefined;
}

/**
 * The checkout a CI job runs on, where its service names one: GitHub's GITHUB_WORKSPACE, GitLab's
 * CI_PROJECT_DIR; undefined outside CI.
 */
export function jobCheckout(ci: CiSettings): string | undefined {
  if (ci.githubActions && ci.githubWorkspace !== undefined) return ci.githubWorkspace;
  if (ci.gitlabCi && ci.gitlabProjectDir !== undefined) return ci.gitlabProjectDir;
  return undefined;
}
