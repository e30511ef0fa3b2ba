/**
 * The GitLab component after a merge and on a schedule, its jobs run as GitLab would
 * (test/support/component-job.ts) against the emulator and a fake GitLab API: the apply job
 * (pipeline/gitlab-apply.mjs) applies only the plan whose digest the plan job's note on the merged
 * merge request holds, and writes one result note there; the drift job (pipeline/gitlab-drift.mjs)
 * keeps one issue while the service differs. Each apply case first runs the merge request's plan
 * job, so that the note read back is the one the component wrote.
 */
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { componentProject, startComponentJobs, type ComponentJobs } from '../support/component-job.js';
import { changeBillingByHand } from '../support/emulator-workspace.js';
import { listJobs } from '../support/gitlab-ci.js';

const MERGE = '5e1ec7ed5e1ec7ed5e1ec7ed5e1ec7ed5e1ec7ed';
const REVERT = 'feedfacefeedfacefeedfacefeedfacefeedface';
/** What GitLab sets for a job of a pipeline on main for MERGE (no merge request there). */
const ON_MAIN = { CI_COMMIT_SHA: MERGE, CI_COMMIT_BRANCH: 'main', CI_DEFAULT_BRANCH: 'main', CI_MERGE_REQUEST_IID: '', CI_JOB_URL: 'https://gitlab.test/acme/config/-/jobs/77' };
const RESULT = '<!-- orgform-apply orgform-plan -->';
const DIGEST = /^sha256:[0-9a-f]{64}$/;

let jobs: ComponentJobs;
beforeEach(async () => {
  jobs = await startComponentJobs({ comments: [{ id: 1, body: 'Please double-check acme', author: 3 }] });
});
afterEach(async () => jobs?.close());

const acmeEmail = () => jobs.emulator.store.dump().organisations.find((o) => o.id === 'org_acme')?.billing?.billingEmail;
const notes = (marker: string) => jobs.gitlab.comments.filter((c) => c.body.startsWith(`${marker}\n`));

/** The merge request's plan job: its note holds the plan's digest on its second line. */
async function planOnMergeRequest(cwd: string): Promise<string> {
  const plan = await jobs.run(cwd, 'orgform-plan');
  expect(plan.code, plan.stderr).toBe(0);
  const digest = /^<!-- orgform-digest (sha256:[0-9a-f]{64})/.exec(notes('<!-- orgform-plan orgform-plan -->')[0]!.body.split('\n')[1]!)?.[1];
  expect(digest).toMatch(DIGEST);
  return digest!;
}

/** GitLab's answer for MERGE: merge request 7, merged into main with it as its merge commit, now. */
function merged(): void {
  jobs.gitlab.pullsOf.set(MERGE, [
    { iid: 7, state: 'merged', target_branch: 'main', merge_commit_sha: MERGE, squash_commit_sha: null, sha: 'abc1234def567890', merged_at: new Date().toISOString(), web_url: 'https://gitlab.test/acme/config/-/merge_requests/7' },
  ]);
}

const applyMerge = (cwd: string, project: Record<string, string> = {}, predefined: Record<string, string> = {}) => jobs.run(cwd, 'orgform-apply', project, { ...ON_MAIN, ...predefined });

describe('templates/orgform.yml: the apply job, only the reviewed plan', { timeout: 120_000 }, () => {
  it('applies the plan whose digest the merged merge request’s plan note holds, and writes the result there once: a re-run updates it', async () => {
    const cwd = await componentProject([{}]);
    const digest = await planOnMergeRequest(cwd);
    merged();
    const applied = await applyMerge(cwd);
    expect(applied.code, applied.stderr).toBe(0);
    expect(applied.stdout).toContain(`orgform: applying the reviewed plan, ${digest} of merge request !7.`);
    expect(applied.stdout).toContain('orgform: applied 5 changes.');
    expect(acmeEmail()).toBe('finance@acme.example');
    expect(notes(RESULT).map((n) => n.body)).toEqual([`${RESULT}\n✅ **orgform apply: applied** the reviewed plan: 5 applied.\n\n<sub>orgform apply of 5e1ec7e: [the run](https://gitlab.test/acme/config/-/jobs/77); a re-run updates this comment.</sub>\n`]);
    // The apply report (ORGFORM_APPLY_REPORT), the job's artifact.
    expect(await readFile(join(cwd, 'apply.html'), 'utf8')).toContain('<p><strong>Complete: 5 changes applied, 0 already done.</strong></p>');

    const again = await applyMerge(cwd, {}, { CI_JOB_URL: 'https://gitlab.test/acme/config/-/jobs/78' });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toMatch(/orgform: result note \d+ updated on merge request !7\./);
    expect(notes(RESULT)).toHaveLength(1);
    expect(notes(RESULT)[0]!.body).toContain('✅ **orgform apply: already done.**');
    expect(jobs.gitlab.comments).toHaveLength(3);
  });

  it('applies nothing when the service was changed by hand after the review, and writes on the merge request what differs and how to go on; ORGFORM_EXPECT_DIGEST then applies that plan', async () => {
    const cwd = await componentProject([{}]);
    const reviewed = await planOnMergeRequest(cwd);
    await changeBillingByHand(jobs.emulator, 'org_acme', { billingEmail: 'hand@acme.example' });
    const before = jobs.emulator.store.dump();
    merged();
    const refused = await applyMerge(cwd);
    expect(refused.code).toBe(1);
    expect(jobs.emulator.store.dump()).toEqual(before);
    expect(await readFile(join(cwd, 'apply.html'), 'utf8')).toContain('<strong>Why apply stopped:</strong> The plan now is not the one reviewed');
    const body = notes(RESULT)[0]!.body;
    expect(body).toContain('⛔ **orgform apply: refused.** The plan now is not the plan reviewed on this merge request. Nothing was applied.');
    expect(body).toContain(`Reviewed: \`${reviewed}\``);
    expect(body).toContain('billingEmail, as read when planned: "billing@acme.example" when reviewed, "hand@acme.example" now');
    const now = /Now: `(sha256:[0-9a-f]{64})`/.exec(body)?.[1];
    expect(body).toContain(`run a pipeline for \`main\` by hand (Build › Pipelines › Run pipeline) with the variable \`ORGFORM_EXPECT_DIGEST\` set to \`${now}\``);

    // A pipeline run by hand with that digest (a pipeline variable: it wins over the job's).
    const byDigest = await applyMerge(cwd, { ORGFORM_EXPECT_DIGEST: now! });
    expect(byDigest.code, byDigest.stderr).toBe(0);
    expect(byDigest.stdout).toContain(`orgform: applying the plan with the digest given, ${now} of merge request !7.`);
    expect(acmeEmail()).toBe('finance@acme.example');
    expect(notes(RESULT)).toHaveLength(1);
  });

  it('never takes another user’s note, nor a system note, with the marker and the right digest for the review: nothing is applied', async () => {
    const cwd = await componentProject([{}]);
    // The digest of exactly the plan that would be applied, in notes the token's user did not write.
    const digest = await planOnMergeRequest(cwd);
    const ours = jobs.gitlab.comments.findIndex((c) => c.body.startsWith('<!-- orgform-plan orgform-plan -->\n'));
    const forged = jobs.gitlab.comments[ours]!.body;
    jobs.gitlab.comments.splice(ours, 1, { id: 50, body: forged, author: 3 }, { id: 51, body: forged, author: 9, system: true });
    merged();
    const run = await applyMerge(cwd);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("orgform: no reviewed plan (the merge request has no plan comment of orgform's (for this directory and these files)): this job only plans, and applies nothing.");
    expect(acmeEmail()).toBe('billing@acme.example');
    expect(notes(RESULT)[0]!.body).toContain(`The plan now (digest \`${digest}\`), which nobody reviewed:`);
    // No page of a plan nobody may apply: its links lead to the job, whose log has it.
    expect(notes(RESULT)[0]!.body).toContain('[the plan page](https://gitlab.test/acme/config/-/jobs/77)');
    expect(notes(RESULT)[0]!.body).not.toContain('#orgform-plan-page');
  });

  it('never takes a plan note changed after the merge for the review: the plan job retried on the merged merge request after a change by hand applies nothing', async () => {
    const cwd = await componentProject([{}]);
    await planOnMergeRequest(cwd);
    merged();
    await changeBillingByHand(jobs.emulator, 'org_acme', { billingEmail: 'hand@acme.example' });
    expect((await jobs.run(cwd, 'orgform-plan')).code).toBe(0);
    expect(notes('<!-- orgform-plan orgform-plan -->')[0]!.body).toContain('hand@acme.example');
    const run = await applyMerge(cwd);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("orgform: no reviewed plan (orgform's plan comment on the merge request was changed after it was merged");
    expect(acmeEmail()).toBe('hand@acme.example');
  });

  it('never applies an old commit’s reviewed plan once a newer merge is on main: a retry of the old apply job after a revert applies nothing', async () => {
    const merge7 = 'version: 1\norganisations:\n  acme:\n    billing:\n      billingEmail: finance@acme.example\n';
    const cwd = await componentProject([{}], { files: { 'orgs.yaml': merge7 } });
    await planOnMergeRequest(cwd);
    merged();
    expect((await applyMerge(cwd)).code).toBe(0);
    expect(acmeEmail()).toBe('finance@acme.example');
    // A revert is merged and applied (a pipeline run by hand here): main says billing@ again.
    await writeFile(join(cwd, 'orgs.yaml'), merge7.replace('finance@acme.example', 'billing@acme.example'));
    expect((await applyMerge(cwd, { ORGFORM_APPLY_UNREVIEWED: 'true' }, { CI_COMMIT_SHA: REVERT })).code).toBe(0);
    expect(acmeEmail()).toBe('billing@acme.example');

    // The old pipeline's apply job retried: 7's checkout, whose plan is again exactly the one reviewed.
    await writeFile(join(cwd, 'orgs.yaml'), merge7);
    jobs.gitlab.changes.set(`${MERGE}...${REVERT}`, ['orgs.yaml']);
    const old = await jobs.run(cwd, 'orgform-apply', {}, ON_MAIN, REVERT);
    expect(old.code).toBe(1);
    expect(old.stderr).toContain(`orgform: this commit, 5e1ec7e, is no longer the head of main, which is now ${REVERT.slice(0, 7)}, and the configuration changed since (orgs.yaml)`);
    expect(acmeEmail()).toBe('billing@acme.example');
  });

  it('refuses a direct push: nothing applied, no note, the job fails saying why; ORGFORM_APPLY_UNREVIEWED=true applies it', async () => {
    const cwd = await componentProject([{}]);
    const pushed = await applyMerge(cwd);
    expect(pushed.code).toBe(1);
    expect(pushed.stderr).toContain('orgform: no reviewed plan (this commit was pushed directly: no merged merge request has it as its merge commit): this job only plans, and applies nothing.');
    expect(pushed.stdout).toContain('**orgform plan:** 2 to change, 2 to remove, 1 to accept');
    expect(acmeEmail()).toBe('billing@acme.example');
    expect(jobs.gitlab.requests.filter((r) => !r.startsWith('GET') && r.includes('/notes'))).toEqual([]);
    // Only a plan, which may not apply: no report page.
    expect(existsSync(join(cwd, 'apply.html'))).toBe(false);

    const allowed = await applyMerge(cwd, { ORGFORM_APPLY_UNREVIEWED: 'true' });
    expect(allowed.code, allowed.stderr).toBe(0);
    expect(allowed.stderr).toContain('orgform: ORGFORM_APPLY_UNREVIEWED is true: a fresh plan is applied without a reviewed plan to compare it with.');
    expect(acmeEmail()).toBe('finance@acme.example');
  });
});

describe('templates/orgform.yml: the drift job', { timeout: 120_000 }, () => {
  it('runs alone in a scheduled pipeline of the default branch, and not at all with drift-when: never', async () => {
    const schedule = ['--variable', 'CI_PIPELINE_SOURCE=schedule'];
    expect(await listJobs(await componentProject([{}]), schedule)).toEqual([{ name: 'orgform-drift', stage: 'test', when: 'on_success' }]);
    expect(await listJobs(await componentProject([{ 'drift-when': 'never' }]), schedule)).toEqual([]);
  });

  it('opens one issue while the service differs, updates it in place, writes an error into it, and closes it with a note once they match', async () => {
    const cwd = await componentProject([{}]);
    const issues = () => jobs.gitlab.issues;
    const first = await jobs.run(cwd, 'orgform-drift', {}, ON_MAIN);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toContain('orgform: drift issue #1 opened.');
    expect(issues()).toEqual([expect.objectContaining({ number: 1, state: 'open', title: 'orgform: the service differs from main', author: 9 })]);
    expect(issues()[0]!.body).toMatch(/^<!-- orgform-drift orgform-drift -->\nThe Organisations service differs from the configuration on `main`/);
    // The plan page, the job's artifact, linked from the issue.
    expect(await readFile(join(cwd, 'plan.html'), 'utf8')).toContain('"acme"');
    expect(issues()[0]!.body).toContain('[the plan page](https://gitlab.test/acme/config/-/jobs/77/artifacts/file/plan.html)');
    expect(issues()[0]!.body).not.toContain('#orgform-plan-page');

    await changeBillingByHand(jobs.emulator, 'org_acme', { billingEmail: 'hand@acme.example' });
    expect((await jobs.run(cwd, 'orgform-drift', {}, ON_MAIN)).stdout).toContain('orgform: drift issue #1 updated.');
    expect(issues()).toHaveLength(1);
    expect(issues()[0]!.body).toContain('hand@acme.example');

    jobs.emulator.faults.add({ operation: 'getOrganisations', times: Infinity, fault: { kind: 'status', status: 401 } });
    const failed = await jobs.run(cwd, 'orgform-drift', {}, ON_MAIN);
    expect(failed.code).toBe(1);
    expect(issues()).toEqual([expect.objectContaining({ number: 1, state: 'open', title: 'orgform: the drift check failed' })]);
    expect(issues()[0]!.body).toContain('401');
    jobs.emulator.faults.clear();

    expect((await applyMerge(cwd, { ORGFORM_APPLY_UNREVIEWED: 'true' })).code).toBe(0);
    const gone = await jobs.run(cwd, 'orgform-drift', {}, ON_MAIN);
    expect(gone.code, gone.stderr).toBe(0);
    expect(issues()).toEqual([expect.objectContaining({ number: 1, state: 'closed', notes: [expect.stringMatching(/^No drift any more: the plan of `main` at 5e1ec7e has no changes/)] })]);
  });
});
