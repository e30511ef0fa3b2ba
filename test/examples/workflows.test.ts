/**
 * The pipeline examples (examples/github-actions/orgform.yml, examples/gitlab-ci.yml): valid YAML,
 * the triggers and guards they promise, and their orgform steps run as written, through bash, with
 * `npx orgform` answered by the built CLI and the service by the emulator, in the environment the
 * runner gives a step. GitLab's merge request note is posted to a fake of its API; on GitHub the
 * comment is a standard action's job (its inputs are checked). validators.test.ts runs the real
 * validators over both files.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseDocument } from 'yaml';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { runnerAnnotations } from '../support/github-runner.js';
import { codeQualityErrors, gitlabTerraformErrors } from '../support/report-schemas.js';
import { CLI_BIN } from '../support/run-cli.js';
import { CHANGING_CONFIG, makeWorkspace } from '../support/workspace.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const GITHUB_WORKFLOW = new URL('../../examples/github-actions/orgform.yml', import.meta.url);
const GITLAB_PIPELINE = new URL('../../examples/gitlab-ci.yml', import.meta.url);

let emulator: Emulator;
let cwd: string;
let bin: string;
beforeEach(async () => {
  emulator = await startEmulator({ slugDelayMs: 0 });
  cwd = await makeWorkspace({ 'orgs.yaml': CHANGING_CONFIG });
  // `npx orgform ...` runs the built CLI; any other npx use is a mistake in the example.
  bin = join(await makeWorkspace(), 'bin');
  await mkdir(bin);
  await writeFile(
    join(bin, 'npx'),
    `#!/bin/sh\nif [ "$1" = orgform ]; then shift; exec "${process.execPath}" "${CLI_BIN}" "$@"; fi\necho "unexpected: npx $*" >&2\nexit 127\n`,
  );
  await chmod(join(bin, 'npx'), 0o755);
  await symlink(process.execPath, join(bin, 'node'));
});
afterEach(async () => emulator?.stop());

async function readYaml(url: URL): Promise<Json> {
  const doc = parseDocument(await readFile(url, 'utf8'));
  expect(doc.errors).toEqual([]);
  expect(doc.warnings).toEqual([]);
  return doc.toJS() as Json;
}

interface ShellResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** As GitHub runs a `run:` step (bash -eo pipefail) and GitLab a job's script. */
function bash(script: string, env: Record<string, string>): Promise<ShellResult> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['--noprofile', '--norc', '-eo', 'pipefail', '-c', script], {
      cwd,
      env: { PATH: `${bin}:${process.env.PATH ?? ''}`, HOME: cwd, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

const usesOrgform = (script: unknown): script is string => typeof script === 'string' && /\bnpx orgform\b/.test(script);

// ---------------------------------------------------------------------------------------------
// GitHub Actions

/** `${{ expr }}` with what the test provides; an expression it does not know fails the test. */
function expand(value: unknown, known: Record<string, string>): string {
  return String(value).replace(/\$\{\{\s*([^}]+?)\s*\}\}/g, (_, expr: string) => {
    const replaced = known[expr];
    if (replaced === undefined) throw new Error(`the test does not know \${{ ${expr} }}`);
    return replaced;
  });
}

function expandEnv(env: Json | undefined, known: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(env ?? {}).map(([k, v]) => [k, expand(v, known)]));
}

interface GithubRun {
  results: ShellResult[];
  outputs: Record<string, string>;
}

/** The `run:` steps a test runs: those that call orgform, and the one that composes the comment. */
const runsHere = (step: Json) => usesOrgform(step.run) || step.name === 'Compose the plan comment';

/**
 * Runs the job's chosen `run:` steps, in order, with the env of workflow, job and step, and what the
 * runner sets for every step: GITHUB_ACTIONS, GITHUB_WORKSPACE, GITHUB_OUTPUT, GITHUB_STEP_SUMMARY.
 */
async function runGithubOrgformSteps(workflow: Json, job: string): Promise<GithubRun> {
  const known = { 'secrets.ORGFORM_TOKEN': 'demo-token', 'vars.ORGFORM_BASE_URL': emulator.url, 'github.event.pull_request.head.sha': '0123456789abcdef' };
  const outputsFile = join(cwd, 'github-output.txt');
  await writeFile(outputsFile, '');
  const results: ShellResult[] = [];
  for (const step of workflow.jobs[job].steps as Json[]) {
    if (!runsHere(step)) continue;
    const env = { ...expandEnv(workflow.env, known), ...expandEnv(workflow.jobs[job].env, known), ...expandEnv(step.env, known) };
    const runner = { GITHUB_ACTIONS: 'true', GITHUB_OUTPUT: outputsFile, GITHUB_WORKSPACE: cwd, GITHUB_STEP_SUMMARY: join(cwd, 'step-summary.md') };
    results.push(await bash(expand(step.run, known), { ...env, ...runner }));
  }
  const outputs = Object.fromEntries(
    (await readFile(outputsFile, 'utf8'))
      .split('\n')
      .filter((line) => line.includes('='))
      .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
  );
  return { results, outputs };
}

/**
 * The inputs of marocchino/sticky-pull-request-comment (its action.yml, v2): a `with:` key outside
 * these would be ignored by the action, silently.
 */
const STICKY_COMMENT_INPUTS = new Set([
  'header', 'append', 'recreate', 'delete', 'only_create', 'only_update', 'hide_details', 'hide', 'hide_and_recreate',
  'hide_classify', 'message', 'path', 'ignore_empty', 'skip_unchanged', 'follow_symbolic_links', 'number', 'owner', 'repo', 'GITHUB_TOKEN',
]);

function commentStep(workflow: Json): Json {
  const step = (workflow.jobs.plan.steps as Json[]).find((s) => String(s.uses).startsWith('marocchino/sticky-pull-request-comment@'));
  expect(step).toBeDefined();
  return step!;
}

describe('examples/github-actions/orgform.yml', () => {
  it('plans on pull requests and applies on pushes to main, one apply at a time, with the token from a secret', async () => {
    const workflow = await readYaml(GITHUB_WORKFLOW);
    expect(Object.keys(workflow.on)).toEqual(['pull_request', 'push']);
    expect(workflow.on.push.branches).toEqual(['main']);
    expect(workflow.jobs.plan.if).toBe("github.event_name == 'pull_request'");
    expect(workflow.jobs.apply.if).toBe("github.event_name == 'push' && github.ref == 'refs/heads/main'");
    expect(workflow.jobs.apply.concurrency).toEqual({ group: 'orgform-apply', 'cancel-in-progress': false });
    const orgformSteps = [...workflow.jobs.plan.steps, ...workflow.jobs.apply.steps].filter((s: Json) => usesOrgform(s.run));
    expect(orgformSteps).toHaveLength(2);
    for (const step of orgformSteps) expect(step.env).toEqual({ ORGFORM_TOKEN: '${{ secrets.ORGFORM_TOKEN }}' });
    // The token reaches no other step.
    expect(JSON.stringify(workflow).match(/secrets\.ORGFORM_TOKEN/g)).toHaveLength(2);
  });

  it('plan writes Markdown to plan.md and saves plan.bin, takes exit code 2 as success, and the comment is the plan, posted by a standard action', async () => {
    const workflow = await readYaml(GITHUB_WORKFLOW);
    const { results, outputs } = await runGithubOrgformSteps(workflow, 'plan');
    expect(results.map((r) => r.code)).toEqual([0, 0]);
    expect(outputs).toEqual({ exitcode: '2' });
    const markdown = await readFile(join(cwd, 'plan.md'), 'utf8');
    expect(markdown).toMatch(/^\*\*orgform plan:\*\* 2 to change, 2 to remove, 1 to accept/);
    expect(existsSync(join(cwd, 'plan.bin'))).toBe(true);
    const upload = workflow.jobs.plan.steps.find((s: Json) => String(s.uses).startsWith('actions/upload-artifact@'));
    expect(upload.with.path.split('\n').filter(Boolean)).toEqual(['plan.md', 'plan.bin']);

    expect(await readFile(join(cwd, 'comment.md'), 'utf8')).toBe(`${markdown}\n<sub>orgform plan for 0123456; re-run on every push.</sub>\n`);
    const step = commentStep(workflow);
    expect(step.with).toEqual({ header: 'orgform-plan', path: 'comment.md' });
    for (const key of Object.keys(step.with)) expect(STICKY_COMMENT_INPUTS.has(key)).toBe(true);
    expect(step.if).toBe("always() && steps.plan.outcome == 'success'");
    expect(workflow.jobs.plan.permissions).toEqual({ contents: 'read', 'pull-requests': 'write' });

    // orgform saw GITHUB_ACTIONS: the run's summary page has the plan's counts.
    expect(await readFile(join(cwd, 'step-summary.md'), 'utf8')).toContain('**Plan: 2 to change, 2 to remove, 1 to accept.**');
  });

  it('when the configuration is broken, the problem is an annotation on the diff, the comment shows the error, and the job then fails', async () => {
    const workflow = await readYaml(GITHUB_WORKFLOW);
    await writeFile(join(cwd, 'orgs.yaml'), 'version: 1\norganisations:\n  acme:\n    billing:\n      customerId: cus_1\n');
    const { results, outputs } = await runGithubOrgformSteps(workflow, 'plan');
    expect(results.map((r) => r.code)).toEqual([0, 0]);
    expect(outputs).toEqual({ exitcode: '1' });
    // The step's log (plan.err handed back) carries the annotation the runner turns into one on the diff.
    expect(runnerAnnotations(results[0]!.stderr)).toEqual([expect.objectContaining({ command: 'error', properties: { file: 'orgs.yaml', line: '5', col: '7', title: 'orgform' } })]);
    const comment = await readFile(join(cwd, 'comment.md'), 'utf8');
    expect(comment).toMatch(/^\*\*orgform plan failed\*\*\n\n```text\nError: The configuration has 1 problem/);
    expect(comment).toContain('did you mean "customerID"?');
    expect(comment).not.toContain('::error');
    expect(comment).toContain('<sub>orgform plan for 0123456; re-run on every push.</sub>');
    const failStep = workflow.jobs.plan.steps.find((s: Json) => s.name === 'Fail on a plan error');
    expect(failStep).toMatchObject({ if: "steps.plan.outputs.exitcode == '1'", run: 'exit 1' });
  });

  it('apply applies the merged configuration and keeps the journal, and the next plan finds nothing to do', async () => {
    const workflow = await readYaml(GITHUB_WORKFLOW);
    const applied = await runGithubOrgformSteps(workflow, 'apply');
    expect(applied.results.map((r) => r.code)).toEqual([0]);
    expect(applied.results[0]?.stdout).toMatch(/Apply complete: 5 applied/);
    expect(applied.results[0]?.stdout).toMatch(/^::group::Applying 5 changes$/m);
    expect(await readFile(join(cwd, 'step-summary.md'), 'utf8')).toContain('**Apply complete: 5 applied, 0 already done');
    expect(emulator.store.dump().organisations.find((o) => o.id === 'org_acme')?.billing?.billingEmail).toBe('finance@acme.example');
    expect(existsSync(join(cwd, '.orgform', 'state.json'))).toBe(true);

    const planned = await runGithubOrgformSteps(workflow, 'plan');
    expect(planned.outputs).toEqual({ exitcode: '0' });
    expect(await readFile(join(cwd, 'plan.md'), 'utf8')).toContain('No changes');
  });
});

// ---------------------------------------------------------------------------------------------
// GitLab CI/CD

interface FakeGitlab {
  url: string;
  notes: Array<{ id: number; body: string }>;
  requests: string[];
  server: Server;
}

async function startFakeGitlab(): Promise<FakeGitlab> {
  const fake: Omit<FakeGitlab, 'url'> = { notes: [{ id: 1, body: 'Please double-check acme' }], requests: [], server: createServer() };
  const path = '/api/v4/projects/42/merge_requests/7/notes';
  fake.server.on('request', (req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      fake.requests.push(`${req.method} ${req.url}`);
      const reply = (status: number, value: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value));
      if (req.headers['private-token'] !== 'gitlab-token') return reply(401, { message: '401 Unauthorized' });
      const url = new URL(req.url ?? '/', 'http://x');
      if (req.method === 'GET' && url.pathname === path) return reply(200, fake.notes);
      if (req.method === 'POST' && url.pathname === path) {
        const note = { id: fake.notes.length + 100, body: JSON.parse(body).body as string };
        fake.notes.push(note);
        return reply(201, note);
      }
      const note = fake.notes.find((n) => url.pathname === `${path}/${n.id}`);
      if (req.method === 'PUT' && note) {
        note.body = JSON.parse(body).body;
        return reply(200, note);
      }
      return reply(404, { message: '404 Not Found' });
    });
  });
  await new Promise<void>((resolve) => fake.server.listen(0, '127.0.0.1', resolve));
  return { ...fake, url: `http://127.0.0.1:${(fake.server.address() as AddressInfo).port}` };
}

function gitlabEnv(pipeline: Json, gitlab: FakeGitlab): Record<string, string> {
  return {
    ...pipeline.variables,
    ORGFORM_BASE_URL: emulator.url,
    ORGFORM_TOKEN: 'demo-token',
    GITLAB_API_TOKEN: 'gitlab-token',
    CI_API_V4_URL: `${gitlab.url}/api/v4`,
    CI_PROJECT_ID: '42',
    CI_MERGE_REQUEST_IID: '7',
    CI_COMMIT_SHORT_SHA: 'abc1234',
  };
}

describe('examples/gitlab-ci.yml', () => {
  let gitlab: FakeGitlab;
  beforeEach(async () => {
    gitlab = await startFakeGitlab();
  });
  afterEach(async () => new Promise<void>((resolve) => gitlab.server.close(() => resolve())));

  it('plans in merge request pipelines and applies on the default branch, one apply at a time', async () => {
    const pipeline = await readYaml(GITLAB_PIPELINE);
    expect(pipeline['orgform-plan'].rules).toEqual([{ if: '$CI_PIPELINE_SOURCE == "merge_request_event"' }]);
    expect(pipeline['orgform-apply'].rules).toEqual([{ if: '$CI_COMMIT_BRANCH == $CI_DEFAULT_BRANCH' }]);
    expect(pipeline['orgform-apply'].resource_group).toBe('orgform-apply');
    expect(pipeline['orgform-apply'].interruptible).toBe(false);
    expect(pipeline['orgform-plan'].artifacts.paths).toEqual(['plan.md', 'plan.bin']);
    // Validate runs in both pipelines: GitLab compares the merge request's Code Quality report with the default branch's.
    expect(pipeline.stages).toEqual(['validate', 'plan', 'apply']);
    expect(pipeline['orgform-validate'].rules).toBeUndefined();
    // Plan does not wait for validate: its note says "failed" rather than keep an older plan.
    expect(pipeline['orgform-plan'].needs).toEqual([]);
  });

  it('the validate job writes a Code Quality report, empty when the file is valid, and fails on a problem', async () => {
    const pipeline = await readYaml(GITLAB_PIPELINE);
    const script = (pipeline['orgform-validate'].script as string[]).join('\n');
    const report = join(cwd, pipeline['orgform-validate'].artifacts.reports.codequality);
    const valid = await bash(script, gitlabEnv(pipeline, gitlab));
    expect(valid.code).toBe(0);
    expect(await readFile(report, 'utf8')).toBe('[]\n');

    await writeFile(join(cwd, 'orgs.yaml'), 'version: 1\norganisations:\n  acme:\n    billing:\n      customerId: cus_1\n');
    const invalid = await bash(script, { ...gitlabEnv(pipeline, gitlab), CI_PROJECT_DIR: cwd });
    expect(invalid.code).toBe(1);
    const text = await readFile(report, 'utf8');
    expect(codeQualityErrors(text)).toEqual([]);
    expect(JSON.parse(text)).toEqual([expect.objectContaining({ severity: 'blocker', location: { path: 'orgs.yaml', lines: { begin: 5 } } })]);
  });

  it('the plan job writes the Markdown plan into one merge request note, posted once and then updated, and passes with changes', async () => {
    const pipeline = await readYaml(GITLAB_PIPELINE);
    const script = (pipeline['orgform-plan'].script as string[]).join('\n');
    const first = await bash(script, gitlabEnv(pipeline, gitlab));
    expect(first.stderr).toContain('Saved the plan to plan.bin');
    expect(first.code).toBe(0);
    const second = await bash(script, gitlabEnv(pipeline, gitlab));
    expect(second.code).toBe(0);

    const markdown = await readFile(join(cwd, 'plan.md'), 'utf8');
    expect(markdown).toMatch(/^\*\*orgform plan:\*\* 2 to change/);
    expect(existsSync(join(cwd, 'plan.bin'))).toBe(true);
    const counts = await readFile(join(cwd, pipeline['orgform-plan'].artifacts.reports.terraform), 'utf8');
    expect(gitlabTerraformErrors(counts)).toEqual([]);
    expect(JSON.parse(counts)).toEqual({ create: 1, update: 2, delete: 2 });
    expect(gitlab.notes).toHaveLength(2);
    expect(gitlab.notes[0]?.body).toBe('Please double-check acme');
    expect(gitlab.notes[1]?.body.startsWith(`<!-- orgform-plan -->\n${markdown}`)).toBe(true);
    expect(gitlab.requests.filter((r) => !r.startsWith('GET'))).toEqual([
      'POST /api/v4/projects/42/merge_requests/7/notes',
      'PUT /api/v4/projects/42/merge_requests/7/notes/101',
    ]);
  });

  it('the plan job fails on a broken configuration, after posting the error in the note', async () => {
    const pipeline = await readYaml(GITLAB_PIPELINE);
    await writeFile(join(cwd, 'orgs.yaml'), 'version: 2\n');
    const result = await bash((pipeline['orgform-plan'].script as string[]).join('\n'), gitlabEnv(pipeline, gitlab));
    expect(result.code).toBe(1);
    expect(gitlab.notes[1]?.body).toContain('**orgform plan failed**');
    expect(gitlab.notes[1]?.body).toContain('unsupported version 2');
  });

  it('the apply job applies the configuration and exits with orgform’s code', async () => {
    const pipeline = await readYaml(GITLAB_PIPELINE);
    // Its orgform lines; the journal commit (git) needs a real repository and is left out here.
    const lines = (pipeline['orgform-apply'].script as string[]).filter((line) => !/\bgit\b/.test(line));
    expect(lines.some(usesOrgform)).toBe(true);
    const applied = await bash(lines.join('\n'), gitlabEnv(pipeline, gitlab));
    expect(applied.stdout).toMatch(/Apply complete: 5 applied/);
    expect(applied.code).toBe(0);
    expect(existsSync(join(cwd, '.orgform', 'state.json'))).toBe(true);

    emulator.faults.add({ operation: 'getOrganisations', times: Infinity, fault: { kind: 'status', status: 401 } });
    const failed = await bash(lines.join('\n'), gitlabEnv(pipeline, gitlab));
    expect(failed.code).toBe(1);
  });
});
