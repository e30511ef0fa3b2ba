/**
 * The pipeline examples (examples/github-actions/orgform.yml, examples/gitlab-ci.yml): the
 * triggers, permissions and guards they promise, that they pin this release of the Action and the
 * component, and that they run: the GitHub example's orgform step through this repository's
 * action.yml (test/support/composite-action.ts) against the emulator and a fake GitHub API, and the
 * GitLab example's pipelines listed by gitlab-ci-local. The Action and the component are tested on
 * their own in test/action/ and test/templates/; validators.test.ts runs the real validators.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseDocument } from 'yaml';
import type { Emulator } from '../../src/emulator/server.js';
import { startActionJob, type ActionJob } from '../support/action-job.js';
import { runCompositeAction } from '../support/composite-action.js';
import type { FakeForge } from '../support/fake-forges.js';
import type { FakeRelease } from '../support/fake-release.js';
import { checkoutProblems, pinningProblems, splitCredentialProblems } from '../support/workflow-checks.js';
import { gitlabProject, listJobs, MERGE_REQUEST_PIPELINE, previewPipeline } from '../support/gitlab-ci.js';
import { CHANGING_CONFIG, makeWorkspace } from '../support/workspace.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const GITHUB_WORKFLOW = join(ROOT, 'examples', 'github-actions', 'orgform.yml');
const GITHUB_DRIFT_WORKFLOW = join(ROOT, 'examples', 'github-actions', 'orgform-drift.yml');
const MERGE = '5e1ec7ed5e1ec7ed5e1ec7ed5e1ec7ed5e1ec7ed';
const GITLAB_PIPELINE = join(ROOT, 'examples', 'gitlab-ci.yml');
const VERSION = (JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

async function readYaml(path: string): Promise<Json> {
  const doc = parseDocument(await readFile(path, 'utf8'));
  expect(doc.errors).toEqual([]);
  expect(doc.warnings).toEqual([]);
  return doc.toJS() as Json;
}

const orgformStep = (workflow: Json, job: string): Json => (workflow.jobs[job].steps as Json[]).find((s) => String(s.uses).startsWith('orgform/orgform@'))!;

// ---------------------------------------------------------------------------------------------
// GitHub Actions

describe('examples/github-actions/orgform.yml', () => {
  it('is at most 50 lines: plan on pull requests and apply on pushes to main, when orgs.yaml or the workflow changes, through this release of the action; by hand, with a digest or apply-unreviewed', async () => {
    const text = await readFile(GITHUB_WORKFLOW, 'utf8');
    expect(text.trimEnd().split('\n').length).toBeLessThanOrEqual(50);
    const workflow = await readYaml(GITHUB_WORKFLOW);
    const paths = ['orgs.yaml', '.github/workflows/orgform.yml'];
    expect(workflow.on).toMatchObject({ pull_request: { paths }, push: { branches: ['main'], paths } });
    expect(Object.keys(workflow.on.workflow_dispatch.inputs)).toEqual(['digest', 'apply-unreviewed']);
    expect(workflow.on.workflow_dispatch.inputs['apply-unreviewed']).toMatchObject({ type: 'boolean', default: false });
    expect(workflow.jobs.plan.if).toBe("github.event_name == 'pull_request'");
    expect(workflow.jobs.apply.if).toBe("github.event_name == 'push' || github.event_name == 'workflow_dispatch'");
    expect(orgformStep(workflow, 'plan')).toMatchObject({ uses: `orgform/orgform@v${VERSION}`, with: { command: 'plan' } });
    expect(orgformStep(workflow, 'apply')).toMatchObject({
      uses: `orgform/orgform@v${VERSION}`,
      with: { command: 'apply', 'max-changes': 50, 'expect-digest': '${{ inputs.digest }}', 'apply-unreviewed': '${{ inputs.apply-unreviewed }}' },
    });
  });

  it('pins every action by commit with its tag as the comment (orgform’s own: this release’s tag, stamped with its commit at release), and checks out without keeping credentials', async () => {
    const text = await readFile(GITHUB_WORKFLOW, 'utf8');
    expect(pinningProblems(text, `v${VERSION}`)).toEqual([]);
    expect(pinningProblems(text)).toEqual([`not pinned by a commit SHA: - uses: orgform/orgform@v${VERSION}`, `not pinned by a commit SHA: - uses: orgform/orgform@v${VERSION}`]);
    expect(checkoutProblems(await readYaml(GITHUB_WORKFLOW))).toEqual([]);
    expect(pinningProblems('      - uses: actions/checkout@v4')).toEqual(['not pinned by a commit SHA: - uses: actions/checkout@v4']);
    expect(checkoutProblems({ jobs: { plan: { steps: [{ uses: 'actions/checkout@x' }] } } })).toEqual(['no top-level permissions', 'plan: checkout persists the credentials']);
  });

  it('splits the credentials: the plan job holds only the read-only secrets, apply’s live in the environment orgform-apply', async () => {
    const workflow = await readYaml(GITHUB_WORKFLOW);
    expect(splitCredentialProblems(workflow, ['plan'])).toEqual([]);
    expect(workflow.jobs.apply.environment).toBe('orgform-apply');
    expect(orgformStep(workflow, 'plan')).toMatchObject({ env: { ORGFORM_TOKEN: '${{ secrets.ORGFORM_PLAN_TOKEN }}' }, with: { state: '${{ secrets.ORGFORM_PLAN_STATE }}' } });
    expect(orgformStep(workflow, 'apply')).toMatchObject({ env: { ORGFORM_TOKEN: '${{ secrets.ORGFORM_TOKEN }}' }, with: { state: '${{ secrets.ORGFORM_STATE }}' } });
    // The checks can fail: the plan job with apply's token, apply outside its environment, the key in a pull request.
    const leaky = structuredClone(workflow);
    leaky.jobs.plan.steps[1].env.ORGFORM_TOKEN = '${{ secrets.ORGFORM_TOKEN }}';
    leaky.jobs.plan.env = { ORGFORM_PLAN_KEY: '${{ secrets.ORGFORM_PLAN_KEY }}' };
    delete leaky.jobs.apply.environment;
    expect(splitCredentialProblems(leaky, ['plan'])).toEqual([
      'plan runs on pull requests and holds ORGFORM_TOKEN',
      'plan runs on pull requests and holds ORGFORM_PLAN_KEY',
      'apply holds ORGFORM_STATE, ORGFORM_TOKEN outside an environment',
      'plan holds ORGFORM_PLAN_KEY',
    ]);
  });

  it('needs no write access to the repository: nothing is pushed; the jobs write pull request comments only (the plan, the result)', async () => {
    const workflow = await readYaml(GITHUB_WORKFLOW);
    expect(workflow.permissions).toEqual({});
    expect(workflow.jobs.plan.permissions).toEqual({ contents: 'read', 'pull-requests': 'write' });
    expect(workflow.jobs.apply.permissions).toEqual({ contents: 'read', 'pull-requests': 'write' });
    expect(await readFile(GITHUB_WORKFLOW, 'utf8')).not.toMatch(/contents: write|git push/);
  });

  it('gives the tokens to the orgform steps only', async () => {
    const workflow = await readYaml(GITHUB_WORKFLOW);
    expect(JSON.stringify(workflow).match(/secrets\.ORGFORM_(PLAN_)?TOKEN/g)).toHaveLength(2);
    expect(workflow.env).toEqual({ ORGFORM_BASE_URL: '${{ vars.ORGFORM_BASE_URL }}' });
  });

  it('never runs two applies at once, and a newer push cancels an obsolete plan', async () => {
    const workflow = await readYaml(GITHUB_WORKFLOW);
    expect(workflow.jobs.apply.concurrency).toEqual({ group: 'orgform-apply', 'cancel-in-progress': false });
    expect(workflow.jobs.plan.concurrency).toEqual({ group: 'orgform-plan-${{ github.event.pull_request.number }}', 'cancel-in-progress': true });
  });

  describe('run, with this repository’s action', { timeout: 120_000 }, () => {
    let job: ActionJob;
    let emulator: Emulator;
    let github: FakeForge;
    let release: FakeRelease;
    let workspace: string;
    let uses: ActionJob['uses'];
    beforeEach(async () => {
      job = await startActionJob();
      ({ emulator, github, release, workspace, uses } = job);
    });
    afterEach(async () => job?.close());

    /**
     * The job's orgform step, with the workflow's expressions as GitHub would give them (no
     * ORGFORM_STATE secret set; on a push, no workflow_dispatch inputs): the plan on pull request 7,
     * the apply on the push of its merge commit MERGE, drift on a schedule.
     */
    async function runStep(job: 'plan' | 'apply' | 'drift') {
      const workflow = await readYaml(job === 'drift' ? GITHUB_DRIFT_WORKFLOW : GITHUB_WORKFLOW);
      const step = orgformStep(workflow, job);
      // Apply's token is not the plan's: a plan job that took the wrong one fails.
      const known: Record<string, string> = {
        'vars.ORGFORM_BASE_URL': emulator.url,
        'secrets.ORGFORM_PLAN_TOKEN': job === 'apply' ? 'x' : 'demo-token',
        'secrets.ORGFORM_PLAN_STATE': '',
        'secrets.ORGFORM_TOKEN': job === 'apply' ? 'demo-token' : 'x',
        'secrets.ORGFORM_STATE': '',
        'inputs.digest': '',
        'inputs.apply-unreviewed': '',
      };
      const expand = (value: unknown) => String(value).replace(/\$\{\{\s*(.+?)\s*\}\}/g, (_, expr: string) => {
        if (!(expr in known)) throw new Error(`the test does not know \${{ ${expr} }}`);
        return known[expr]!;
      });
      const env = Object.fromEntries(Object.entries({ ...workflow.env, ...step.env }).map(([k, v]) => [k, expand(v)]));
      const inputs = Object.fromEntries(Object.entries(step.with as Json).map(([k, v]) => [k, expand(v)]));
      const events = { plan: ['pull_request', { pull_request: { number: 7, head: { sha: '0123456789abcdef' } } }], apply: ['push', { ref: 'refs/heads/main' }], drift: ['schedule', { schedule: '17 6 * * 1' }] } as const;
      return runCompositeAction({
        actionDir: ROOT,
        with: inputs,
        workspace,
        runnerTemp: await makeWorkspace(),
        env: { PATH: process.env.PATH ?? '', HOME: workspace, ORGFORM_RELEASES_URL: release.url, GITHUB_REF: 'refs/heads/main', ...env },
        github: { token: 'ghs_job_token', eventName: events[job][0], event: events[job][1], repository: 'acme/config', apiUrl: github.url, sha: job === 'apply' ? MERGE : '0123456789abcdef' },
        uses,
      });
    }

    it('the plan job comments the plan, and its plan file is there for the artifact step', async () => {
      const run = await runStep('plan');
      expect(run.failed).toBe(false);
      expect(run.outputs).toMatchObject({ exitcode: '2', 'has-changes': 'true' });
      expect(github.comments).toHaveLength(1);
      expect(github.comments[0]!.body).toMatch(/^<!-- orgform-plan -->\n<!-- orgform-digest sha256:[0-9a-f]{64} [A-Za-z0-9_-]+ -->\n\*\*orgform plan:\*\* 2 to change, 2 to remove, 1 to accept/);
      const upload = ((await readYaml(GITHUB_WORKFLOW)).jobs.plan.steps as Json[]).find((s) => String(s.uses).startsWith('actions/upload-artifact@'))!;
      expect(upload).toMatchObject({ if: "always() && steps.plan.outputs.plan-file != ''", with: { path: '${{ steps.plan.outputs.plan-file }}' } });
      expect(orgformStep(await readYaml(GITHUB_WORKFLOW), 'plan').id).toBe('plan');
      expect(existsSync(run.outputs['plan-file']!)).toBe(true);
    });

    it('the apply job of the merge applies the plan reviewed on the pull request, writes its result there, and the next plan finds nothing to do', async () => {
      const planned = await runStep('plan');
      // Merged now, after the plan job's comment; main's head is the merge.
      github.pullsOf.set(MERGE, [{ number: 7, merged_at: new Date().toISOString(), merge_commit_sha: MERGE, base: { ref: 'main' } }]);
      github.heads.set('main', MERGE);
      const applied = await runStep('apply');
      expect(applied.failed, applied.steps.map((s) => s.stdout + s.stderr).join('\n')).toBe(false);
      expect(applied.outputs).toMatchObject({ digest: planned.outputs.digest, 'pull-request': '7' });
      expect(emulator.store.dump().organisations.find((o) => o.id === 'org_acme')?.billing?.billingEmail).toBe('finance@acme.example');
      expect(github.comments[1]!.body).toMatch(/^<!-- orgform-apply -->\n✅ \*\*orgform apply: applied\*\* the reviewed plan: 5 applied\./);
      const again = await runStep('plan');
      expect(again.outputs).toMatchObject({ exitcode: '0', 'has-changes': 'false' });
      expect(github.comments[0]!.body).toContain('No changes');
    });

    it('the drift workflow opens one issue while the service differs from main', async () => {
      const run = await runStep('drift');
      expect(run.failed, run.steps.map((s) => s.stdout + s.stderr).join('\n')).toBe(false);
      expect(github.issues).toEqual([expect.objectContaining({ number: 1, state: 'open', title: 'orgform: the service differs from main' })]);
    });
  });
});

describe('examples/github-actions/orgform-drift.yml', () => {
  it('plans main every week and by hand, with the read-only credentials, and may write issues only', async () => {
    const text = await readFile(GITHUB_DRIFT_WORKFLOW, 'utf8');
    const workflow = await readYaml(GITHUB_DRIFT_WORKFLOW);
    expect(workflow.on).toEqual({ schedule: [{ cron: '17 6 * * 1' }], workflow_dispatch: {} });
    expect(workflow.permissions).toEqual({});
    expect(workflow.jobs.drift.permissions).toEqual({ contents: 'read', issues: 'write' });
    expect(orgformStep(workflow, 'drift')).toMatchObject({ uses: `orgform/orgform@v${VERSION}`, with: { command: 'drift', state: '${{ secrets.ORGFORM_PLAN_STATE }}' }, env: { ORGFORM_TOKEN: '${{ secrets.ORGFORM_PLAN_TOKEN }}' } });
    expect(text).not.toMatch(/secrets\.ORGFORM_(TOKEN|STATE|PLAN_KEY)\b/);
    expect(pinningProblems(text, `v${VERSION}`)).toEqual([]);
    expect(checkoutProblems(workflow)).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------
// GitLab CI/CD

describe('examples/gitlab-ci.yml', { timeout: 120_000 }, () => {
  const COMPONENT_URL = `https://raw.githubusercontent.com/orgform/orgform/v${VERSION}/templates/orgform.yml`;

  /** A project holding the example, with the component where its include points (as fetched). */
  async function project(branch?: string): Promise<string> {
    const component = await readFile(join(ROOT, 'templates', 'orgform.yml'), 'utf8');
    return gitlabProject({ '.gitlab-ci.yml': await readFile(GITLAB_PIPELINE, 'utf8'), 'orgs.yaml': CHANGING_CONFIG }, { ...(branch ? { branch } : {}), remoteIncludes: { [COMPONENT_URL]: component } });
  }

  it('includes the component of this release, with max-changes, and runs only when orgs.yaml or itself changes', async () => {
    const pipeline = await readYaml(GITLAB_PIPELINE);
    expect(pipeline.include).toEqual([{ remote: COMPONENT_URL, inputs: { 'max-changes': '50' } }]);
    expect(pipeline.workflow.rules.map((rule: Json) => rule.changes)).toEqual([['orgs.yaml', '.gitlab-ci.yml'], undefined, ['orgs.yaml', '.gitlab-ci.yml']]);
    // Scheduled pipelines (drift) and those a person runs (a digest, or apply-unreviewed) whatever changed.
    expect(pipeline.workflow.rules[1].if).toBe('$CI_PIPELINE_SOURCE == "schedule" || $CI_PIPELINE_SOURCE == "web"');
  });

  it('splits the credentials: the merge request’s plan reads with ORGFORM_PLAN_TOKEN and the job’s own token; ORGFORM_TOKEN is protected, for apply', async () => {
    const text = await readFile(GITLAB_PIPELINE, 'utf8');
    expect(text).toMatch(/ORGFORM_PLAN_TOKEN\s+masked, not protected: a read-only API token, for plan\./);
    expect(text).toMatch(/ORGFORM_TOKEN\s+masked and protected: the token that writes, for apply/);
    const pipeline = await previewPipeline(await project());
    expect(pipeline['orgform-plan'].script.join('\n')).toContain('export ORGFORM_TOKEN="$ORGFORM_PLAN_TOKEN"');
    expect(pipeline['orgform-plan'].variables.ORGFORM_STATE_PASSWORD).toBe('${CI_JOB_TOKEN}');
    expect(JSON.stringify(pipeline['orgform-apply'])).not.toContain('ORGFORM_PLAN_TOKEN');
    expect(JSON.stringify(pipeline)).not.toContain('ORGFORM_PLAN_KEY');
  });

  it('a merge request pipeline runs validate and plan; a default-branch pipeline validate and apply; a scheduled one drift; another branch’s push runs no pipeline', async () => {
    expect((await listJobs(await project('feature'), MERGE_REQUEST_PIPELINE)).map((j) => j.name)).toEqual(['orgform-validate', 'orgform-plan']);
    expect((await listJobs(await project())).map((j) => j.name)).toEqual(['orgform-validate', 'orgform-apply']);
    expect((await listJobs(await project(), ['--variable', 'CI_PIPELINE_SOURCE=schedule'])).map((j) => j.name)).toEqual(['orgform-drift']);
    expect(await listJobs(await project('feature'))).toEqual([]);
  });

  it('no job pushes to git, and only the pipeline scripts (the notes, the drift issue) use GITLAB_API_TOKEN', async () => {
    const pipeline = await previewPipeline(await project());
    const scripts = JSON.stringify(['orgform-validate', 'orgform-plan', 'orgform-apply', 'orgform-drift'].map((name) => pipeline[name]));
    expect(scripts).not.toMatch(/git (push|commit)/);
    expect(scripts).not.toContain('GITLAB_API_TOKEN');
    expect(pipeline['orgform-apply']).toMatchObject({ resource_group: 'orgform', interruptible: false });
  });
});
