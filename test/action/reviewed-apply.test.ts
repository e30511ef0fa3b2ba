/**
 * The GitHub Action after a merge and on a schedule, run whole in a simulated job
 * (test/support/action-job.ts) against the emulator and a fake GitHub API: `command: apply` applies
 * only the plan reviewed on the merged pull request (the digest in orgform's own plan comment), and
 * writes one result comment there; `command: drift` keeps one issue while the service differs.
 * Each case first runs the pull request's plan job, as the workflow does, so that the comment read
 * back is the one the action wrote.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ActionRun } from '../support/composite-action.js';
import { changeBillingByHand } from '../support/emulator-workspace.js';
import { runnerAnnotations } from '../support/github-runner.js';
import { artifactUrl, startActionJob, type ActionJob, type JobOptions } from '../support/action-job.js';

const MERGE = '5e1ec7ed5e1ec7ed5e1ec7ed5e1ec7ed5e1ec7ed';
const REVERT = 'feedfacefeedfacefeedfacefeedfacefeedface';
const SCHEDULE = { eventName: 'schedule', event: { schedule: '17 6 * * 1' } };
const RUN = { GITHUB_REF: 'refs/heads/main', GITHUB_RUN_ID: '99', GITHUB_SERVER_URL: 'https://github.test', GITHUB_WORKFLOW: 'orgform' };
const DIGEST = /^sha256:[0-9a-f]{64}$/;

let job: ActionJob;
beforeEach(async () => {
  job = await startActionJob({ comments: [{ id: 1, body: 'Looks good to me', author: 'User' }] });
});
afterEach(async () => job?.close());

const step = (run: ActionRun, id: string) => run.steps.find((s) => s.id === id)!;
const log = (run: ActionRun) => run.steps.map((s) => s.stdout + s.stderr).join('\n');
const acmeEmail = () => job.emulator.store.dump().organisations.find((o) => o.id === 'org_acme')?.billing?.billingEmail;
const comments = (marker: string) => job.github.comments.filter((c) => c.body.startsWith(`${marker}\n`));
const writes = () => job.github.requests.filter((r) => !r.startsWith('GET'));

/** The pull request's plan job: its comment holds the plan's digest. */
async function planOnPullRequest(): Promise<string> {
  const plan = await job.run({});
  expect(plan.outputs, log(plan)).toMatchObject({ exitcode: '2', digest: expect.stringMatching(DIGEST) });
  return plan.outputs.digest!;
}

/** GitHub's answer for MERGE: pull request 7, merged into main with it as the merge commit, now. */
function merged(): void {
  job.github.pullsOf.set(MERGE, [{ number: 7, merged_at: new Date().toISOString(), merge_commit_sha: MERGE, base: { ref: 'main' }, html_url: 'https://github.test/acme/config/pull/7' }]);
}

/** The apply job of the push to main that MERGE made. */
function applyMerge(inputs: Record<string, string> = {}, env: Record<string, string> = {}, more: JobOptions = {}) {
  const options: JobOptions = { eventName: 'push', event: { ref: 'refs/heads/main' }, sha: MERGE, env: { ...RUN, ...env }, ...more };
  return job.run({ command: 'apply', ...inputs }, options);
}

describe('action.yml: apply after a merge, only the reviewed plan', { timeout: 120_000 }, () => {
  it('applies the plan whose digest the merged pull request’s plan comment holds, and writes the result there once: a re-run updates it', async () => {
    const digest = await planOnPullRequest();
    merged();
    const applied = await applyMerge();
    expect(applied.failed, log(applied)).toBe(false);
    expect(applied.outputs).toMatchObject({ exitcode: '0', digest, 'pull-request': '7' });
    // The apply report, after the pull request's plan page: uploaded, and the action's page-url.
    expect(job.uploads.map((u) => u.inputs.name)).toEqual(['orgform-plan-page', 'orgform-apply-report']);
    expect(job.uploads[1]!.page).toContain('<p><strong>Complete: 5 changes applied, 0 already done.</strong></p>');
    expect(applied.outputs['page-url']).toBe(artifactUrl(2));
    expect(step(applied, 'review').stdout).toContain(`orgform: applying the reviewed plan, ${digest}, for pull request #7.`);
    expect(acmeEmail()).toBe('finance@acme.example');
    const [result] = comments('<!-- orgform-apply -->');
    expect(result!.body).toBe(
      '<!-- orgform-apply -->\n✅ **orgform apply: applied** the reviewed plan: 5 applied.\n\n<sub>orgform apply of 5e1ec7e: [the run](https://github.test/acme/config/actions/runs/99); a re-run updates this comment.</sub>\n',
    );

    // Re-run: the plan has nothing left to do, which is the reviewed plan done; the same comment says so.
    const again = await applyMerge({}, { GITHUB_RUN_ATTEMPT: '2' });
    expect(again.failed, log(again)).toBe(false);
    expect(comments('<!-- orgform-apply -->')).toHaveLength(1);
    expect(comments('<!-- orgform-apply -->')[0]!.body).toContain('✅ **orgform apply: already done.**');
    expect(comments('<!-- orgform-apply -->')[0]!.body).toContain('(https://github.test/acme/config/actions/runs/99/attempts/2)');
    expect(job.github.comments.map((c) => c.body.split('\n')[0])).toEqual(['Looks good to me', '<!-- orgform-plan -->', '<!-- orgform-apply -->']);
    expect(writes().filter((r) => r.includes('/comments'))).toEqual([
      'POST /repos/acme/config/issues/7/comments',
      'POST /repos/acme/config/issues/7/comments',
      'PATCH /repos/acme/config/issues/comments/1002',
    ]);
  });

  it('applies nothing when the service was changed by hand after the review, keeps that change, and writes on the pull request what differs and how to go on', async () => {
    const reviewed = await planOnPullRequest();
    await changeBillingByHand(job.emulator, 'org_acme', { billingEmail: 'hand@acme.example' });
    const before = job.emulator.store.dump();
    merged();
    const refused = await applyMerge();
    expect(refused.failed).toBe(true);
    expect(refused.outputs.exitcode).toBe('1');
    // The refused apply's report says why, what differs a line each.
    expect(job.uploads[1]!.page).toMatch(/<strong>Why apply stopped:<\/strong> The plan now is not the one reviewed: [^]*~ organisations\.acme\.billing: changed since the review<br>/);
    expect(job.emulator.store.dump()).toEqual(before);
    expect(acmeEmail()).toBe('hand@acme.example');
    const body = comments('<!-- orgform-apply -->')[0]!.body;
    expect(body).toContain('⛔ **orgform apply: refused.** The plan now is not the plan reviewed on this pull request. Nothing was applied.');
    const now = /Now: `(sha256:[0-9a-f]{64})`/.exec(body)?.[1];
    expect(body).toContain(`Reviewed: \`${reviewed}\``);
    expect(now).toMatch(DIGEST);
    expect(now).not.toBe(reviewed);
    expect(body).toContain('~ organisations.acme.billing: changed since the review\n    billingEmail, as read when planned: "billing@acme.example" when reviewed, "hand@acme.example" now');
    expect(body).toContain(`run the workflow orgform by hand on \`main\` (Actions › orgform › Run workflow) with its input \`digest\` set to \`${now}\`: only a plan with that digest is applied.`);

    // A person reviews the plan now and runs the workflow with its digest: that plan, and only it, is applied.
    const byDigest = await applyMerge({ 'expect-digest': now! }, { GITHUB_RUN_ID: '100' });
    expect(byDigest.failed, log(byDigest)).toBe(false);
    expect(step(byDigest, 'review').stdout).toContain(`orgform: applying the plan with the digest given, ${now}, for pull request #7.`);
    expect(acmeEmail()).toBe('finance@acme.example');
    expect(comments('<!-- orgform-apply -->')).toHaveLength(1);
    expect(comments('<!-- orgform-apply -->')[0]!.body).toContain('✅ **orgform apply: applied**');
  });

  it('never takes another bot’s or a person’s comment with the marker and the right digest for the review: nothing is applied', async () => {
    // The digest of exactly the plan that would be applied, in comments orgform did not write.
    const plan = await job.run({ comment: 'false' });
    const digest = plan.outputs.digest!;
    expect(digest).toMatch(DIGEST);
    const forged = `<!-- orgform-plan -->\n<!-- orgform-digest ${digest} -->\n**orgform plan:** 1 to change`;
    job.github.comments.push({ id: 2, body: forged, author: 'renovate[bot]' }, { id: 3, body: forged, author: 'User' });
    merged();
    const run = await applyMerge();
    expect(run.failed).toBe(true);
    expect(step(run, 'review').stdout).toContain("orgform: no reviewed plan (the pull request has no plan comment of orgform's (for this directory and these files)): this run only plans, and applies nothing.");
    expect(acmeEmail()).toBe('billing@acme.example');
    expect(job.github.comments.filter((c) => c.id === 2 || c.id === 3).map((c) => c.body)).toEqual([forged, forged]);
    const body = comments('<!-- orgform-apply -->')[0]!.body;
    expect(body).toContain("⛔ **orgform apply: not started.** No reviewed plan: the pull request has no plan comment of orgform's (for this directory and these files). Nothing was applied.");
    expect(body).toContain(`The plan now (digest \`${digest}\`), which nobody reviewed:`);
    // No page of a plan nobody may apply: its links lead to the run, whose log has it.
    expect(body).toContain('[the plan page](https://github.test/acme/config/actions/runs/99)');
    expect(body).not.toContain('#orgform-plan-page');
  });

  it('refuses a direct push: nothing applied, the job fails and says why; apply-unreviewed: true applies it', async () => {
    const pushed = await applyMerge();
    expect(pushed.failed).toBe(true);
    expect(pushed.outputs).toMatchObject({ exitcode: '2', 'pull-request': '', digest: '' });
    expect(runnerAnnotations(step(pushed, 'run').stdout)).toEqual([
      expect.objectContaining({ command: 'error', data: 'No reviewed plan: this commit was pushed directly: no merged pull request has it as its merge commit. Nothing was applied; the plan in the log is what would be.' }),
    ]);
    expect(step(pushed, 'report').stdout).toContain('orgform: no merged pull request to write the result on');
    expect(acmeEmail()).toBe('billing@acme.example');
    expect(writes()).toEqual([]);
    // Only a plan, which may not apply: no report page.
    expect(job.uploads).toEqual([]);
    expect(pushed.outputs['page-url']).toBe('');

    const allowed = await applyMerge({ 'apply-unreviewed': 'true' });
    expect(allowed.failed, log(allowed)).toBe(false);
    expect(acmeEmail()).toBe('finance@acme.example');
  });

  it('never takes a plan comment changed after the merge for the review: a plan job re-run on the merged pull request after a change by hand applies nothing', async () => {
    await planOnPullRequest();
    merged();
    await changeBillingByHand(job.emulator, 'org_acme', { billingEmail: 'hand@acme.example' });
    // Someone re-runs the pull request's plan job after the merge: the comment now holds a plan nobody reviewed, the change by hand undone in it.
    const rerun = await job.run({});
    expect(rerun.outputs.exitcode).toBe('2');
    expect(comments('<!-- orgform-plan -->')[0]!.body).toContain('hand@acme.example');
    const run = await applyMerge();
    expect(run.failed).toBe(true);
    expect(acmeEmail()).toBe('hand@acme.example');
    expect(step(run, 'review').stdout).toContain("orgform: no reviewed plan (orgform's plan comment on the pull request was changed after it was merged");
    expect(comments('<!-- orgform-apply -->')[0]!.body).toContain('⛔ **orgform apply: not started.** No reviewed plan');
  });

  it('never applies an old commit’s reviewed plan once a newer merge is on main: a re-run of the old apply after a revert applies nothing', async () => {
    // Pull request 7 sets acme's e-mail; it is reviewed, merged and applied.
    const merge7 = 'version: 1\norganisations:\n  acme:\n    billing:\n      billingEmail: finance@acme.example\n';
    await writeFile(join(job.workspace, 'orgs.yaml'), merge7);
    const reviewed = await planOnPullRequest();
    merged();
    expect((await applyMerge()).failed).toBe(false);
    expect(acmeEmail()).toBe('finance@acme.example');
    // A revert is merged and applied (by hand here): main now says acme's e-mail is billing@ again.
    await writeFile(join(job.workspace, 'orgs.yaml'), merge7.replace('finance@acme.example', 'billing@acme.example'));
    const revert = await job.run({ command: 'apply', 'apply-unreviewed': 'true' }, { eventName: 'push', event: { ref: 'refs/heads/main' }, sha: REVERT, env: RUN });
    expect(revert.failed, log(revert)).toBe(false);
    expect(acmeEmail()).toBe('billing@acme.example');

    // Someone re-runs the old apply of 7's merge: its checkout is 7's configuration, and its plan is again exactly the one reviewed.
    await writeFile(join(job.workspace, 'orgs.yaml'), merge7);
    job.github.changes.set(`${MERGE}...${REVERT}`, ['orgs.yaml']);
    const old = await applyMerge({}, { GITHUB_RUN_ATTEMPT: '3' }, { head: REVERT });
    expect(old.failed).toBe(true);
    expect(acmeEmail()).toBe('billing@acme.example');
    expect(step(old, 'review').stdout + step(old, 'review').stderr).toContain(`this commit, 5e1ec7e, is no longer the head of main, which is now ${REVERT.slice(0, 7)}, and the configuration changed since (orgs.yaml)`);
    expect(step(old, 'run').outputs).toEqual({});
    expect(reviewed).toMatch(DIGEST);
  });

  it('a failed apply writes on the pull request which changes failed and how to finish, and fails the job', async () => {
    await planOnPullRequest();
    merged();
    job.emulator.faults.add({ operation: 'updateBillingDetails', times: Infinity, fault: { kind: 'status', status: 422, body: JSON.stringify({ code: 'INVALID_VAT', message: 'the VAT number is not valid' }) } });
    const run = await applyMerge();
    expect(run.failed).toBe(true);
    const body = comments('<!-- orgform-apply -->')[0]!.body;
    expect(body).toMatch(/❌ \*\*orgform apply: failed\.\*\* 4 applied, 1 failed\./);
    expect(body).toMatch(/failed {2}organisations\.acme\.billing: .*HTTP 422/);
    expect(body).toContain('**To finish:** fix the cause the failures name, then re-run this job.');
  });
});

describe('action.yml: drift on a schedule', { timeout: 120_000 }, () => {
  const issues = () => job.github.issues;

  it('opens one issue while the service differs, updates it in place, writes an error into it, and closes it with a note once they match', async () => {
    const first = await job.run({ command: 'drift' }, { ...SCHEDULE, env: RUN });
    expect(first.failed, log(first)).toBe(false);
    expect(first.outputs).toMatchObject({ exitcode: '2', 'has-changes': 'true', digest: expect.stringMatching(DIGEST) });
    expect(issues()).toEqual([expect.objectContaining({ number: 1, state: 'open', title: 'orgform: the service differs from main', author: 'Bot' })]);
    expect(issues()[0]!.body).toMatch(/^<!-- orgform-drift -->\nThe Organisations service differs from the configuration on `main`/);
    expect(issues()[0]!.body).toContain('**orgform plan:** 2 to change, 2 to remove, 1 to accept');
    // The plan page of drift's plan, uploaded, and linked from the issue.
    expect(job.uploads.map((u) => u.inputs.name)).toEqual(['orgform-plan-page']);
    expect(job.uploads[0]!.page).toContain('"acme"');
    expect(issues()[0]!.body).toContain(`[the plan page](${artifactUrl(1)})`);
    expect(issues()[0]!.body).not.toContain('#orgform-plan-page');

    await changeBillingByHand(job.emulator, 'org_acme', { billingEmail: 'hand@acme.example' });
    const second = await job.run({ command: 'drift' }, { ...SCHEDULE, env: { ...RUN, GITHUB_RUN_ID: '100' } });
    expect(step(second, 'report').stdout).toContain('Drift issue #1 updated.');
    expect(issues()).toHaveLength(1);
    expect(issues()[0]!.body).toContain('hand@acme.example');

    job.emulator.faults.add({ operation: 'getOrganisations', times: Infinity, fault: { kind: 'status', status: 401 } });
    const failed = await job.run({ command: 'drift' }, { ...SCHEDULE, env: RUN });
    expect(failed.failed).toBe(true);
    expect(issues()).toEqual([expect.objectContaining({ number: 1, state: 'open', title: 'orgform: the drift check failed' })]);
    expect(issues()[0]!.body).toContain('The scheduled drift check failed (exit code 1)');
    expect(issues()[0]!.body).toContain('401');
    job.emulator.faults.clear();

    await job.run({ command: 'apply', 'apply-unreviewed': 'true' }, { eventName: 'push', event: { ref: 'refs/heads/main' }, env: RUN });
    const gone = await job.run({ command: 'drift' }, { ...SCHEDULE, env: RUN });
    expect(gone.failed, log(gone)).toBe(false);
    expect(gone.outputs).toMatchObject({ exitcode: '0', 'has-changes': 'false' });
    expect(issues()).toEqual([expect.objectContaining({ number: 1, state: 'closed', notes: [expect.stringMatching(/^No drift any more: the plan of `main` at fedcba9 has no changes/)] })]);
    expect(job.github.requests.filter((r) => r.startsWith('POST /repos/acme/config/issues') && !r.includes('/comments'))).toEqual(['POST /repos/acme/config/issues']);
  });
});
