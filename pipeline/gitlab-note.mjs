#!/usr/bin/env node
// @ts-check
/**
 * The GitLab component's merge request note (templates/orgform.yml, job `orgform-plan`): one note
 * per merge request and job, updated on every push, holding the Markdown plan or, when plan failed
 * before making one, its error.
 *
 *   node gitlab-note.mjs PLAN_MARKDOWN_FILE PLAN_STDERR_FILE EXIT_CODE
 *
 * Reads what GitLab sets for a job (CI_API_V4_URL, CI_PROJECT_ID, CI_MERGE_REQUEST_IID,
 * CI_COMMIT_SHA, CI_JOB_NAME) and GITLAB_API_TOKEN, a project access token with the api scope: a
 * job's own CI_JOB_TOKEN may not write notes. Without a merge request, or without that token, there
 * is no note and it says why; a note that cannot be written fails the job (exit 1), since a note
 * left showing an older plan would mislead the review.
 */
import { commentMarker, composePlanComment, gitlabThread, readIfWritten, upsertComment } from './sticky-comment.mjs';

/**
 * @param {string[]} argv
 * @param {Record<string, string | undefined>} env
 * @param {{ out: (line: string) => void, err: (line: string) => void }} log
 * @returns {Promise<number>} the exit code
 */
async function postGitlabNote(argv, env, log) {
  const [markdownFile, stderrFile, code] = argv;
  if (markdownFile === undefined || stderrFile === undefined || code === undefined || !/^\d+$/.test(code)) {
    log.err('usage: gitlab-note.mjs PLAN_MARKDOWN_FILE PLAN_STDERR_FILE EXIT_CODE');
    return 1;
  }
  if (!env.CI_MERGE_REQUEST_IID) {
    log.out('orgform: not a merge request pipeline, so no note.');
    return 0;
  }
  if (!env.GITLAB_API_TOKEN) {
    log.err('orgform: GITLAB_API_TOKEN is not set, so no note. Add it under Settings > CI/CD > Variables (masked): a project access token with the api scope.');
    return 0;
  }
  for (const name of ['CI_API_V4_URL', 'CI_PROJECT_ID']) {
    if (!env[name]) {
      log.err(`orgform: ${name} is not set: is this running in GitLab CI?`);
      return 1;
    }
  }
  const marker = commentMarker(env.CI_JOB_NAME ?? '');
  const body = composePlanComment({
    marker,
    markdown: readIfWritten(markdownFile),
    stderr: readIfWritten(stderrFile),
    exitCode: Number(code),
    commit: env.CI_COMMIT_SHA ?? env.CI_COMMIT_SHORT_SHA ?? '',
  });
  const thread = gitlabThread({ apiUrl: env.CI_API_V4_URL ?? '', projectId: env.CI_PROJECT_ID ?? '', mergeRequestIid: env.CI_MERGE_REQUEST_IID, token: env.GITLAB_API_TOKEN });
  try {
    const result = await upsertComment(thread, marker, body);
    log.out(`orgform: plan note ${result.id} ${result.action} on merge request !${env.CI_MERGE_REQUEST_IID}.`);
    return 0;
  } catch (err) {
    const hint = /** @type {{ status?: number }} */ (err).status === 401 || /** @type {{ status?: number }} */ (err).status === 403 ? ' GITLAB_API_TOKEN needs the api scope and a role that may comment (Reporter or above).' : '';
    log.err(`orgform: could not write the plan note: ${/** @type {Error} */ (err).message}.${hint}`);
    return 1;
  }
}

const log = { out: (/** @type {string} */ line) => console.log(line), err: (/** @type {string} */ line) => console.error(line) };
process.exitCode = await postGitlabNote(process.argv.slice(2), process.env, log);
