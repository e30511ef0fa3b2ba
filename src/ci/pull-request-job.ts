/**
 * Whether this process runs in a job started by a pull request (GitHub) or a merge request
 * (GitLab): a job whose files, and on GitHub even whose workflow, the request's author controls.
 * ORGFORM_PLAN_KEY is refused there (cli/settings.ts): with it the author could sign any plan. A
 * pull request's plan is for review and is not signed; the key belongs where only the default
 * branch reaches it.
 */
import type { CiSettings } from './ci-settings.js';

/** The pull request job this is, described with the variable that says so; undefined outside one. */
export function pullRequestJob(ci: CiSettings): string | undefined {
  const event = ci.githubEvent;
  if (ci.githubActions && event !== undefined && event.startsWith('pull_request')) return `a GitHub Actions job of a pull request (GITHUB_EVENT_NAME=${event})`;
  if (ci.gitlabCi && ci.mergeRequest !== undefined) return `a GitLab merge request pipeline (${ci.mergeRequest.variable}=${ci.mergeRequest.iid})`;
  return undefined;
}
