#!/usr/bin/env node
// @ts-check
/**
 * The action's comment step: on a pull request, with `command: plan` and `comment: true`, writes
 * the plan (or its error) into one comment, created on the first push and updated on every later
 * one, through the REST API with the job's token. Several uses of the action on one pull request
 * (other directories or files) keep a comment each. Elsewhere it says why there is no comment.
 * A comment that cannot be written fails the step: a comment left showing an older plan would
 * mislead the review.
 */
import { readFileSync } from 'node:fs';
import { commentMarker, composePlanComment, githubThread, readIfWritten, upsertComment } from '../pipeline/sticky-comment.mjs';
import { ActionError, runStep } from './github-runner.mjs';
import { readInputs } from './read-inputs.mjs';

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
    markdown: readIfWritten(env.ORGFORM_MARKDOWN_FILE),
    stderr: readIfWritten(env.ORGFORM_STDERR_FILE),
    exitCode: Number(env.ORGFORM_EXITCODE),
    commit: pr.head?.sha ?? env.GITHUB_SHA ?? '',
  });
  const thread = githubThread({
    apiUrl: env.GITHUB_API_URL || 'https://api.github.com',
    repository: env.GITHUB_REPOSITORY ?? '',
    number: pr.number,
    token: env.GITHUB_TOKEN,
  });
  try {
    const result = await upsertComment(thread, marker, body);
    console.log(`Plan comment ${result.id} ${result.action} on pull request #${pr.number}.`);
  } catch (err) {
    const status = /** @type {{ status?: number }} */ (err).status;
    const fork = pr.head?.repo?.full_name !== undefined && pr.head.repo.full_name !== event.repository?.full_name;
    const hint =
      status === 403 || status === 404
        ? fork
          ? ' This pull request comes from a fork, whose jobs get a read-only token.'
          : ' The job needs `permissions: pull-requests: write`.'
        : '';
    throw new ActionError(`could not write the plan comment: ${/** @type {Error} */ (err).message}.${hint}`);
  }
}

/** The same directory and files find the same comment. @param {string} workingDirectory @param {string[]} files */
function markerKey(workingDirectory, files) {
  const dir = workingDirectory.replace(/^(\.\/)+/, '').replace(/\/+$/, '');
  return [dir === '.' ? '' : dir, ...files].filter(Boolean).join(' ');
}

await runStep(main);
