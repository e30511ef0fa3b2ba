#!/usr/bin/env node
// @ts-check
/**
 * The action's review step, for `command: apply`: which plan this run may apply. With the
 * `expect-digest` input, the plan with that digest; with `apply-unreviewed: true`, a fresh plan,
 * without a review (a warning says so); otherwise the reviewed plan of the pull request this commit
 * merged: the digest in orgform's own plan comment on it (found by the token's identity and the
 * plan marker of the same working-directory and files), its marker saved for `--reviewed`. A direct
 * push, or a pull request without such a comment, gets no reviewed plan: the run step then only
 * plans, and the job fails when there is anything to apply.
 *
 * Outputs: mode (reviewed, unreviewed or no-review), digest, reviewed-file, pull-request (its
 * number, or empty) and reason (why there is no reviewed plan).
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { asSentence, checkToken } from '../pipeline/forge-api.mjs';
import { checkNewest, configPaths, gitRootOf, githubBranch, SupersededError } from '../pipeline/newer-config.mjs';
import { decideApply, githubMergedPullRequest } from '../pipeline/reviewed-plan.mjs';
import { commentMarker, githubThread } from '../pipeline/sticky-comment.mjs';
import { ActionError, runStep, setOutputs, warningCommand } from './github-runner.mjs';
import { markerKey, orgformArguments, readInputs } from './read-inputs.mjs';

async function main() {
  const env = process.env;
  const inputs = readInputs(env);
  if (inputs.command !== 'apply') return;
  const event = env.GITHUB_EVENT_PATH ? JSON.parse(readFileSync(env.GITHUB_EVENT_PATH, 'utf8')) : {};
  const ref = env.GITHUB_REF ?? event.ref ?? '';
  const branch = ref.replace(/^refs\/heads\//, '');
  const sha = env.GITHUB_SHA ?? '';
  if (!env.GITHUB_TOKEN) throw new ActionError('github-token is empty: the apply needs a token that may read the merged pull request and write its comment');
  let decided;
  try {
    const token = checkToken('github-token', env.GITHUB_TOKEN);
    const apiUrl = env.GITHUB_API_URL || 'https://api.github.com';
    const repository = env.GITHUB_REPOSITORY ?? '';
    const dir = mkdtempSync(join(env.RUNNER_TEMP || tmpdir(), 'orgform-review-'));
    const runDir = resolve(env.GITHUB_WORKSPACE || process.cwd(), inputs.workingDirectory);
    const config = configPaths(orgformArguments(inputs, ''), runDir, gitRootOf(runDir, env.GITHUB_WORKSPACE || process.cwd()));
    decided = await decideApply({
      expectDigest: inputs.expectDigest,
      applyUnreviewed: inputs.applyUnreviewed,
      // A run for a branch (a push, a run by hand), not a tag's or a pull request's: only while its configuration is the branch's newest.
      checkNewest: ref.startsWith('refs/heads/') ? () => checkNewest({ sha, branch, config, ...githubBranch({ apiUrl, repository, token, branch, sha }) }) : undefined,
      mergedPullRequest: () => githubMergedPullRequest({ apiUrl, repository, token, sha, branch }),
      threadOf: (pr) =>
        githubThread({
          apiUrl,
          graphqlUrl: env.GITHUB_GRAPHQL_URL || undefined,
          repository,
          number: pr.number,
          token,
          jobToken: token === (env.ORGFORM_JOB_TOKEN ?? '').trim(),
          login: inputs.commentAuthor || undefined,
        }),
      commentMarker: commentMarker(markerKey(inputs.workingDirectory, inputs.files)),
      saveMarker: (marker) => {
        const file = join(dir, 'reviewed.md');
        writeFileSync(file, `${marker}\n`);
        return file;
      },
    });
  } catch (err) {
    if (err instanceof SupersededError) throw new ActionError(err.message);
    throw new ActionError(`could not find the reviewed plan, so nothing was applied: ${asSentence(/** @type {Error} */ (err).message)}${/** @type {{ status?: number }} */ (err).status === 403 ? ' The job needs `permissions: pull-requests: write`.' : ''}`);
  }
  const { mode, pullRequest, reason } = decided;
  const on = pullRequest === undefined ? 'with no pull request' : `for pull request #${pullRequest.number}`;
  if (mode.mode === 'reviewed') console.log(`orgform: applying ${inputs.expectDigest !== '' ? 'the plan with the digest given' : 'the reviewed plan'}, ${mode.digest}, ${on}.`);
  if (mode.mode === 'unreviewed') console.log(warningCommand(`apply-unreviewed is true: a fresh plan is applied without a reviewed plan to compare it with (${on}).`));
  if (mode.mode === 'no-review') console.log(`orgform: no reviewed plan (${reason}): this run only plans, and applies nothing.`);
  setOutputs(env, {
    mode: mode.mode,
    digest: mode.mode === 'reviewed' ? mode.digest : '',
    'reviewed-file': mode.mode === 'reviewed' ? (mode.reviewedFile ?? '') : '',
    'pull-request': pullRequest === undefined ? '' : String(pullRequest.number),
    reason: reason ?? '',
  });
}

await runStep(main);
