/**
 * orgform in CI, end to end: validate, plan and apply run as in a GitHub Actions job
 * (GITHUB_ACTIONS=true, GITHUB_STEP_SUMMARY, GITHUB_WORKSPACE) and with GitLab's --report files,
 * against the emulator over loopback. Workflow commands are read back the way the runner reads
 * them (test/support/github-runner.ts), so a test fails if outside text could issue one.
 */
import { existsSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { chmod, mkdir, open, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readEmulatorData } from '../../src/emulator/data.js';
import { setupEmulatorWorkspace } from '../support/emulator-workspace.js';
import { parse as parseYaml } from 'yaml';
import { runnerAnnotations, runnerCommands, type RunnerCommand } from '../support/github-runner.js';
import { codeQualityErrors, gitlabTerraformErrors } from '../support/report-schemas.js';
import { CLI_BIN, runCli, spawnCli } from '../support/run-cli.js';
import { CHANGING_CONFIG, MATCHING_CONFIG, makeWorkspace } from '../support/workspace.js';

const MISSPELLED = 'version: 1\norganisations:\n  acme:\n    billing:\n      customerId: cus_1\n';

/** The environment of a GitHub Actions step whose workspace is `cwd`, its summary file in it. */
function githubEnv(cwd: string, extra: Record<string, string> = {}): Record<string, string> {
  return { GITHUB_ACTIONS: 'true', GITHUB_WORKSPACE: cwd, GITHUB_STEP_SUMMARY: join(cwd, 'step-summary.md'), ...extra };
}

/** Commands other than orgform's own (groups, their guards, annotations) are never acceptable. */
function unexpectedCommands(output: string): string[] {
  const ours = /^(group|endgroup|stop-commands|error|warning|[0-9a-f]{32})$/;
  return runnerCommands(output)
    .map((c) => c.command)
    .filter((c) => !ours.test(c));
}

describe('validate in GitHub Actions', () => {
  it('prints an ::error annotation at the misspelled field, relative to the workspace', async () => {
    const cwd = await makeWorkspace({ 'orgs.yaml': MISSPELLED });
    const result = await runCli(['validate'], { cwd, env: githubEnv(cwd) });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('::error file=orgs.yaml,line=5,col=7,title=orgform::unknown key "customerId"; did you mean "customerID"?');
    const [annotation, ...others] = runnerAnnotations(result.stderr);
    expect(others).toEqual([]);
    expect(annotation?.properties).toEqual({ file: 'orgs.yaml', line: '5', col: '7', title: 'orgform' });
    // The usual listing is still there, for people reading the log.
    expect(result.stderr).toContain('orgs.yaml:5:7: unknown key "customerId"');
    expect(result.stdout).toBe('');
    expect(await readFile(join(cwd, 'step-summary.md'), 'utf8')).toContain('### orgform validate\n\n**The configuration has 1 problem in 1 file;');
  });

  it('annotates a file in a subdirectory by its path in the repository, and one outside it as given', async () => {
    const root = await makeWorkspace({ 'team/orgs.yaml': MISSPELLED });
    const outside = await makeWorkspace({ 'other.yaml': MISSPELLED.replace('acme', 'other') });
    const result = await runCli(['validate', '-f', 'orgs.yaml', '-f', join(outside, 'other.yaml')], { cwd: join(root, 'team'), env: githubEnv(root) });
    expect(runnerAnnotations(result.stderr).map((a) => a.properties.file)).toEqual(['team/orgs.yaml', join(outside, 'other.yaml')]);
  });

  it('writes nothing for GitHub outside GitHub Actions', async () => {
    const cwd = await makeWorkspace({ 'orgs.yaml': MISSPELLED });
    const result = await runCli(['validate'], { cwd, env: {} });
    expect(result.code).toBe(1);
    expect(result.stderr).not.toContain('::');
    expect(result.stderr).toBe('orgs.yaml:5:7: unknown key "customerId"; did you mean "customerID"? (orgs files use the update spelling: customerID, subscriptionID, platformID)\n1 problem in 1 file.\n');
  });

  it('keeps a key that holds workflow commands inert, in the listing and in the annotation', async () => {
    const cwd = await makeWorkspace({ 'orgs.yaml': 'version: 1\norganisations:\n  acme:\n    "x ##[set-output name=pwned;]1": {}\n    "::add-mask::y": 1\n' });
    const result = await runCli(['validate'], { cwd, env: githubEnv(cwd) });
    expect(result.code).toBe(1);
    expect(runnerAnnotations(result.stderr).length).toBeGreaterThan(0);
    expect(unexpectedCommands(result.stderr)).toEqual([]);
  });
});

describe('validate --report codequality', () => {
  it('writes the problems as a GitLab Code Quality report, paths relative to CI_PROJECT_DIR', async () => {
    const root = await makeWorkspace({ 'config/orgs.yaml': MISSPELLED });
    const cwd = join(root, 'config');
    const result = await runCli(['validate', '--report', 'codequality=../gl-code-quality-report.json'], { cwd, env: { CI_PROJECT_DIR: root } });
    expect(result.code).toBe(1);
    const text = await readFile(join(root, 'gl-code-quality-report.json'), 'utf8');
    expect(codeQualityErrors(text)).toEqual([]);
    expect(JSON.parse(text)).toEqual([
      expect.objectContaining({ check_name: 'orgform/config', severity: 'blocker', location: { path: 'config/orgs.yaml', lines: { begin: 5 } } }),
    ]);
  });

  it('writes an empty report for a valid file, and refuses reports it cannot write', async () => {
    const cwd = await makeWorkspace({ 'orgs.yaml': MATCHING_CONFIG });
    const ok = await runCli(['validate', '--report', 'codequality=cq.json'], { cwd, env: {} });
    expect(ok.code).toBe(0);
    expect(await readFile(join(cwd, 'cq.json'), 'utf8')).toBe('[]\n');
    await writeFile(join(cwd, 'file'), 'x');
    const unwritable = await runCli(['validate', '--report', 'codequality=file/cq.json'], { cwd, env: {} });
    expect(unwritable.code).toBe(1);
    expect(unwritable.stderr).toMatch(/Cannot write file\/cq\.json/);
  });

  it('refuses a directory as a directory, and keeps the mode of a report it replaces', async () => {
    const cwd = await makeWorkspace({ 'orgs.yaml': MATCHING_CONFIG, 'reports/.keep': '', 'cq.json': '[]\n' });
    const refused = await runCli(['validate', '--report', 'codequality=reports'], { cwd, env: {} });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe('Error: Cannot write reports: it is a directory. Nothing was written; give --report the path of a file (in it, or elsewhere).\n');
    await chmod(join(cwd, 'cq.json'), 0o644);
    expect((await runCli(['validate', '--report', 'codequality=cq.json'], { cwd, env: {} })).code).toBe(0);
    expect((await stat(join(cwd, 'cq.json'))).mode & 0o777).toBe(0o644);
  });

  it('accepts only the kinds a command can write', async () => {
    const cwd = await makeWorkspace({ 'orgs.yaml': MATCHING_CONFIG });
    for (const value of ['gitlab-terraform=x.json', 'junit=x.xml', 'codequality', 'codequality=']) {
      const result = await runCli(['validate', '--report', value], { cwd, env: {} });
      expect(result.code).toBe(1);
      expect(result.stderr).toContain('--report must be KIND=FILE with KIND one of codequality');
    }
  });
});

describe('plan in GitHub Actions', () => {
  it('appends a Markdown summary naming the changed organisations, and folds the plan in a group', async () => {
    const { cwd, env } = await setupEmulatorWorkspace({ 'orgs.yaml': CHANGING_CONFIG, 'step-summary.md': '### an earlier step\n' });
    const result = await runCli(['plan', '--detailed-exitcode'], { cwd, env: { ...env, ...githubEnv(cwd) } });
    expect(result.code).toBe(2);
    const summary = await readFile(join(cwd, 'step-summary.md'), 'utf8');
    expect(summary.startsWith('### an earlier step\n### orgform plan\n')).toBe(true);
    expect(summary).toContain('**Plan: 2 to change, 2 to remove, 1 to accept.** · 1 unchanged');
    // The same change said once, as the comment says it, its headings a level down.
    expect(summary).toContain('| Kind and field | Changes | Organisations | Groups | Single changes |');
    expect(summary).toContain('#### + Invitations to accept — 1 organisation: 1 single change\n\n| Change | Organisations |\n| --- | --- |\n| inv&#95;globex&#95;ada | globex |');
    expect(result.stdout.startsWith('::group::Plan: 2 to change, 2 to remove, 1 to accept.\n::stop-commands::')).toBe(true);
    expect(runnerCommands(result.stdout).map((c) => c.command)).toEqual(['group', 'stop-commands', expect.stringMatching(/^[0-9a-f]{32}$/), 'endgroup']);
    expect(result.stdout).toContain('organisations.globex.invitations.accept.inv_globex_ada');
  });

  it('annotates an organisation that could not be read at its key, and writes both GitLab reports', async () => {
    const config = 'version: 1\norganisations:\n  acme:\n    billing:\n      billingEmail: finance@acme.example\n  nowhere-inc: {}\n';
    const { cwd, env } = await setupEmulatorWorkspace({ 'orgs.yaml': config });
    const args = ['plan', '--report', 'codequality=cq.json', '--report', 'gitlab-terraform=tf.json'];
    const result = await runCli(args, { cwd, env: { ...env, ...githubEnv(cwd) } });
    expect(result.code).toBe(1);
    const [annotation] = runnerAnnotations(result.stdout);
    expect(annotation).toMatchObject({ command: 'error', properties: { file: 'orgs.yaml', line: '6', col: '3' } });
    expect(annotation?.data).toMatch(/nowhere-inc/);
    expect(await readFile(join(cwd, 'step-summary.md'), 'utf8')).toContain('#### ⚠️ Problems (1)\n\nThese could not be read; their changes are missing from this plan.');

    const codeQuality = await readFile(join(cwd, 'cq.json'), 'utf8');
    expect(codeQualityErrors(codeQuality)).toEqual([]);
    expect(JSON.parse(codeQuality)).toEqual([expect.objectContaining({ check_name: 'orgform/plan', severity: 'critical', location: { path: 'orgs.yaml', lines: { begin: 6 } } })]);
    const counts = await readFile(join(cwd, 'tf.json'), 'utf8');
    expect(gitlabTerraformErrors(counts)).toEqual([]);
    expect(JSON.parse(counts)).toEqual({ create: 0, update: 1, delete: 0 });
  });

  it('keeps stdout clean for --format markdown and json: annotations go to stderr', async () => {
    const { cwd, env } = await setupEmulatorWorkspace({ 'orgs.yaml': 'version: 1\norganisations:\n  nowhere-inc: {}\n' });
    for (const format of ['markdown', 'json']) {
      const result = await runCli(['plan', '--format', format], { cwd, env: { ...env, ...githubEnv(cwd) } });
      expect(result.code).toBe(1);
      expect(result.stdout).not.toMatch(/^::/m);
      expect(runnerAnnotations(result.stderr).map((a) => a.properties.line)).toEqual(['3']);
    }
  });

  it('annotates configuration problems before refusing, and writes the Code Quality report but no counts', async () => {
    const { cwd, env, emulator } = await setupEmulatorWorkspace({ 'orgs.yaml': MISSPELLED });
    const args = ['plan', '--report', 'codequality=cq.json', '--report', 'gitlab-terraform=tf.json'];
    const result = await runCli(args, { cwd, env: { ...env, ...githubEnv(cwd) } });
    expect(result.code).toBe(1);
    expect(runnerAnnotations(result.stdout)).toEqual([expect.objectContaining({ command: 'error', properties: { file: 'orgs.yaml', line: '5', col: '7', title: 'orgform' } })]);
    expect(result.stderr).toMatch(/The configuration has 1 problem/);
    expect(JSON.parse(await readFile(join(cwd, 'cq.json'), 'utf8'))).toHaveLength(1);
    expect(existsSync(join(cwd, 'tf.json'))).toBe(false);
    // The run's page names the problem: a broken orgs.yaml no longer leaves it blank.
    expect(await readFile(join(cwd, 'step-summary.md'), 'utf8')).toMatch(/^### orgform plan\n\n\*\*The configuration has 1 problem in 1 file;[^]*- `orgs\.yaml:5:7`: unknown key/);
    expect(emulator.counters.total).toBe(0);
  });

  it('warns when the summary cannot be written, and keeps the plan’s output and exit code', async () => {
    const { cwd, env } = await setupEmulatorWorkspace({ 'orgs.yaml': CHANGING_CONFIG });
    await mkdir(join(cwd, 'a-directory'));
    const plain = await runCli(['plan', '--detailed-exitcode'], { cwd, env: { ...env, GITHUB_ACTIONS: 'true', GITHUB_WORKSPACE: cwd } });
    for (const summary of [join(cwd, 'a-directory'), join(cwd, 'missing', 'summary.md')]) {
      const result = await runCli(['plan', '--detailed-exitcode'], { cwd, env: { ...env, GITHUB_ACTIONS: 'true', GITHUB_WORKSPACE: cwd, GITHUB_STEP_SUMMARY: summary } });
      expect(result.code).toBe(2);
      const [warning, ...more] = runnerAnnotations(result.stdout);
      expect(more).toEqual([]);
      expect(warning).toMatchObject({ command: 'warning', properties: { title: 'orgform' } });
      expect(warning?.data).toMatch(/^Could not append the job summary to GITHUB_STEP_SUMMARY \(.+\): E[A-Z]+\. Nothing else is affected\.$/);
      expect(result.stderr).toBe(plain.stderr);
      // The same plan, the same lines (the guard's token is drawn anew each run).
      const lines = (text: string) => text.split('\n').filter((l) => !/^::(stop-commands::)?[0-9a-f]{32}|^::warning/.test(l));
      expect(lines(result.stdout)).toEqual(lines(plain.stdout));
    }
    const outside = await runCli(['plan'], { cwd, env: { ...env, GITHUB_STEP_SUMMARY: join(cwd, 'a-directory') } });
    expect(outside.code).toBe(0);
    expect(outside.stdout).toMatch(/^Warning: Could not append the job summary/m);
  });
});

describe('apply in GitHub Actions', () => {
  it('folds the per-change lines, summarises the outcome with the failures in full, and lets no service text issue a command or show the token', async () => {
    const token = `canary-${Date.now()}-0123456789`;
    const data = await readEmulatorData(new URL('../../examples/emulator-data.json', import.meta.url));
    data.users[0]!.token = token;
    // What the service holds and answers is outside text: a billing e-mail and an Error body that
    // try both kinds of workflow command, with a line break.
    const hostile = 'billing@acme.example\n::set-output name=pwned::1 ##[set-output name=pwned;]2';
    const acme = data.organisations.find((o) => o.id === 'org_acme')!;
    acme.billing = { ...acme.billing, billingEmail: hostile };
    const { cwd, emulator } = await setupEmulatorWorkspace({ 'orgs.yaml': CHANGING_CONFIG }, { data });
    emulator.faults.add({
      operation: 'acceptInvitation',
      fault: { kind: 'status', status: 422, contentType: 'application/json', body: JSON.stringify({ code: 'validation_failed', message: `no\n::add-mask::x ##[stop-commands]y`, cause: `Bearer ${token}` }) },
    });
    const env = { ORGFORM_TOKEN: token, ORGFORM_BASE_URL: emulator.url, ...githubEnv(cwd) };

    const plan = await runCli(['plan'], { cwd, env });
    expect(plan.stdout).toContain('::set-output name=pwned::1');
    const result = await runCli(['apply', '--auto-approve'], { cwd, env });
    expect(result.code).toBe(1);

    const summary = await readFile(join(cwd, 'step-summary.md'), 'utf8');
    expect(summary).toContain('### orgform plan');
    expect(summary).toContain('### orgform apply');
    expect(summary).toContain('| ✗ failed | 1 |');
    expect(summary).toContain(
      [
        '#### Failures (1)',
        '',
        '- **globex**: organisations.globex.invitations.accept.inv&#95;globex&#95;ada',
        '  - operation: acceptInvitation (HTTP 422)',
        // (the client already makes a line break in an Error body a space)
        '  - error: validation&#95;failed: no ::&#8203;add-mask::x ##&#91;stop-commands&#93;y',
        '  - cause: Bearer &#91;REDACTED&#93;',
      ].join('\n'),
    );
    expect(summary).toMatch(/- acme: \d changes applied/);

    // The failed change is annotated too, after the guarded lines, its Error body escaped.
    expect(runnerAnnotations(result.stdout)).toEqual([
      expect.objectContaining({ command: 'error', data: 'organisations.globex.invitations.accept.inv_globex_ada failed in acceptInvitation (HTTP 422): validation_failed: no ::add-mask::x ##[stop-commands]y' }),
    ]);
    const commands = runnerCommands(result.stdout).map((c) => c.command);
    expect(commands.filter((c) => c === 'group')).toHaveLength(2);
    expect(result.stdout).toMatch(/::group::Applying 5 changes\n::stop-commands::[0-9a-f]{32}\n/);
    for (const output of [plan.stdout, plan.stderr, result.stdout, result.stderr]) {
      expect(unexpectedCommands(output)).toEqual([]);
      expect(output).not.toContain(token);
    }
    expect(summary).not.toContain(token);
  });

  it('annotates configuration problems before refusing, and appends "No changes" when there is nothing to do', async () => {
    const { cwd, env } = await setupEmulatorWorkspace({ 'orgs.yaml': MISSPELLED });
    const refused = await runCli(['apply', '--auto-approve'], { cwd, env: { ...env, ...githubEnv(cwd) } });
    expect(refused.code).toBe(1);
    expect(runnerAnnotations(refused.stdout).map((a) => a.properties)).toEqual([{ file: 'orgs.yaml', line: '5', col: '7', title: 'orgform' }]);

    await writeFile(join(cwd, 'orgs.yaml'), MATCHING_CONFIG);
    const nothing = await runCli(['apply', '--auto-approve'], { cwd, env: { ...env, ...githubEnv(cwd) } });
    expect(nothing.code).toBe(0);
    expect(await readFile(join(cwd, 'step-summary.md'), 'utf8')).toContain('### orgform apply\n\n**No changes. Your organisations match the configuration.**');
  });
});

describe('a fatal error in GitHub Actions', () => {
  it('as a process, quotes the service’s Error body guarded, so that it cannot issue a workflow command', async () => {
    const { cwd, env, emulator } = await setupEmulatorWorkspace({ 'orgs.yaml': CHANGING_CONFIG });
    const body = JSON.stringify({ code: 'bad_request', message: 'nope ##[set-output name=pwned;]1 ::add-mask::x' });
    emulator.faults.add({ operation: 'getOrganisations', times: Infinity, fault: { kind: 'status', status: 400, contentType: 'application/json', body } });
    const inGithub = await spawnCli(['plan'], { cwd, env: { ...env, ...githubEnv(cwd) } });
    expect(inGithub.code).toBe(1);
    // Shown, and escaped where it would start the legacy form of a command.
    expect(inGithub.stderr).toContain('nope ##\\u005bset-output name=pwned;]1 ::add-mask::x');
    expect(runnerCommands(inGithub.stderr).map((c) => c.command)).toEqual(['stop-commands', expect.stringMatching(/^[0-9a-f]{32}$/)]);
    // Elsewhere the message is as it always was (and would have been a command in a runner).
    const elsewhere = await spawnCli(['plan'], { cwd, env });
    expect(elsewhere.stderr).not.toContain('::stop-commands::');
    expect(runnerCommands(elsewhere.stderr).map((c) => c.command)).toEqual(['set-output']);
  });
});

/**
 * Every way a line can issue a workflow command: at the start of a line (after white space, and
 * after a zero-width space, which a culture-sensitive comparison does not see), the legacy form
 * anywhere in a line, and a stop-commands that would silence orgform's own annotations after it.
 */
const FORGED = [
  '::add-mask::pwned',
  '::set-output name=pwned::1',
  '::stop-commands::pwned',
  '::error::pwned',
  '  ::warning title=pwned::indented',
  '\u200b::notice::pwned',
  'x ##[set-output name=pwned;]legacy',
  '##[error]pwned',
];

/** Commands orgform issues itself: its groups, their stop-commands guard, and its annotations (always titled orgform). */
function isOrgformsOwn(c: RunnerCommand): boolean {
  if (c.command === 'group' || c.command === 'endgroup' || /^[0-9a-f]{32}$/.test(c.command)) return true;
  if (c.command === 'stop-commands') return /^[0-9a-f]{32}$/.test(c.data);
  return (c.command === 'error' || c.command === 'warning') && c.properties.title === 'orgform' && Object.keys(c.properties).every((k) => ['file', 'line', 'col', 'title'].includes(k));
}

/** What the runner would act on that orgform did not issue, reading both streams. */
function forgedCommands(result: { stdout: string; stderr: string }): RunnerCommand[] {
  return [...runnerCommands(result.stdout), ...runnerCommands(result.stderr)].filter((c) => !isOrgformsOwn(c));
}

/** Examples' data with acme's billing e-mail and customer id set to hostile text (each part on one line). */
async function hostileData() {
  const data = await readEmulatorData(new URL('../../examples/emulator-data.json', import.meta.url));
  const acme = data.organisations.find((o) => o.id === 'org_acme')!;
  acme.billing = { ...acme.billing, billingEmail: FORGED.join('\n'), customerId: 'cus ##[set-output name=pwned;]2' };
  return data;
}

describe('in GitHub Actions no text from the service or the files issues a workflow command, whichever command writes it', () => {
  it('plan, in every format: the JSON document keeps the values exactly', async () => {
    const { cwd, env } = await setupEmulatorWorkspace({ 'orgs.yaml': CHANGING_CONFIG }, { data: await hostileData() });
    for (const format of ['text', 'json', 'markdown']) {
      const result = await runCli(['plan', '--format', format], { cwd, env: { ...env, ...githubEnv(cwd) } });
      expect(result.code).toBe(0);
      expect(result.stdout).toContain('set-output name=pwned');
      expect(forgedCommands(result)).toEqual([]);
      if (format === 'json') {
        // Read back, the document holds the service's value exactly as it was.
        const acme = (JSON.parse(result.stdout) as { changes: Array<{ address: string; before: unknown }> }).changes.find((c) => c.address === 'organisations.acme.billing');
        expect(JSON.stringify(acme?.before)).toContain(JSON.stringify(FORGED.join('\n')));
      }
    }
  });

  it('apply, in text and as NDJSON, with an Error body that tries every form', async () => {
    for (const format of ['text', 'json']) {
      const { cwd, env, emulator } = await setupEmulatorWorkspace({ 'orgs.yaml': CHANGING_CONFIG }, { data: await hostileData() });
      emulator.faults.add({
        operation: 'acceptInvitation',
        fault: { kind: 'status', status: 422, contentType: 'application/json', body: JSON.stringify({ code: 'validation_failed', message: FORGED.join(' '), cause: FORGED[6] }) },
      });
      const result = await runCli(['apply', '--auto-approve', '--format', format], { cwd, env: { ...env, ...githubEnv(cwd) } });
      expect(result.code).toBe(1);
      expect(result.stdout + result.stderr).toContain('add-mask');
      expect(forgedCommands(result)).toEqual([]);
    }
  });

  it('validate, with keys that try every form', async () => {
    const keys = FORGED.map((line, i) => `    ${JSON.stringify(line)}: ${i}`).join('\n');
    const cwd = await makeWorkspace({ 'orgs.yaml': `version: 1\norganisations:\n  acme:\n${keys}\n` });
    const result = await runCli(['validate'], { cwd, env: githubEnv(cwd) });
    expect(result.code).toBe(1);
    expect(runnerAnnotations(result.stderr).length).toBeGreaterThan(0);
    expect(forgedCommands(result)).toEqual([]);
  });

  it('export: its warnings, its summary and the file it prints, which reads back exactly', async () => {
    const data = await hostileData();
    const acme = data.organisations.find((o) => o.id === 'org_acme')!;
    // A slug orgs.yaml cannot declare (it holds "/"): left out, with a warning that quotes it.
    data.organisations.push({ ...acme, id: 'org_left_out', slug: 'a/##[set-output name=pwned;]3' });
    data.users[0]!.memberships.push('org_left_out');
    const { cwd, env } = await setupEmulatorWorkspace({}, { data });
    const result = await runCli(['export'], { cwd, env: { ...env, ...githubEnv(cwd) } });
    expect(result.code).toBe(0);
    expect(result.stderr).toContain('Warning: left out organisation');
    expect(forgedCommands(result)).toEqual([]);
    const exported = parseYaml(result.stdout) as { organisations: Record<string, { billing: Record<string, string> }> };
    expect(exported.organisations.acme?.billing.customerID).toBe('cus ##[set-output name=pwned;]2');

    // -f: the summary of what differs quotes the service's values.
    await writeFile(join(cwd, 'orgs.yaml'), 'version: 1\norganisations:\n  acme:\n    billing:\n      customerID: cus_acme\n');
    const diff = await runCli(['export', '-f', 'orgs.yaml', '--diff'], { cwd, env: { ...env, ...githubEnv(cwd) } });
    expect(diff.code).toBe(0);
    expect(diff.stderr).toContain('customerID');
    expect(forgedCommands(diff)).toEqual([]);
  });

  it('slugs check: the table, with a slug and the service’s reasons that try every form', async () => {
    const { cwd, env, emulator } = await setupEmulatorWorkspace();
    emulator.faults.add({ operation: 'getSlugAvailability', times: Infinity, fault: { kind: 'status', status: 200, body: JSON.stringify({ ok: false, messages: FORGED }) } });
    for (const format of ['text', 'json']) {
      const result = await runCli(['slugs', 'check', '--format', format, '::add-mask::pwned', 'fine-slug'], { cwd, env: { ...env, ...githubEnv(cwd) } });
      expect(result.code).toBe(1);
      expect(result.stdout).toContain('add-mask');
      expect(forgedCommands(result)).toEqual([]);
    }
  });

  it('as a process, leaves a document redirected to a file exactly as it is: the runner cannot read it', async () => {
    const { cwd, env } = await setupEmulatorWorkspace({ 'orgs.yaml': CHANGING_CONFIG }, { data: await hostileData() });
    const out = await open(join(cwd, 'plan.json'), 'w');
    const child = spawn(process.execPath, [CLI_BIN, 'plan', '--format', 'json'], { cwd, env: { PATH: process.env.PATH, ...env, ...githubEnv(cwd) }, stdio: ['ignore', out.fd, 'pipe'] });
    let stderr = '';
    child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
    const code = await new Promise<number | null>((done) => child.on('close', done));
    await out.close();
    expect(code, stderr).toBe(0);
    const text = await readFile(join(cwd, 'plan.json'), 'utf8');
    expect(text).toContain('x ##[set-output name=pwned;]legacy');
    expect(text).not.toContain('\\u005b');
  });

  it('a fatal error, as a process, even when its text holds a line break', async () => {
    const { cwd, env, emulator } = await setupEmulatorWorkspace({ 'orgs.yaml': CHANGING_CONFIG });
    const body = JSON.stringify({ code: 'bad_request', message: FORGED.join('\n') });
    emulator.faults.add({ operation: 'getOrganisations', times: Infinity, fault: { kind: 'status', status: 400, contentType: 'application/json', body } });
    const result = await spawnCli(['plan'], { cwd, env: { ...env, ...githubEnv(cwd) } });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('add-mask');
    expect(forgedCommands(result)).toEqual([]);
  });
});
