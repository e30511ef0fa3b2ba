#!/usr/bin/env node
// @ts-check
/**
 * The action's comment step: on a pull request, with `command: plan` and `comment: true`, writes
 * the plan (or its error) into one comment, created on the first push and updated on every later
 * one, through the REST API with the job's token. Several uses of the action on one pull request
 * (other directories or files) keep a comment each. Elsewhere it says why there is no comment.
 * The comment's links to the plan page point at the artifact the step before uploaded.
 * A comment that cannot be written fails the step: a comment left showing an older plan would
 * mislead the review.
 */
import { readFileSync } from 'node:fs';
import { asSentence, checkToken } from '../pipeline/forge-api.mjs';
import { commentMarker, composePlanComment, githubThread, linkPlanPage, readIfWritten, upsertComment } from '../pipeline/sticky-comment.mjs';
import { ActionError, runStep, warningCommand } from './github-runner.mjs';
import { markerKey, readInputs } from './read-inputs.mjs';

async function main() {
  const env = process.env;
  const inputs = readInputs(env);
  if (inputs.command !== 'plan' || !inputs.comment) return;
  const event = env.GITHUB_EVENT_PATH ? JSON.parse(readFileSync(env.GITHUB_EVENT_PATH, 'utf8')) : {};
  const pr = event.pull_request;
  if (typeof pr?.number !== 'number') {
    console.log(`No pull request in this ${env.GITHUB_EVENT_NAME ?? ''} event, so no comment.`);
    return;
  }
  if (!env.GITHUB_TOKEN) throw new ActionError('github-token is empty: the comment needs a token allowed to write pull requests');
  const marker = commentMarker(markerKey(inputs.workingDirectory, inputs.files));
  const body = composePlanComment({
    marker,
    markdown: linkedPlan(readIfWritten(env.ORGFORM_MARKDOWN_FILE), env),
    stderr: readIfWritten(env.ORGFORM_STDERR_FILE),
    exitCode: Number(env.ORGFORM_EXITCODE),
    commit: pr.head?.sha ?? env.GITHUB_SHA ?? '',
  });
  try {
    const token = checkToken('github-token', env.GITHUB_TOKEN);
    const thread = githubThread({
      apiUrl: env.GITHUB_API_URL || 'https://api.github.com',
      graphqlUrl: env.GITHUB_GRAPHQL_URL || undefined,
      repository: env.GITHUB_REPOSITORY ?? '',
      number: pr.number,
      token,
      jobToken: token === (env.ORGFORM_JOB_TOKEN ?? '').trim(),
      login: inputs.commentAuthor || undefined,
    });
    const result = await upsertComment(thread, marker, body);
    console.log(`Plan comment ${result.id} ${result.action} on pull request #${pr.number}.`);
    if (result.unowned) console.log(warningCommand("github-token cannot tell whose it is (GET /user and GraphQL's viewer refused it), so the comments it wrote before cannot be told from others' and a new one was written: set the input comment-author to the login it writes as."));
  } catch (err) {
    const fork = pr.head?.repo?.full_name !== undefined && pr.head.repo.full_name !== event.repository?.full_name;
    throw new ActionError(`could not write the plan comment: ${asSentence(/** @type {Error} */ (err).message)}${commentHint(/** @type {{ status?: number, rateLimited?: boolean }} */ (err), fork)}`);
  }
}

/**
 * The plan's Markdown with its links to the plan page pointing at the artifact the upload step
 * made; when there is none (the upload failed), at this run's page, where the job's summary and
 * log are, with a warning that says why.
 * @param {string} markdown
 * @param {Record<string, string | undefined>} env
 */
function linkedPlan(markdown, env) {
  const run = `${env.GITHUB_SERVER_URL || 'https://github.com'}/${env.GITHUB_REPOSITORY ?? ''}/actions/runs/${env.GITHUB_RUN_ID ?? ''}`;
  const page = env.ORGFORM_PAGE_URL ?? '';
  if (markdown === '') return markdown;
  if (page === '') console.log(warningCommand(`The plan page was not uploaded as an artifact, so the comment links this run instead${env.ORGFORM_PAGE_FILE ? '' : ' (orgform wrote no page)'}: see the step "Upload the page".`));
  try {
    return linkPlanPage(markdown, page || run);
  } catch (err) {
    console.log(warningCommand(`The comment's links to the plan page were left as they are: ${/** @type {Error} */ (err).message}.`));
    return markdown;
  }
}

/**
 * What to do about a refusal: a rate limit is one (the job's token shares the repository's), not
 * a missing permission; 403 and 404 are the token's rights.
 * @param {{ status?: number, rateLimited?: boolean }} err
 * @param {boolean} fork
 */
function commentHint(err, fork) {
  if (err.rateLimited) return ' Run the job again once the limit resets.';
  if (err.status !== 403 && err.status !== 404) return '';
  return fork ? ' This pull request comes from a fork, whose jobs get a read-only token.' : ' The job needs `permissions: pull-requests: write`.';
}

await runStep(main);
