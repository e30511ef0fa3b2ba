#!/usr/bin/env node
// @ts-check
/**
 * The GitLab component's merge request note (templates/orgform.yml, job `orgform-plan`): one note
 * per merge request and job, updated on every push, holding the Markdown plan (up to GitLab's
 * 1,000,000 characters, which orgform plan keeps to in GitLab CI) or, when plan failed before making
 * one, its error.
 *
 *   node gitlab-note.mjs PLAN_MARKDOWN_FILE PLAN_STDERR_FILE EXIT_CODE
 *
 * Reads what GitLab sets for a job (CI_API_V4_URL, CI_PROJECT_ID, CI_MERGE_REQUEST_IID,
 * CI_COMMIT_SHA, CI_JOB_NAME) and GITLAB_API_TOKEN, a project access token with the api scope: a
 * job's own CI_JOB_TOKEN may not write notes. The note is found again among that token's user's own
 * notes (GET /user; ORGFORM_NOTE_AUTHOR, a username, when the token may not read it). Without a
 * merge request, or without that token, there is no note and it says why; a note that cannot be
 * written fails the job (exit 1), since a note left showing an older plan would mislead the review.
 */
import { asSentence, checkToken } from './forge-api.mjs';
import { commentMarker, composePlanComment, gitlabThread, GITLAB_NOTE_LENGTH, readIfWritten, upsertComment } from './sticky-comment.mjs';

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
    maxLength: GITLAB_NOTE_LENGTH,
  });
  try {
    const token = checkToken('GITLAB_API_TOKEN', env.GITLAB_API_TOKEN);
    const thread = gitlabThread({ apiUrl: env.CI_API_V4_URL ?? '', projectId: env.CI_PROJECT_ID ?? '', mergeRequestIid: env.CI_MERGE_REQUEST_IID, token, username: env.ORGFORM_NOTE_AUTHOR || undefined });
    const result = await upsertComment(thread, marker, body);
    log.out(`orgform: plan note ${result.id} ${result.action} on merge request !${env.CI_MERGE_REQUEST_IID}.`);
    if (result.unowned) log.err("orgform: GITLAB_API_TOKEN may not read its own user (GET /user), so the notes it wrote before cannot be told from others' and a new note was written. Give it the api or read_user scope, or set ORGFORM_NOTE_AUTHOR to its username.");
    return 0;
  } catch (err) {
    log.err(`orgform: could not write the plan note: ${asSentence(/** @type {Error} */ (err).message)}${noteHint(/** @type {{ status?: number, rateLimited?: boolean }} */ (err))}`);
    return 1;
  }
}

/** What to do about a refusal: a rate limit passes; 401 and 403 are the token's scope or role. @param {{ status?: number, rateLimited?: boolean }} err */
function noteHint(err) {
  if (err.rateLimited) return ' Run the job again once the limit resets.';
  return err.status === 401 || err.status === 403 ? ' GITLAB_API_TOKEN needs the api scope and a role that may comment (Reporter or above).' : '';
}

const log = { out: (/** @type {string} */ line) => console.log(line), err: (/** @type {string} */ line) => console.error(line) };
process.exitCode = await postGitlabNote(process.argv.slice(2), process.env, log);
