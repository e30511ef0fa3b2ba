/**
 * The GitLab CI/CD component (templates/orgform.yml), included with inputs into a scratch project
 * and resolved by gitlab-ci-local as GitLab would: which jobs each pipeline runs, what the inputs
 * change, and the jobs' scripts run through bash against the emulator, GitLab's API faked on
 * 127.0.0.1 (the merge request notes, the managed Terraform state) and the release the jobs download
 * by another (test/support/component-job.ts). The apply of a merge and the drift job:
 * orgform-reviewed.test.ts.
 */
import { existsSync } from 'node:fs';
import { readFile, symlink, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Emulator } from '../../src/emulator/server.js';
import { componentProject, PACKAGE_VERSION, startComponentJobs, type ComponentJobs } from '../support/component-job.js';
import type { FakeForge } from '../support/fake-forges.js';
import type { FakeRelease } from '../support/fake-release.js';
import { gitlabCiLocal, listJobs, MERGE_REQUEST_PIPELINE, previewPipeline } from '../support/gitlab-ci.js';
import { codeQualityErrors, gitlabTerraformErrors } from '../support/report-schemas.js';
import { CHANGING_CONFIG, MATCHING_CONFIG, makeWorkspace } from '../support/workspace.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const BROKEN_CONFIG = 'version: 1\norganisations:\n  acme:\n    billing:\n      customerId: cus_1\n';
const project = componentProject;

// gitlab-ci-local takes a second or more a run, several runs a test.
describe('templates/orgform.yml: the jobs of each pipeline', { timeout: 120_000 }, () => {
  it('a merge request runs validate and plan; the default branch validate and apply; another branch nothing', async () => {
    const mergeRequest = await project([{}], { branch: 'feature' });
    expect(await listJobs(mergeRequest, MERGE_REQUEST_PIPELINE)).toEqual([
      { name: 'orgform-validate', stage: 'test', when: 'on_success' },
      { name: 'orgform-plan', stage: 'test', when: 'on_success' },
    ]);
    expect(await listJobs(mergeRequest)).toEqual([]);
    const main = await project([{}]);
    expect(await listJobs(main)).toEqual([
      { name: 'orgform-validate', stage: 'test', when: 'on_success' },
      { name: 'orgform-apply', stage: 'deploy', when: 'on_success' },
    ]);
  });

  it('included twice with two prefixes, runs two sets of jobs side by side; apply-when manual and the stages are the inputs’', async () => {
    const cwd = await project([
      { 'job-prefix': 'orgs-eu', 'working-directory': 'eu', 'state-name': 'eu', 'resource-group': 'orgs-eu', 'apply-when': 'manual', 'apply-stage': 'test' },
      { 'job-prefix': 'orgs-us', 'working-directory': 'us', 'state-name': 'us', 'resource-group': 'orgs-us' },
    ]);
    expect(await listJobs(cwd)).toEqual([
      { name: 'orgs-eu-validate', stage: 'test', when: 'on_success' },
      { name: 'orgs-eu-apply', stage: 'test', when: 'manual' },
      { name: 'orgs-us-validate', stage: 'test', when: 'on_success' },
      { name: 'orgs-us-apply', stage: 'deploy', when: 'on_success' },
    ]);
    const pipeline = await previewPipeline(cwd);
    expect(pipeline['orgs-eu-apply']).toMatchObject({ resource_group: 'orgs-eu', interruptible: false, variables: { ORGFORM_WORKDIR: 'eu' } });
    expect(pipeline['orgs-us-apply'].variables.ORGFORM_STATE).toBe('${CI_API_V4_URL}/projects/${CI_PROJECT_ID}/terraform/state/us');
  });

  it('keeps the journal in GitLab-managed Terraform state, read and written with the job’s own token', async () => {
    const pipeline = await previewPipeline(await project([{}]));
    for (const job of ['orgform-plan', 'orgform-apply']) {
      expect(pipeline[job].variables).toMatchObject({
        ORGFORM_STATE: '${CI_API_V4_URL}/projects/${CI_PROJECT_ID}/terraform/state/orgform',
        ORGFORM_STATE_USERNAME: 'gitlab-ci-token',
        ORGFORM_STATE_PASSWORD: '${CI_JOB_TOKEN}',
      });
    }
    expect(pipeline['orgform-validate'].variables.ORGFORM_STATE).toBeUndefined();
  });

  it('runs this release of orgform by default, from GitHub’s releases: the input’s default is package.json’s version', async () => {
    const pipeline = await previewPipeline(await project([{}]));
    expect(pipeline['orgform-plan'].variables).toMatchObject({ ORGFORM_VERSION: PACKAGE_VERSION, ORGFORM_SHA256: '', ORGFORM_RELEASES_URL: 'https://github.com/orgform/orgform/releases/download' });
    const scripts = JSON.stringify(['orgform-validate', 'orgform-plan', 'orgform-apply'].map((name) => [pipeline[name].before_script, pipeline[name].script]));
    expect(scripts).not.toMatch(/\bnpm\b|\bnpx\b|yarn|pnpm/);
  });

  it('refuses an input of the wrong form, naming it', async () => {
    for (const [inputs, message] of [
      [{ 'max-changes': 'ten' }, '`max-changes` input: `ten` does not match required regex: ^[0-9]*$'],
      [{ 'max-changes': 50 }, '`max-changes` input: provided value is not a string'],
      [{ 'apply-when': 'always' }, '`apply-when` input: `always` cannot be used because it is not in the list of allowed options'],
      [{ 'job-prefix': 'Bad Prefix' }, '`job-prefix` input: `Bad Prefix` does not match required regex'],
      [{ version: '0.x' }, '`version` input: `0.x` does not match required regex'],
      [{ sha256: 'abc' }, '`sha256` input: `abc` does not match required regex'],
    ] as const) {
      const result = await gitlabCiLocal(await project([inputs]), ['--list', '--no-json-schema-validation']);
      expect(result.code).not.toBe(0);
      expect(result.stderr + result.stdout).toContain(message);
    }
  });
});

describe('templates/orgform.yml: the jobs, run', { timeout: 120_000 }, () => {
  let jobs: ComponentJobs;
  let emulator: Emulator;
  let gitlab: FakeForge;
  let release: FakeRelease;
  beforeEach(async () => {
    jobs = await startComponentJobs({ comments: [{ id: 1, body: 'Please double-check acme', author: 3 }] });
    ({ emulator, gitlab, release } = jobs);
  });
  afterEach(async () => jobs?.close());

  /** The job as GitLab would run it, with `project` over the example's CI/CD variables. */
  const runComponentJob = (cwd: string, name: string, project: Record<string, string> = {}, commit?: string) => jobs.run(cwd, name, project, commit === undefined ? {} : { CI_COMMIT_SHA: commit });

  it('refuses a release tarball that its SHA256SUMS, or the sha256 input, does not name, and runs nothing', async () => {
    const cwd = await project([{}], { branch: 'feature' });
    release.tamper();
    const tampered = await runComponentJob(cwd, 'orgform-plan');
    expect(tampered.code).toBe(1);
    expect(tampered.stderr).toContain(`orgform: orgform-${PACKAGE_VERSION}.tgz is not the release that SHA256SUMS (and the sha256 input) name, so it was not run.`);
    expect(existsSync(join(cwd, 'plan.md'))).toBe(false);
    expect(gitlab.requests).toEqual([]);

    const pinned = await project([{ sha256: 'a'.repeat(64) }], { branch: 'feature' });
    const wrongPin = await runComponentJob(pinned, 'orgform-validate');
    expect(wrongPin.code).toBe(1);
    expect(wrongPin.stderr).toContain('is not the release that SHA256SUMS (and the sha256 input) name');
  });

  it('with the sha256 input of the release, runs it', async () => {
    const cwd = await project([{ sha256: release.sha256 }]);
    const result = await runComponentJob(cwd, 'orgform-validate');
    expect(result.code).toBe(0);
  });

  it('plan reads the service with ORGFORM_PLAN_TOKEN, never ORGFORM_TOKEN; apply writes with ORGFORM_TOKEN', async () => {
    const cwd = await project([{}], { branch: 'feature' });
    const plan = await runComponentJob(cwd, 'orgform-plan', { ORGFORM_TOKEN: 'write-token-plan-must-not-use' });
    expect(plan.code).toBe(0);
    expect(await readFile(join(cwd, 'plan.md'), 'utf8')).toMatch(/^\*\*orgform plan:\*\* 2 to change/);
    const apply = await runComponentJob(cwd, 'orgform-apply', { ORGFORM_PLAN_TOKEN: 'read-token-apply-must-not-use', ORGFORM_APPLY_UNREVIEWED: 'true' });
    expect(apply.code).toBe(0);
    expect(apply.stdout).toContain('orgform: applied 5 changes.');
    // The apply report, kept as the job's artifact.
    expect(await readFile(join(cwd, 'apply.html'), 'utf8')).toContain('<p><strong>Complete: 5 changes applied, 0 already done.</strong></p>');
  });

  it('plan without ORGFORM_PLAN_TOKEN says that it uses ORGFORM_TOKEN, which a merge request should not hold', async () => {
    const cwd = await project([{}], { branch: 'feature' });
    const plan = await runComponentJob(cwd, 'orgform-plan', { ORGFORM_PLAN_TOKEN: '' });
    expect(plan.code).toBe(0);
    expect(plan.stderr).toContain('orgform: ORGFORM_PLAN_TOKEN is not set, so plan uses ORGFORM_TOKEN, which a merge request\'s jobs should not hold');
  });

  it('validate writes an empty Code Quality report for a valid file, and a blocker at the line of a problem, and fails', async () => {
    const cwd = await project([{}]);
    const valid = await runComponentJob(cwd, 'orgform-validate');
    expect(valid.code).toBe(0);
    expect(await readFile(join(cwd, 'gl-code-quality-report.json'), 'utf8')).toBe('[]\n');
    expect(release.requests).toEqual([`GET /v${PACKAGE_VERSION}/orgform-${PACKAGE_VERSION}.tgz`, `GET /v${PACKAGE_VERSION}/SHA256SUMS`]);
    expect(valid.stdout).toContain(`orgform-${PACKAGE_VERSION}.tgz: OK`);

    await writeFile(join(cwd, 'orgs.yaml'), BROKEN_CONFIG);
    const invalid = await runComponentJob(cwd, 'orgform-validate');
    expect(invalid.code).toBe(1);
    const report = await readFile(join(cwd, 'gl-code-quality-report.json'), 'utf8');
    expect(codeQualityErrors(report)).toEqual([]);
    expect(JSON.parse(report)).toEqual([expect.objectContaining({ severity: 'blocker', location: { path: 'orgs.yaml', lines: { begin: 5 } } })]);
  });

  it('plan writes the Markdown plan into one merge request note, posted once then updated, with the Terraform widget’s counts, and passes with changes', async () => {
    const cwd = await project([{}], { branch: 'feature' });
    const first = await runComponentJob(cwd, 'orgform-plan');
    expect(first.stderr).toContain('Saved the plan to');
    expect(first.code).toBe(0);
    const second = await runComponentJob(cwd, 'orgform-plan', {}, '89abcdef01234567');
    expect(second.code).toBe(0);

    const markdown = await readFile(join(cwd, 'plan.md'), 'utf8');
    expect(markdown).toMatch(/^\*\*orgform plan:\*\* 2 to change, 2 to remove, 1 to accept/);
    expect(second.stdout).toContain(markdown);
    expect(existsSync(join(cwd, 'plan.bin'))).toBe(true);
    const counts = await readFile(join(cwd, 'plan-counts.json'), 'utf8');
    expect(gitlabTerraformErrors(counts)).toEqual([]);
    expect(JSON.parse(counts)).toEqual({ create: 1, update: 2, delete: 2 });
    expect(gitlab.comments.map((c) => c.body.split('\n')[0])).toEqual(['Please double-check acme', '<!-- orgform-plan orgform-plan -->']);
    // The plan's digest marker, the last line of plan.md, right after the note's own marker: where the apply reads it.
    const digestMarker = markdown.trimEnd().split('\n').at(-1)!;
    expect(digestMarker).toMatch(/^<!-- orgform-digest sha256:[0-9a-f]{64} [A-Za-z0-9_-]+ -->$/);
    const shown = markdown.trimEnd().split('\n').slice(0, -1).join('\n').trimEnd();
    expect(gitlab.comments[1]!.body).toBe(`<!-- orgform-plan orgform-plan -->\n${digestMarker}\n${shown}\n\n<sub>orgform plan for 89abcde; updated on every push.</sub>\n`);
    expect(gitlab.requests.filter((r) => r.includes('/notes') && !r.startsWith('GET'))).toEqual([
      'POST /api/v4/projects/42/merge_requests/7/notes',
      'PUT /api/v4/projects/42/merge_requests/7/notes/101',
    ]);
  });

  it('plan writes the plan page beside the plan, exposes it in the merge request, and the note links it', async () => {
    const cwd = await project([{}], { branch: 'feature' });
    const plan = await runComponentJob(cwd, 'orgform-plan');
    expect(plan.code).toBe(0);
    const page = await readFile(join(cwd, 'plan.html'), 'utf8');
    expect(page).toMatch(/^<!doctype html>[^]*<meta http-equiv="Content-Security-Policy" content="default-src &#39;none&#39;;/);
    expect(page).toContain('"acme"');
    expect(gitlab.comments[1]!.body).toContain('[the plan page](https://gitlab.example/acme/config/-/jobs/1234/artifacts/file/plan.html)');
    expect(gitlab.comments[1]!.body).not.toContain('#orgform-plan-page');
    const pipeline = await previewPipeline(cwd);
    expect(pipeline['orgform-plan'].artifacts).toMatchObject({ expose_as: 'orgform plan', paths: ['plan.html', 'plan.md', 'plan.bin'] });
  });

  it('plan on a broken configuration writes the error into the note, then fails', async () => {
    const cwd = await project([{}], { branch: 'feature', files: { 'orgs.yaml': 'version: 2\n' } });
    const result = await runComponentJob(cwd, 'orgform-plan');
    expect(result.code).toBe(1);
    expect(gitlab.comments[1]!.body).toContain('**orgform plan failed** (exit code 1)');
    expect(gitlab.comments[1]!.body).toContain('unsupported version 2');
  });

  it('plan without GITLAB_API_TOKEN, or with note: false, writes no note and still passes', async () => {
    const cwd = await project([{}], { branch: 'feature' });
    const noToken = await runComponentJob(cwd, 'orgform-plan', { GITLAB_API_TOKEN: '' });
    expect(noToken.code).toBe(0);
    expect(noToken.stderr).toContain('GITLAB_API_TOKEN is not set, so no note');
    const off = await project([{ note: false }], { branch: 'feature' });
    expect((await runComponentJob(off, 'orgform-plan')).code).toBe(0);
    expect(gitlab.requests.filter((r) => r.includes('/notes'))).toEqual([]);
  });

  it('files and args reach plan and apply as arguments', async () => {
    // orgs.yaml matches the service; teams/a.yaml has five changes, one of them globex's.
    const cwd = await project([{ files: 'teams/a.yaml', args: '--target globex' }], { branch: 'feature', files: { 'orgs.yaml': MATCHING_CONFIG, 'teams/a.yaml': CHANGING_CONFIG } });
    const plan = await runComponentJob(cwd, 'orgform-plan');
    expect(plan.code).toBe(0);
    expect(await readFile(join(cwd, 'plan.md'), 'utf8')).toMatch(/^\*\*orgform plan:\*\* 0 to change, 0 to remove, 1 to accept/);
    const apply = await runComponentJob(cwd, 'orgform-apply', { ORGFORM_APPLY_UNREVIEWED: 'true' });
    expect(apply.stdout).toContain('orgform: applied 1 change.');
    expect(apply.code).toBe(0);
  });

  it('over max-changes, plan fails after writing its note, and apply refuses and changes nothing', async () => {
    const cwd = await project([{ 'max-changes': '2' }], { branch: 'feature' });
    const plan = await runComponentJob(cwd, 'orgform-plan');
    expect(plan.code).toBe(1);
    expect(gitlab.comments[1]!.body).toContain('**orgform plan:** 2 to change, 2 to remove, 1 to accept');
    const apply = await runComponentJob(cwd, 'orgform-apply', { ORGFORM_APPLY_UNREVIEWED: 'true' });
    expect(apply.code).toBe(1);
    expect(apply.stdout + apply.stderr).toMatch(/max-changes/);
    expect(emulator.store.dump().organisations.find((o) => o.id === 'org_acme')?.billing?.billingEmail).toBe('billing@acme.example');
  });

  it('takes no option from a file name of the merge request: the files input is not expanded as a wildcard, so a name holding --base-url sends the token nowhere', async () => {
    const stolen: string[] = [];
    const evil = createServer((req, res) => {
      stolen.push(String(req.headers.authorization));
      res.writeHead(500).end();
    });
    await new Promise<void>((resolve) => evil.listen(0, '127.0.0.1', resolve));
    try {
      const port = (evil.address() as AddressInfo).port;
      // A files input written as a wildcard; the merge request adds a file whose name, split on its
      // spaces, is a file of its own, then options (no "/" can be in a name: http:HOST:PORT is a URL).
      const cwd = await project([{ files: 'teams/*.yaml' }], {
        branch: 'feature',
        files: { 'teams/a.yaml': CHANGING_CONFIG, '.yaml': 'version: 1\norganisations: {}\n', [`teams/a.yaml --base-url=http:127.0.0.1:${port} -f.yaml`]: '' },
      });
      const results = [await runComponentJob(cwd, 'orgform-plan'), await runComponentJob(cwd, 'orgform-validate')];
      expect(stolen).toEqual([]);
      for (const result of results) {
        expect(result.code).toBe(1);
        expect(result.stderr).toContain('teams/*.yaml');
      }
      expect(emulator.counters.total).toBe(0);
    } finally {
      await new Promise((resolve) => evil.close(resolve));
    }
  });

  it("reads and writes nothing through links the merge request planted at plan.md and plan.err: the job's environment stays out of the log and the note", async () => {
    const cwd = await project([{}], { branch: 'feature', files: { 'orgs.yaml': 'version: 2\n' } });
    const outside = await makeWorkspace({ 'victim.txt': 'untouched\n' });
    // The job's own environment (GITLAB_API_TOKEN, CI_JOB_TOKEN, ORGFORM_PLAN_TOKEN in it), and a
    // file of the runner that a redirect would overwrite.
    await symlink('/proc/self/environ', join(cwd, 'plan.err'));
    await symlink(join(outside, 'victim.txt'), join(cwd, 'plan.md'));
    await symlink(join(outside, 'victim.txt'), join(cwd, 'plan.html'));
    const result = await runComponentJob(cwd, 'orgform-plan');
    expect(result.code).toBe(1);
    expect(await readFile(join(outside, 'victim.txt'), 'utf8')).toBe('untouched\n');
    for (const text of [result.stdout, result.stderr, ...gitlab.comments.map((c) => c.body)]) {
      for (const secret of ['glpat-note', 'job-token', 'ORGFORM_PLAN_TOKEN=']) expect(text).not.toContain(secret);
    }
    expect(gitlab.comments[1]!.body).toContain('unsupported version 2');
  });

  it('apply applies the configuration from the working directory, keeps the journal in GitLab-managed Terraform state, and the next plan finds nothing to do', async () => {
    const cwd = await project([{ 'working-directory': 'orgs' }], { files: { 'orgs/orgs.yaml': CHANGING_CONFIG } });
    const applied = await runComponentJob(cwd, 'orgform-apply', { ORGFORM_APPLY_UNREVIEWED: 'true' });
    expect(applied.stdout).toContain('orgform: applied 5 changes.');
    expect(applied.code).toBe(0);
    expect(emulator.store.dump().organisations.find((o) => o.id === 'org_acme')?.billing?.billingEmail).toBe('finance@acme.example');

    // The journal went to the project's GitLab-managed Terraform state, with the job token, and not to a file.
    expect(gitlab.requests.filter((r) => r.includes('/terraform/state/'))).toEqual(expect.arrayContaining(['POST /api/v4/projects/42/terraform/state/orgform/lock']));
    expect(JSON.parse(gitlab.states.get('orgform')?.text ?? '{}')).toMatchObject({ serial: expect.any(Number) });
    expect(existsSync(join(cwd, 'orgs', '.orgform'))).toBe(false);

    const planned = await runComponentJob(cwd, 'orgform-plan');
    expect(planned.code).toBe(0);
    expect(await readFile(join(cwd, 'plan.md'), 'utf8')).toContain('No changes');
  });
});
