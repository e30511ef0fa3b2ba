/**
 * The GitHub Action (action.yml and its scripts in action/), run whole by a port of the runner's
 * composite-action steps (test/support/composite-action.ts) in a simulated job
 * (test/support/action-job.ts): GITHUB_OUTPUT, GITHUB_STEP_SUMMARY, GITHUB_EVENT_PATH and the rest as
 * the runner sets them, the service played by the emulator, GitHub's comment API by a fake on
 * 127.0.0.1, the release the action fetches by another (test/support/fake-release.ts), and
 * actions/upload-artifact by a stand-in that keeps the pages it was given. An `npm` on PATH fails the
 * test if anything calls it. The apply of a merge and drift: reviewed-apply.test.ts.
 */
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { readEmulatorData } from '../../src/emulator/data.js';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import type { ActionRun } from '../support/composite-action.js';
import type { FakeForge } from '../support/fake-forges.js';
import type { FakeRelease } from '../support/fake-release.js';
import { artifactUrl, PACKAGE_VERSION, pullRequestEvent, startActionJob, type ActionJob, type JobOptions } from '../support/action-job.js';
import { runnerAnnotations, runnerCommands } from '../support/github-runner.js';
import { pinningProblems } from '../support/workflow-checks.js';
import { CHANGING_CONFIG } from '../support/workspace.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BROKEN_CONFIG = 'version: 1\norganisations:\n  acme:\n    billing:\n      customerId: cus_1\n';
/** The action's steps: install, review, run, the page's upload and its link, comment, report, and the last that fails the job. */
const NOTHING_AFTER_INSTALL = [1, undefined, undefined, undefined, undefined, undefined, undefined, undefined];

let job: ActionJob;
let emulator: Emulator;
let github: FakeForge;
let workspace: string;
let release: FakeRelease;

beforeEach(async () => {
  job = await startActionJob({ comments: [{ id: 1, body: 'Looks good to me', author: 'User' }] });
  ({ emulator, github, workspace, release } = job);
});
afterEach(async () => job?.close());

/** A push to main: the apply job of a direct push, or of a merge GitHub does not tie to a pull request. */
const PUSH: JobOptions = { eventName: 'push', event: { ref: 'refs/heads/main' } };
const PULL_REQUEST = pullRequestEvent() as { pull_request: { number: number; head: { sha: string; repo: { full_name: string } } } };
const runAction = (inputs: Record<string, string>, options?: JobOptions) => job.run(inputs, options);
const npmCalls = () => job.npmCalls();
const TARBALL = `GET /v${PACKAGE_VERSION}/orgform-${PACKAGE_VERSION}.tgz`;
const SUMS = `GET /v${PACKAGE_VERSION}/SHA256SUMS`;

const step = (run: ActionRun, id: string) => run.steps.find((s) => s.id === id)!;
const lastStep = (run: ActionRun) => run.steps[run.steps.length - 1]!;

// Each run of the action starts half a dozen processes (node, npm, orgform): minutes, on a loaded machine.
describe('action.yml: plan on a pull request', { timeout: 120_000 }, () => {
  it('runs the release of this action’s own version, checked against the release’s SHA256SUMS and unpacked outside the checkout, and installs nothing', async () => {
    const run = await runAction({});
    expect(run.failed).toBe(false);
    expect(release.requests).toEqual([TARBALL, SUMS]);
    expect(step(run, 'install').stdout).toContain(`orgform-${PACKAGE_VERSION}.tgz: sha256 ${release.sha256}, as the release's SHA256SUMS says`);
    const bin = step(run, 'install').outputs.bin!;
    expect(bin).toBe(join(run.runnerTemp, 'orgform-action', release.sha256.slice(0, 32), 'package', 'bin', 'orgform.js'));
    expect(step(run, 'install').outputs.version).toBe(PACKAGE_VERSION);
    expect(await npmCalls()).toEqual([]);
  });

  it('refuses a tarball that is not the one the release’s SHA256SUMS names, or not the sha256 input’s, and runs nothing', async () => {
    release.tamper();
    const tampered = await runAction({});
    expect(tampered.failed).toBe(true);
    expect(runnerAnnotations(tampered.steps[0]!.stdout)[0]?.data).toMatch(new RegExp(`orgform-${PACKAGE_VERSION.replace(/\./g, '\\.')}\\.tgz has the checksum [0-9a-f]{64}, not ${release.sha256}: it is not the release, so it was not run`));
    expect(tampered.steps.map((s) => s.code)).toEqual(NOTHING_AFTER_INSTALL);
    expect(github.requests).toEqual([]);

    const other = await runAction({ sha256: 'a'.repeat(64), version: release.tarballPath });
    expect(runnerAnnotations(other.steps[0]!.stdout)[0]?.data).toContain(`has the checksum ${release.sha256}, not ${'a'.repeat(64)}`);
    expect(other.failed).toBe(true);
  });

  it('pins the bytes with the sha256 input: the release’s tarball with that checksum runs', async () => {
    const run = await runAction({ sha256: release.sha256 });
    expect(run.failed).toBe(false);
    expect(step(run, 'install').stdout).toContain("as the release's SHA256SUMS and the sha256 input say");
  });

  it('posts the Markdown plan as one comment, then updates that same comment on the next push', async () => {
    const first = await runAction({});
    expect(first.outputs).toMatchObject({ exitcode: '2', 'has-changes': 'true' });
    expect(existsSync(first.outputs['plan-file']!)).toBe(true);
    expect(github.comments).toHaveLength(2);
    const comment = github.comments[1]!;
    // The plan's digest right after the marker, where the merge's apply reads it.
    expect(comment.body).toMatch(/^<!-- orgform-plan -->\n<!-- orgform-digest (sha256:[0-9a-f]{64}) [A-Za-z0-9_-]+ -->\n\*\*orgform plan:\*\* 2 to change, 2 to remove, 1 to accept/);
    expect(first.outputs.digest).toBe(/orgform-digest (sha256:[0-9a-f]{64})/.exec(comment.body)?.[1]);
    expect(comment.body).toContain('<sub>orgform plan for 0123456; updated on every push.</sub>');

    const second = await runAction({}, { event: pullRequestEvent('89abcdef01234567') });
    expect(second.failed).toBe(false);
    expect(github.comments).toHaveLength(2);
    expect(github.comments[1]!.body).toContain('<sub>orgform plan for 89abcde; updated on every push.</sub>');
    expect(github.comments[0]!.body).toBe('Looks good to me');
    expect(github.requests.filter((r) => !r.startsWith('GET'))).toEqual(['POST /repos/acme/config/issues/7/comments', 'PATCH /repos/acme/config/issues/comments/1001']);
  });

  it('uploads the plan page made from the saved plan, links it from the comment and the job summary', async () => {
    const run = await runAction({});
    expect(run.failed).toBe(false);
    expect(job.uploads).toHaveLength(1);
    const { inputs, page } = job.uploads[0]!;
    expect(inputs).toEqual({ name: 'orgform-plan-page', path: join(dirname(run.outputs['plan-file']!), 'plan.html'), 'if-no-files-found': 'error', 'retention-days': '14' });
    expect(page).toMatch(/^<!doctype html>[^]*<meta http-equiv="Content-Security-Policy" content="default-src &#39;none&#39;;/);
    expect(page).toContain('"acme"');
    expect(run.outputs['page-url']).toBe(artifactUrl(1));
    const comment = github.comments[1]!.body;
    expect(comment).toContain(`[the plan page](${artifactUrl(1)})`);
    expect(comment).not.toContain('#orgform-plan-page');
    // Linking the page leaves the digest where the merge's apply reads it.
    expect(comment.split('\n')[1]).toMatch(new RegExp(`^<!-- orgform-digest ${run.outputs.digest} [A-Za-z0-9_-]+ -->$`));
    expect(await readFile(join(run.runnerTemp, 'step-summary.md'), 'utf8')).toContain(`**The plan page:** [orgform-plan-page](${artifactUrl(1)})`);
    // Each directory's page has a name of its own: two uses in one run do not collide.
    await mkdir(join(workspace, 'team b'));
    await writeFile(join(workspace, 'team b', 'orgs.yaml'), CHANGING_CONFIG);
    await runAction({ 'working-directory': 'team b', files: 'orgs.yaml' });
    expect(job.uploads[1]!.inputs.name).toBe('orgform-plan-page-team-b-orgs.yaml');
  });

  it('when the page cannot be uploaded, still comments, linking the run, and says why', async () => {
    job.uploadFails = true;
    const run = await runAction({});
    expect(run.failed).toBe(false);
    expect(step(run, 'page').code).toBe(1);
    expect(run.outputs['page-url']).toBe('');
    expect(github.comments[1]!.body).toContain('[the plan page](https://github.example/acme/config/actions/runs/4242)');
    expect(runnerAnnotations(step(run, 'comment').stdout)).toEqual([expect.objectContaining({ command: 'warning', data: expect.stringContaining('The plan page was not uploaded as an artifact, so the comment links this run instead: see the step "Upload the page".') })]);
    expect(await readFile(join(run.runnerTemp, 'step-summary.md'), 'utf8')).not.toContain('The plan page:');
  });

  it('never takes over a comment that someone else wrote, even one that starts with the marker', async () => {
    github.comments.push({ id: 2, body: '<!-- orgform-plan -->\nfake plan: nothing to see', author: 'User' });
    const run = await runAction({});
    expect(run.failed).toBe(false);
    expect(github.comments.find((c) => c.id === 2)!.body).toBe('<!-- orgform-plan -->\nfake plan: nothing to see');
    expect(github.comments).toHaveLength(3);
  });

  it('never edits another bot’s comment that starts with the marker: the job’s token writes as github-actions[bot]', async () => {
    github.comments.push({ id: 2, body: '<!-- orgform-plan -->\nrenovate was here', author: 'renovate[bot]' });
    const run = await runAction({});
    expect(run.failed).toBe(false);
    expect(github.comments.find((c) => c.id === 2)!.body).toBe('<!-- orgform-plan -->\nrenovate was here');
    expect(github.requests.filter((r) => !r.startsWith('GET'))).toEqual(['POST /repos/acme/config/issues/7/comments']);
  });

  it('refuses a github-token holding a control character before sending it, naming the input and never showing the token', async () => {
    const run = await runAction({ 'github-token': 'ghs_SECRET\rX' });
    const annotation = runnerAnnotations(step(run, 'comment').stdout)[0]?.data ?? '';
    expect(annotation).toContain('github-token holds a control character (U+000D), so it cannot be sent as a header and was not used');
    expect(JSON.stringify(run.steps)).not.toMatch(/SECRET|%0DX/);
    expect(github.requests).toEqual([]);
    expect(run.failed).toBe(true);
  });

  it('keeps one comment per working directory and files, so two plans on one pull request do not overwrite each other', async () => {
    await mkdir(join(workspace, 'team-b'));
    await writeFile(join(workspace, 'team-b', 'orgs.yaml'), CHANGING_CONFIG);
    await runAction({});
    await runAction({ 'working-directory': 'team-b' });
    await runAction({ 'working-directory': 'team-b' });
    expect(github.comments.map((c) => c.body.split('\n')[0])).toEqual(['Looks good to me', '<!-- orgform-plan -->', '<!-- orgform-plan team-b -->']);
  });

  it('shows the plan folded in the log and writes the job summary, and no workflow command inside the plan is acted on', async () => {
    // A billing e-mail is text read from the service: the runner must not act on the commands in it.
    const data = await readEmulatorData(new URL('../../examples/emulator-data.json', import.meta.url));
    const acme = data.organisations.find((o) => o.id === 'org_acme')!;
    acme.billing = { ...acme.billing, billingEmail: 'billing@acme.example ::set-output name=pwned::1 ##[add-mask]z' };
    await job.emulator.stop();
    job.emulator = emulator = await startEmulator({ slugDelayMs: 0, data });
    const run = await runAction({});
    const log = step(run, 'run').stdout;
    expect(log).toContain('::group::The plan, as the pull request comment shows it');
    expect(log).toContain('::set-output name=pwned::1 ##&#91;add-mask&#93;z');
    expect(runnerCommands(log).map((c) => c.command)).toEqual(['group', 'stop-commands', expect.stringMatching(/^[0-9a-f-]{36}$/), 'endgroup']);
    expect(await readFile(join(run.runnerTemp, 'step-summary.md'), 'utf8')).toContain('**Plan: 2 to change, 2 to remove, 1 to accept.**');
  });

  it('on a broken orgs.yaml, annotates the line, puts the error in the comment, and fails the job', async () => {
    await writeFile(join(workspace, 'orgs.yaml'), BROKEN_CONFIG);
    const run = await runAction({});
    expect(run.outputs).toMatchObject({ exitcode: '1', 'has-changes': 'false', 'plan-file': '' });
    expect(runnerAnnotations(step(run, 'run').stderr)).toEqual([expect.objectContaining({ command: 'error', properties: { file: 'orgs.yaml', line: '5', col: '7', title: 'orgform' } })]);
    const comment = github.comments[1]!.body;
    expect(comment).toMatch(/^<!-- orgform-plan -->\n\*\*orgform plan failed\*\* \(exit code 1\)\n\n```text\nError: The configuration has 1 problem/);
    expect(comment).toContain('did you mean "customerID"?');
    expect(comment).not.toContain('::error');
    expect(run.failed).toBe(true);
    expect(lastStep(run)).toMatchObject({ name: 'Fail when orgform failed', code: 1 });
  });

  it('with max-changes below the plan’s size, the plan is shown and the job fails', async () => {
    const run = await runAction({ 'max-changes': '2' });
    expect(run.outputs.exitcode).toBe('1');
    expect(github.comments[1]!.body).toContain('**orgform plan:** 2 to change, 2 to remove, 1 to accept');
    expect(run.failed).toBe(true);
  });

  it('with comment: false, or outside a pull request, writes no comment and says why', async () => {
    const off = await runAction({ comment: 'false' });
    expect(off.failed).toBe(false);
    const push = await runAction({}, { eventName: 'push', event: { ref: 'refs/heads/main' } });
    expect(step(push, 'comment').stdout).toContain('No pull request in this push event, so no comment.');
    expect(github.requests).toEqual([]);
  });

  it('a comment that cannot be written fails the job, and on a fork’s pull request says why', async () => {
    github.readOnly = true;
    const fork = { ...PULL_REQUEST, pull_request: { ...PULL_REQUEST.pull_request, head: { sha: '0123456789abcdef', repo: { full_name: 'mallory/config' } } } };
    const run = await runAction({}, { event: fork });
    expect(run.outputs.exitcode).toBe('2');
    const annotations = runnerAnnotations(step(run, 'comment').stdout);
    expect(annotations).toEqual([expect.objectContaining({ command: 'error' })]);
    expect(annotations[0]!.data).toContain('HTTP 403 (Resource not accessible by integration)');
    expect(annotations[0]!.data).toContain('comes from a fork');
    expect(run.failed).toBe(true);
  });
});

describe('action.yml: apply without a reviewed plan, asked for by name', { timeout: 120_000 }, () => {

  it('with apply-unreviewed: true, applies a direct push, sets exitcode 0, uploads the apply report and links it from the job summary, and the next plan has no changes', async () => {
    const applied = await runAction({ command: 'apply', 'apply-unreviewed': 'true' }, PUSH);
    expect(applied.failed, applied.steps.map((s) => s.stdout + s.stderr).join('\n')).toBe(false);
    expect(applied.outputs).toEqual({ exitcode: '0', 'has-changes': '', 'plan-file': '', digest: '', 'pull-request': '', 'page-url': artifactUrl(1) });
    expect(job.uploads.map((u) => [u.inputs.name, u.inputs.path?.endsWith('/apply.html')])).toEqual([['orgform-apply-report', true]]);
    expect(job.uploads[0]!.page).toContain('<p><strong>Complete: 5 changes applied, 0 already done.</strong></p>');
    const summary = await readFile(join(applied.runnerTemp, 'step-summary.md'), 'utf8');
    expect(summary.indexOf(`**The apply report:** [orgform-apply-report](${artifactUrl(1)})`)).toBeGreaterThan(summary.indexOf('#### The run over time'));
    expect(runnerAnnotations(step(applied, 'review').stdout)).toEqual([expect.objectContaining({ command: 'warning', data: expect.stringContaining('apply-unreviewed is true: a fresh plan is applied without a reviewed plan to compare it with (with no pull request)') })]);
    expect(step(applied, 'run').stdout).toContain('orgform: applied 5 changes.');
    expect(emulator.store.dump().organisations.find((o) => o.id === 'org_acme')?.billing?.billingEmail).toBe('finance@acme.example');
    // No merged pull request: nothing to write the result on.
    expect(github.requests.filter((r) => !r.includes('/pulls'))).toEqual(['GET /repos/acme/config/git/ref/heads/main']);

    const planned = await runAction({});
    expect(planned.outputs).toMatchObject({ exitcode: '0', 'has-changes': 'false' });
  });

  it('an apply that fails fails the job, and its report says why', async () => {
    emulator.faults.add({ operation: 'getOrganisations', times: Infinity, fault: { kind: 'status', status: 401 } });
    const run = await runAction({ command: 'apply', 'apply-unreviewed': 'true' }, PUSH);
    expect(run.outputs.exitcode).toBe('1');
    expect(run.failed).toBe(true);
    expect(job.uploads[0]!.page).toContain('<p><strong>Apply stopped before it changed anything.</strong></p>');
  });
});

describe('action.yml: inputs', { timeout: 120_000 }, () => {
  /**
   * A stand-in orgform in node_modules/.bin (version: installed) that records its argv and
   * ORGFORM_STATE; its `apply --help` offers `--report html=FILE` when `offersReport`, as one older
   * than the apply report does not.
   */
  async function recordingOrgform(options: { offersReport?: boolean } = {}): Promise<string> {
    const record = join(workspace, 'orgform-call.json');
    const help = options.offersReport === true ? '  --report <KIND=FILE>  html=FILE: the apply report page' : '  --auto-approve';
    await mkdir(join(workspace, 'node_modules', '.bin'), { recursive: true });
    await writeFile(
      join(workspace, 'node_modules', '.bin', 'orgform'),
      `#!${process.execPath}
if (process.argv[2] === '--version') { console.log('9.9.9'); process.exit(0); }
if (process.argv.includes('--help')) { console.log(${JSON.stringify(help)}); process.exit(0); }
require('node:fs').writeFileSync(${JSON.stringify(record)}, JSON.stringify({ argv: process.argv.slice(2), state: process.env.ORGFORM_STATE ?? null }));
`,
      { mode: 0o755 },
    );
    return record;
  }

  it('files, max-changes and args reach orgform as separate words, never through a shell', async () => {
    const record = await recordingOrgform();
    const run = await runAction({
      version: 'installed',
      files: 'orgs.yaml\n"team b/orgs.yaml"',
      'max-changes': '50',
      args: `--parallelism 4 --target 'a b' $(touch pwned) ; touch pwned2 \`touch pwned3\``,
    });
    expect(run.failed).toBe(false);
    const { argv } = JSON.parse(await readFile(record, 'utf8')) as { argv: string[] };
    expect(argv).toEqual([
      'plan', '--format', 'markdown', '--detailed-exitcode', '--out', expect.stringMatching(/plan\.bin$/),
      '-f', 'orgs.yaml', '-f', 'team b/orgs.yaml', '--max-changes', '50',
      '--parallelism', '4', '--target', 'a b', '$(touch', 'pwned)', ';', 'touch', 'pwned2', '`touch', 'pwned3`',
    ]);
    expect(existsSync(join(workspace, 'pwned'))).toBe(false);
    expect(existsSync(join(workspace, 'pwned2'))).toBe(false);
    expect(existsSync(join(workspace, 'pwned3'))).toBe(false);
    expect(await npmCalls()).toEqual([]);
  });

  it('state is passed as ORGFORM_STATE; left empty, the job’s own ORGFORM_STATE stays', async () => {
    const record = await recordingOrgform();
    // An orgform whose help does not offer html=FILE (one older than the apply report) is not given --report.
    await runAction({ version: 'installed', command: 'apply', 'apply-unreviewed': 'true', state: 'https://state.example/orgform' });
    expect(JSON.parse(await readFile(record, 'utf8'))).toMatchObject({ argv: ['apply', '--auto-approve', '--format', 'json'], state: 'https://state.example/orgform' });
    await runAction({ version: 'installed', command: 'apply', 'apply-unreviewed': 'true' }, { env: { ORGFORM_STATE: 'postgres://job-level' } });
    expect(JSON.parse(await readFile(record, 'utf8'))).toMatchObject({ state: 'postgres://job-level' });
    await runAction({ version: 'installed', command: 'apply', 'apply-unreviewed': 'true' });
    expect(JSON.parse(await readFile(record, 'utf8'))).toMatchObject({ state: null });
  });

  it('apply writes the report page when the installed orgform offers html=FILE and the review step allowed an apply; a plan without a reviewed one gets none', async () => {
    const record = await recordingOrgform({ offersReport: true });
    const argv = async () => (JSON.parse(await readFile(record, 'utf8')) as { argv: string[] }).argv;
    const report = expect.stringMatching(/^html=\/.+\/apply\.html$/);
    await runAction({ version: 'installed', command: 'apply', 'apply-unreviewed': 'true' }, PUSH);
    expect(await argv()).toEqual(['apply', '--auto-approve', '--report', report, '--format', 'json']);
    const digest = `sha256:${'ab'.repeat(32)}`;
    await runAction({ version: 'installed', command: 'apply', 'expect-digest': digest }, PUSH);
    expect(await argv()).toEqual(['apply', '--expect-digest', digest, '--report', report, '--format', 'json']);
    const unreviewed = await runAction({ version: 'installed', command: 'apply' }, PUSH);
    expect(await argv()).toEqual(['plan', '--format', 'markdown', '--detailed-exitcode']);
    expect(unreviewed.outputs['page-url']).toBe('');
    expect(job.uploads).toEqual([]);
  });

  it('version takes a release’s version, or a tarball’s URL or path with its sha256; nothing is installed', async () => {
    const byVersion = await runAction({ version: PACKAGE_VERSION, comment: 'false' });
    expect(byVersion.failed).toBe(false);
    await mkdir(join(workspace, 'vendor'));
    await writeFile(join(workspace, 'vendor', 'orgform.tgz'), await readFile(release.tarballPath));
    const byPath = await runAction({ version: './vendor/orgform.tgz', sha256: release.sha256.toUpperCase(), comment: 'false' });
    expect(byPath.failed).toBe(false);
    const byUrl = await runAction({ version: `${release.url}/v${PACKAGE_VERSION}/orgform-${PACKAGE_VERSION}.tgz`, sha256: release.sha256, comment: 'false' });
    expect(byUrl.failed).toBe(false);
    expect(release.requests).toEqual([TARBALL, SUMS, TARBALL]);
    // A presigned URL's signature is not printed.
    const presigned = await runAction({ version: `${release.url}/signed/orgform.tgz?X-Amz-Signature=SECRETSIG`, sha256: release.sha256, comment: 'false' });
    expect(presigned.failed).toBe(true);
    expect(presigned.steps[0]!.stdout).toContain(`could not fetch ${release.url}/signed/orgform.tgz?X-Amz-Signature=***: HTTP 404`);
    expect(JSON.stringify(presigned.steps)).not.toContain('SECRETSIG');
    expect(await npmCalls()).toEqual([]);
  });

  it('version: installed runs the checkout’s own node_modules/.bin/orgform, and warns that the pull request decides what that is', async () => {
    await recordingOrgform();
    const run = await runAction({ version: 'installed' });
    expect(run.failed).toBe(false);
    const warnings = runnerAnnotations(step(run, 'install').stdout).filter((a) => a.command === 'warning');
    expect(warnings).toEqual([expect.objectContaining({ data: expect.stringContaining("version: installed runs node_modules/.bin/orgform as this checkout installed it, with this job's secrets") })]);
    expect(release.requests).toEqual([]);
  });

  it('a bad input fails the first step, before anything is installed or run', async () => {
    for (const [inputs, message] of [
      [{ command: 'destroy' }, 'command must be plan, apply or drift (got "destroy")'],
      [{ command: 'apply', 'apply-unreviewed': 'yes' }, 'apply-unreviewed must be true or false (got "yes")'],
      [{ command: 'apply', 'expect-digest': 'sha256:abc' }, 'expect-digest must be a plan\'s whole digest, sha256: and 64 hexadecimal digits (got "sha256:abc")'],
      [{ 'max-changes': 'ten' }, 'max-changes must be a whole number (got "ten")'],
      [{ comment: 'yes' }, 'comment must be true or false (got "yes")'],
      [{ args: '--target "unclosed' }, 'args: unterminated " quote'],
      [{ version: 'installed' }, 'version is "installed", but there is no'],
      [{ version: '0.x' }, 'version must be empty (this action\'s release), a release\'s version (0.2.0), a tarball\'s URL or path with its sha256, or installed (got "0.x")'],
      [{ version: 'https://example.test/orgform.tgz' }, 'version is a tarball (https://example.test/orgform.tgz): give its sha256 too'],
      [{ sha256: 'abc' }, 'sha256 must be 64 lower-case hexadecimal digits'],
    ] as const) {
      const run = await runAction(inputs);
      expect(run.failed).toBe(true);
      // The report step runs after any failure of apply or drift (a drift issue says orgform did not
      // run); with no pull request it writes nothing, and it refuses an unknown command too.
      const report = !('command' in inputs) ? undefined : inputs.command === 'destroy' ? 1 : 0;
      expect(run.steps.map((s) => s.code)).toEqual([1, undefined, undefined, undefined, undefined, undefined, report, undefined]);
      expect(runnerAnnotations(run.steps[0]!.stdout)[0]?.data).toContain(message);
    }
    expect(await npmCalls()).toEqual([]);
    expect(release.requests).toEqual([]);
    expect(github.requests).toEqual([]);
  });
});

describe('action.yml itself', () => {
  it('no `run:` script holds an expression: inputs reach the scripts through env only', async () => {
    const action = parse(await readFile(join(ROOT, 'action.yml'), 'utf8')) as { runs: { steps: Array<{ run: string }> } };
    expect(action.runs.steps.length).toBeGreaterThan(0);
    for (const s of action.runs.steps.filter((x) => x.run !== undefined)) expect(s.run).not.toContain('${{');
  });

  it('pins every action it uses by a commit SHA, its tag as the comment', async () => {
    const text = await readFile(join(ROOT, 'action.yml'), 'utf8');
    expect(text).toMatch(/uses: actions\/upload-artifact@[0-9a-f]{40} # v\d/);
    expect(pinningProblems(text)).toEqual([]);
  });
});
