#!/usr/bin/env node
// @ts-check
/**
 * The GitLab component's apply job (templates/orgform.yml, `orgform-apply`), on the default branch:
 * applies only the plan reviewed on the merge request this commit merged, and writes the result
 * back to it.
 *
 *   node gitlab-apply.mjs [orgform's own arguments: -f FILE … --max-changes N …]
 *
 * 1. Which plan (reviewed-plan.mjs): ORGFORM_EXPECT_DIGEST, when a person runs a pipeline with it
 *    (the plan with that digest); else, ORGFORM_APPLY_UNREVIEWED=true, a fresh plan without review;
 *    else the merge request of CI_COMMIT_SHA and the digest in the plan job's note on it, found
 *    among GITLAB_API_TOKEN's user's notes (ORGFORM_PLAN_JOB names the plan job, whose name is the
 *    note's marker). No merge request (a direct push) or no such note: only a plan, and the job
 *    fails when it has changes.
 * 2. orgform, with GITLAB_API_TOKEN left out of its environment: `apply --expect-digest …
 *    --format json` (its events to a file), or `plan --format markdown --detailed-exitcode`.
 * 3. One note on the merge request (applied, already done, failed, refused with what differs, not
 *    started; the job's link), updated by a re-run.
 *
 * Exit code: orgform's (0 applied or nothing to apply), 1 when nothing reviewed could be applied.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { composeResultComment, describeOutcome, planOnlyOutcome, readApplyOutcome } from './apply-outcome.mjs';
import { asSentence, checkToken } from './forge-api.mjs';
import { checkNewest, configPaths, gitlabBranch, SupersededError } from './newer-config.mjs';
import { applyArguments, decideApply, gitlabMergedRequest } from './reviewed-plan.mjs';
import { runOrgform } from './run-orgform.mjs';
import { commentMarker, gitlabThread, upsertComment } from './sticky-comment.mjs';

/**
 * @param {string[]} argv  orgform's arguments for the files, limits and the user's own
 * @param {Record<string, string | undefined>} env
 * @returns {Promise<number>}
 */
async function applyOnGitlab(argv, env) {
  for (const name of ['CI_API_V4_URL', 'CI_PROJECT_ID', 'CI_COMMIT_SHA']) {
    if (!env[name]) {
      console.error(`orgform: ${name} is not set: is this running in GitLab CI?`);
      return 1;
    }
  }
  const expectDigest = (env.ORGFORM_EXPECT_DIGEST ?? '').trim().toLowerCase();
  if (expectDigest !== '' && !/^sha256:[0-9a-f]{64}$/.test(expectDigest)) {
    console.error(`orgform: ORGFORM_EXPECT_DIGEST must be a plan's whole digest, sha256: and 64 hexadecimal digits (got "${expectDigest}"). Nothing was applied.`);
    return 1;
  }
  const dir = mkdtempSync(join(tmpdir(), 'orgform-apply-'));
  const planJob = env.ORGFORM_PLAN_JOB || 'orgform-plan';
  const branch = env.CI_COMMIT_BRANCH ?? '';
  const sha = env.CI_COMMIT_SHA ?? '';
  let token;
  try {
    token = env.GITLAB_API_TOKEN ? checkToken('GITLAB_API_TOKEN', env.GITLAB_API_TOKEN) : undefined;
  } catch (err) {
    console.error(`orgform: ${asSentence(/** @type {Error} */ (err).message)} Nothing was applied.`);
    return 1;
  }
  const api = { apiUrl: env.CI_API_V4_URL ?? '', projectId: env.CI_PROJECT_ID ?? '' };

  let decided;
  try {
    decided = await decideApply({
      expectDigest,
      applyUnreviewed: env.ORGFORM_APPLY_UNREVIEWED === 'true',
      // Without the token the branch cannot be asked (nothing reviewed is found then either); the job's rules run it only for a branch.
      checkNewest:
        token === undefined || branch === ''
          ? undefined
          : () => checkNewest({ sha, branch, config: configPaths(argv, process.cwd(), env.CI_PROJECT_DIR || process.cwd()), ...gitlabBranch({ ...api, token, branch, sha }) }),
      mergedPullRequest: async () => (token === undefined ? undefined : gitlabMergedRequest({ ...api, token, sha, branch })),
      threadOf: (mr) => gitlabThread({ ...api, mergeRequestIid: String(mr.number), token: token ?? '', username: env.ORGFORM_NOTE_AUTHOR || undefined }),
      commentMarker: commentMarker(planJob),
      review: 'merge request',
      saveMarker: (marker) => {
        const file = join(dir, 'reviewed.md');
        writeFileSync(file, `${marker}\n`);
        return file;
      },
    });
  } catch (err) {
    if (err instanceof SupersededError) console.error(`orgform: ${err.message}`);
    else console.error(`orgform: could not find the reviewed plan, so nothing was applied: ${asSentence(/** @type {Error} */ (err).message)}`);
    return 1;
  }
  const { mode, pullRequest } = decided;
  const reason = token === undefined && mode.mode === 'no-review' ? 'GITLAB_API_TOKEN is not set, so the merge request and its plan note cannot be read' : (decided.reason ?? '');
  if (token === undefined && mode.mode !== 'no-review') console.error(`orgform: GITLAB_API_TOKEN is not set, so whether this commit is still the head of ${branch} cannot be asked: run this only for the newest commit.`);
  if (mode.mode === 'unreviewed') console.error('orgform: ORGFORM_APPLY_UNREVIEWED is true: a fresh plan is applied without a reviewed plan to compare it with.');
  if (mode.mode === 'no-review') console.error(`orgform: no reviewed plan (${reason}): this job only plans, and applies nothing.`);
  if (mode.mode === 'reviewed') console.log(`orgform: applying ${expectDigest !== '' ? 'the plan with the digest given' : 'the reviewed plan'}, ${mode.digest}${pullRequest === undefined ? '' : ` of merge request !${pullRequest.number}`}.`);

  // orgform gets the job's variables, but not the token that writes notes.
  const { GITLAB_API_TOKEN: _token, ...childEnv } = env;
  const files = { stdout: join(dir, mode.mode === 'no-review' ? 'plan.md' : 'apply.ndjson'), stderr: join(dir, 'orgform.err') };
  // The apply report (templates/orgform.yml keeps it as an artifact), only when orgform applies: plan takes no html report.
  const report = mode.mode !== 'no-review' && env.ORGFORM_APPLY_REPORT ? ['--report', `html=${env.ORGFORM_APPLY_REPORT}`] : [];
  const code = await runOrgform('orgform', applyArguments(mode, [...report, ...argv]), childEnv, files);
  const stdout = readFileSync(files.stdout, 'utf8');
  const stderr = readFileSync(files.stderr, 'utf8');
  const outcome = mode.mode === 'no-review' ? planOnlyOutcome(code, stdout, stderr, reason) : readApplyOutcome(stdout, stderr);
  if (mode.mode === 'no-review' && stdout.trim() !== '') console.log(stdout);
  console.log(describeOutcome(outcome));

  if (pullRequest !== undefined && token !== undefined) {
    const marker = commentMarker(planJob, 'apply');
    const body = composeResultComment({
      marker,
      outcome,
      commit: env.CI_COMMIT_SHA ?? '',
      runUrl: env.CI_JOB_URL ?? '',
      applyByDigest: (d) => `run a pipeline for \`${branch}\` by hand (Build › Pipelines › Run pipeline) with the variable \`ORGFORM_EXPECT_DIGEST\` set to \`${d}\``,
      applyUnreviewed: `run a pipeline for \`${branch}\` by hand with the variable \`ORGFORM_APPLY_UNREVIEWED\` set to \`true\``,
      review: 'merge request',
    });
    try {
      const result = await upsertComment(gitlabThread({ ...api, mergeRequestIid: String(pullRequest.number), token, username: env.ORGFORM_NOTE_AUTHOR || undefined }), marker, body);
      console.log(`orgform: result note ${result.id} ${result.action} on merge request !${pullRequest.number}.`);
    } catch (err) {
      console.error(`orgform: could not write the result on merge request !${pullRequest.number}: ${asSentence(/** @type {Error} */ (err).message)}`);
      return 1;
    }
  }
  return code === 0 ? 0 : 1;
}

process.exitCode = await applyOnGitlab(process.argv.slice(2), process.env);
