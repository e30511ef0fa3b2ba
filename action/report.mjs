#!/usr/bin/env node
// @ts-check
/**
 * The action's report step, after the run step:
 *
 * - `command: apply`: the merged pull request gets one comment saying what the apply did (applied,
 *   already done, failed with the failures by name and how to finish, refused with what differs
 *   from the reviewed plan and how to go on, not started), with the run's link; a re-run updates it.
 *   Without a pull request (a direct push) there is no comment: the log, the annotation and the job
 *   summary say it.
 * - `command: drift`: the drift issue is opened, updated in place, or closed with a note
 *   (pipeline/drift-issue.mjs); an error is written into it. Its plan links the plan page uploaded
 *   before (else the run).
 *
 * A comment or issue that cannot be written fails the step: a pull request left without its result,
 * or drift left unsaid, would mislead.
 */
import { readFileSync } from 'node:fs';
import { composeResultComment, planOnlyOutcome, readApplyOutcome } from '../pipeline/apply-outcome.mjs';
import { syncDriftIssue, githubIssues } from '../pipeline/drift-issue.mjs';
import { asSentence, checkToken } from '../pipeline/forge-api.mjs';
import { commentMarker, githubThread, readIfWritten, upsertComment } from '../pipeline/sticky-comment.mjs';
import { ActionError, runStep, warningCommand } from './github-runner.mjs';
import { markerKey, readInputs } from './read-inputs.mjs';

async function main() {
  const env = process.env;
  const inputs = readInputs(env);
  if (inputs.command === 'plan') return;
  if (inputs.command === 'apply' && !env.REVIEW_PULL_REQUEST) {
    console.log('orgform: no merged pull request to write the result on; the log and the job summary have it.');
    return;
  }
  if (!env.GITHUB_TOKEN) throw new ActionError('github-token is empty: the result needs a token that may write pull requests (apply) or issues (drift)');
  const token = checkToken('github-token', env.GITHUB_TOKEN);
  const options = {
    apiUrl: env.GITHUB_API_URL || 'https://api.github.com',
    graphqlUrl: env.GITHUB_GRAPHQL_URL || undefined,
    repository: env.GITHUB_REPOSITORY ?? '',
    token,
    jobToken: token === (env.ORGFORM_JOB_TOKEN ?? '').trim(),
    login: inputs.commentAuthor || undefined,
  };
  const key = markerKey(inputs.workingDirectory, inputs.files);
  try {
    if (inputs.command === 'drift') await reportDrift(env, options, key);
    else await reportApply(env, options, key, Number(env.REVIEW_PULL_REQUEST));
  } catch (err) {
    const what = inputs.command === 'drift' ? 'the drift issue' : 'the result on the pull request';
    throw new ActionError(`could not write ${what}: ${asSentence(/** @type {Error} */ (err).message)}${/** @type {{ status?: number }} */ (err).status === 403 ? ` The job needs \`permissions: ${inputs.command === 'drift' ? 'issues' : 'pull-requests'}: write\`.` : ''}`);
  }
}

/** This run's page (this attempt's, when re-run). @param {NodeJS.ProcessEnv} env */
function runUrl(env) {
  const attempt = env.GITHUB_RUN_ATTEMPT && env.GITHUB_RUN_ATTEMPT !== '1' ? `/attempts/${env.GITHUB_RUN_ATTEMPT}` : '';
  return `${env.GITHUB_SERVER_URL || 'https://github.com'}/${env.GITHUB_REPOSITORY ?? ''}/actions/runs/${env.GITHUB_RUN_ID ?? ''}${attempt}`;
}

/**
 * @param {NodeJS.ProcessEnv} env
 * @param {Omit<import('../pipeline/sticky-comment.mjs').GithubThreadOptions, 'number'>} options
 * @param {string} key
 * @param {number} number
 */
async function reportApply(env, options, key, number) {
  const branch = (env.GITHUB_REF ?? '').replace(/^refs\/heads\//, '') || 'the default branch';
  const workflow = env.GITHUB_WORKFLOW || 'this workflow';
  const stderr = readIfWritten(env.ORGFORM_STDERR_FILE);
  const outcome =
    env.REVIEW_MODE === 'no-review'
      ? planOnlyOutcome(Number(env.ORGFORM_EXITCODE), readIfWritten(env.ORGFORM_MARKDOWN_FILE), stderr, env.REVIEW_REASON || 'none was found')
      : readApplyOutcome(readIfWritten(env.ORGFORM_RESULT_FILE), stderr);
  const marker = commentMarker(key, 'apply');
  const body = composeResultComment({
    marker,
    outcome,
    commit: env.GITHUB_SHA ?? '',
    runUrl: runUrl(env),
    applyByDigest: (d) => `run the workflow ${workflow} by hand on \`${branch}\` (Actions › ${workflow} › Run workflow) with its input \`digest\` set to \`${d}\``,
    applyUnreviewed: `run the workflow ${workflow} by hand on \`${branch}\` with its input \`apply-unreviewed\` checked (the action's input of that name)`,
  });
  const result = await upsertComment(githubThread({ ...options, number }), marker, body);
  console.log(`Result comment ${result.id} ${result.action} on pull request #${number}.`);
  if (result.unowned) console.log(warningCommand("github-token cannot tell whose it is, so its earlier result comment could not be found and a new one was written: set the input comment-author."));
}

/**
 * @param {NodeJS.ProcessEnv} env
 * @param {Omit<import('../pipeline/sticky-comment.mjs').GithubThreadOptions, 'number'>} options
 * @param {string} key
 */
async function reportDrift(env, options, key) {
  // No exit code: orgform did not run (an earlier step failed), which is no "no drift".
  const ran = /^\d+$/.test(env.ORGFORM_EXITCODE ?? '');
  const result = await syncDriftIssue(githubIssues(options), commentMarker(key, 'drift'), {
    exitCode: ran ? Number(env.ORGFORM_EXITCODE) : 1,
    markdown: readIfWritten(env.ORGFORM_MARKDOWN_FILE),
    stderr: ran ? readIfWritten(env.ORGFORM_STDERR_FILE) : 'orgform did not run: an earlier step of the action failed (see the run).',
    branch: (env.GITHUB_REF ?? '').replace(/^refs\/heads\//, '') || 'the default branch',
    runUrl: runUrl(env),
    pageUrl: env.ORGFORM_PAGE_URL || undefined,
    commit: env.GITHUB_SHA ?? '',
  });
  console.log(result.action === 'none' ? 'No drift, and no drift issue open.' : `Drift issue #${result.id} ${result.action}.`);
  if (result.unowned) console.log(warningCommand("github-token cannot tell whose it is, so an open drift issue could not be found and a new one was opened: set the input comment-author."));
}

await runStep(main);
