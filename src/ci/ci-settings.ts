/** The CI service orgform runs in, as its own variables say (cli/output-settings.ts reads them). */
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
