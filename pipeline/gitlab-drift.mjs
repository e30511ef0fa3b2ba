#!/usr/bin/env node
// @ts-check
/**
 * The GitLab component's drift job (templates/orgform.yml, `orgform-drift`), in a scheduled
 * pipeline of the default branch: keeps one issue open while the plan has changes, updated in
 * place, closes it with a note when it has none, and writes an error into it (drift-issue.mjs).
 *
 *   node gitlab-drift.mjs PLAN_MARKDOWN_FILE PLAN_STDERR_FILE EXIT_CODE
 *
 * Needs GITLAB_API_TOKEN (a project access token, api scope, Reporter or above), and reads what
 * GitLab sets for a job (CI_API_V4_URL, CI_PROJECT_ID, CI_COMMIT_SHA, CI_COMMIT_BRANCH, CI_JOB_URL,
 * CI_JOB_NAME: the issue's marker). Exit code: 1 when the issue cannot be written or the plan
 * failed, else 0 (drift is in the issue, not a failed job).
 */
import { asSentence, checkToken } from './forge-api.mjs';
import { gitlabIssues, syncDriftIssue } from './drift-issue.mjs';
import { commentMarker, readIfWritten } from './sticky-comment.mjs';

/**
 * @param {string[]} argv
 * @param {Record<string, string | undefined>} env
 * @returns {Promise<number>}
 */
async function driftOnGitlab(argv, env) {
  const [markdownFile, stderrFile, code] = argv;
  if (markdownFile === undefined || stderrFile === undefined || code === undefined || !/^\d+$/.test(code)) {
    console.error('usage: gitlab-drift.mjs PLAN_MARKDOWN_FILE PLAN_STDERR_FILE EXIT_CODE');
    return 1;
  }
  if (!env.GITLAB_API_TOKEN) {
    console.error('orgform: GITLAB_API_TOKEN is not set, so drift cannot be kept in an issue. Add it under Settings > CI/CD > Variables (masked): a project access token with the api scope.');
    return 1;
  }
  try {
    const token = checkToken('GITLAB_API_TOKEN', env.GITLAB_API_TOKEN);
    const tracker = gitlabIssues({ apiUrl: env.CI_API_V4_URL ?? '', projectId: env.CI_PROJECT_ID ?? '', token, username: env.ORGFORM_NOTE_AUTHOR || undefined });
    const result = await syncDriftIssue(tracker, commentMarker(env.CI_JOB_NAME ?? '', 'drift'), {
      exitCode: Number(code),
      markdown: readIfWritten(markdownFile),
      stderr: readIfWritten(stderrFile),
      branch: env.CI_COMMIT_BRANCH || env.CI_DEFAULT_BRANCH || 'the default branch',
      runUrl: env.CI_JOB_URL ?? '',
      commit: env.CI_COMMIT_SHA ?? '',
    });
    console.log(result.action === 'none' ? 'orgform: no drift, and no drift issue open.' : `orgform: drift issue #${result.id} ${result.action}.`);
  } catch (err) {
    console.error(`orgform: could not write the drift issue: ${asSentence(/** @type {Error} */ (err).message)}`);
    return 1;
  }
  return code === '0' || code === '2' ? 0 : 1;
}

process.exitCode = await driftOnGitlab(process.argv.slice(2), process.env);
