/**
 * `orgform plan` end to end against the emulator over loopback HTTP, under every profile of the
 * matrix (lenient: the project's answers to the interface's open points; strict: the hardest
 * plausible answer of each).
 */
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { beforeEach, describe, expect, it } from 'vitest';
import type { ProfileName } from '../../src/emulator/behaviour.js';
import type { Emulator } from '../../src/emulator/server.js';
import { setupEmulatorWorkspace } from '../support/emulator-workspace.js';
import { MATRIX_PROFILES } from '../support/profiles.js';
import { runCli, spawnCli } from '../support/run-cli.js';
import { CHANGING_CONFIG, MATCHING_CONFIG, makeWorkspace } from '../support/workspace.js';
import { bodyOf } from '../support/saved-plan-lines.js';

let emulator: Emulator;
let profile: ProfileName;

async function setup(config: string) {
  const world = await setupEmulatorWorkspace({ 'orgs.yaml': config }, { profile });
  emulator = world.emulator;
  return world;
}

describe.each(MATRIX_PROFILES)('orgform plan (%s)', (name) => {
  beforeEach(() => {
    profile = name;
  });

  it('says No changes and exits 0 with --detailed-exitcode when the file matches the service', async () => {
    const { cwd, env } = await setup(MATCHING_CONFIG);
    const result = await runCli(['plan', '--detailed-exitcode'], { cwd, env });
    expect(result.stderr).toBe('');
    expect(result.stdout).toContain('No changes.');
    expect(result.code).toBe(0);
  });

  it('shows every change in text and exits 2 with --detailed-exitcode', async () => {
    const { cwd, env } = await setup(CHANGING_CONFIG);
    const result = await runCli(['plan', '--detailed-exitcode'], { cwd, env });
    expect(result.code).toBe(2);
    for (const address of [
      'organisations.acme.billing',
      'organisations.acme.invitations.revoke.inv_acme_carol',
      'organisations.acme.notificationChannels.remove.chn_acme_slack',
      'organisations.globex.invitations.accept.inv_globex_ada',
      'activeOrganisation',
    ]) {
      expect(result.stdout).toContain(address);
    }
    expect(result.stdout).toContain('finance@acme.example');
    expect(result.stdout).toMatch(/Plan: 2 to change, 2 to remove, 1 to accept\./);
  });

  it('exits 0 with changes when --detailed-exitcode is not given', async () => {
    const { cwd, env } = await setup(CHANGING_CONFIG);
    expect((await runCli(['plan'], { cwd, env })).code).toBe(0);
  });

  it('shows the same changes as JSON valid against schemas/plan.schema.json', async () => {
    const { cwd, env } = await setup(CHANGING_CONFIG);
    const result = await runCli(['plan', '--format', 'json'], { cwd, env });
    const doc = JSON.parse(result.stdout);
    const schema = JSON.parse(await readFile(new URL('../../schemas/plan.schema.json', import.meta.url), 'utf8'));
    const validate = new Ajv2020({ strict: false }).compile(schema);
    expect(validate(doc), JSON.stringify(validate.errors)).toBe(true);
    expect(doc.changes.map((c: { address: string }) => c.address)).toEqual([
      'organisations.acme.billing',
      'organisations.acme.invitations.revoke.inv_acme_carol',
      'organisations.acme.notificationChannels.remove.chn_acme_slack',
      'organisations.globex.invitations.accept.inv_globex_ada',
      'activeOrganisation',
    ]);
  });

  it('shows the same changes as Markdown for a pull request', async () => {
    const { cwd, env } = await setup(CHANGING_CONFIG);
    const result = await runCli(['plan', '--format', 'markdown'], { cwd, env });
    // The comment: the counts, every kind and field at a glance, then their changes, values escaped for Markdown.
    expect(result.stdout).toMatch(/^\*\*orgform plan:\*\* 2 to change, 2 to remove, 1 to accept/);
    expect(result.stdout).toContain('| Kind and field | Changes | Organisations | Groups | Single changes |');
    expect(result.stdout).toContain('inv&#95;globex&#95;ada');
    expect(result.stdout).toContain('chn&#95;acme&#95;slack');
  });

  it('never writes to the service', async () => {
    const { cwd, env } = await setup(CHANGING_CONFIG);
    await runCli(['plan'], { cwd, env });
    await runCli(['plan', '--format', 'json'], { cwd, env });
    expect(emulator.counters.writes).toBe(0);
    expect(emulator.requestLog.every((r) => r.method === 'GET')).toBe(true);
  });

  it('restricts the plan to --target organisations', async () => {
    const { cwd, env } = await setup(CHANGING_CONFIG);
    const result = await runCli(['plan', '--target', 'globex', '--format', 'json'], { cwd, env });
    const doc = JSON.parse(result.stdout);
    expect(doc.changes.map((c: { address: string }) => c.address)).toEqual(['organisations.globex.invitations.accept.inv_globex_ada']);
  });

  it('names an organisation it cannot find, shows the plan for the others, and exits 1', async () => {
    const { cwd, env } = await setup(`version: 1
organisations:
  nowhere-inc: {}
  acme:
    billing:
      billingEmail: finance@acme.example
`);
    const result = await runCli(['plan'], { cwd, env });
    expect(result.code).toBe(1);
    expect(result.stdout).toContain('nowhere-inc');
    expect(result.stdout).toMatch(/declare its id/);
    expect(result.stdout).toContain('organisations.acme.billing');
  });

  it('names the organisation and the operation when the service fails, with code, message and cause', async () => {
    const { cwd, env } = await setup(`version: 1
organisations:
  globex:
    id: org_globex
    invitations:
      revoke: [inv_x]
`);
    emulator.faults.add({ operation: 'getOrganisation', fault: { kind: 'status', status: 403, body: JSON.stringify({ code: 'forbidden', message: 'No access', cause: 'policy p1' }), contentType: 'application/json' } });
    const result = await runCli(['plan'], { cwd, env });
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/globex/);
    expect(result.stdout).toMatch(/getOrganisation/);
    expect(result.stdout).toMatch(/forbidden: No access \(cause: policy p1\)/);
  });

  it('saves a plan with --out that carries the observed values and the config hash', async () => {
    const { cwd, env } = await setup(CHANGING_CONFIG);
    const result = await runCli(['plan', '--out', 'plan.json'], { cwd, env });
    expect(result.code).toBe(0);
    const text = await readFile(join(cwd, 'plan.json'), 'utf8');
    const saved = bodyOf(text);
    expect(saved.orgformSavedPlan).toBe(4);
    expect(saved.baseUrl).toBe(emulator.url);
    expect(saved.configFiles[0].sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(saved.plan.observed.acme.billing.billingEmail).toBe('billing@acme.example');
    expect(saved.checksum).toMatch(/^[0-9a-f]{64}$/);
    expect(text).not.toContain('demo-token');
    // The observations' spool beside it is gone.
    expect((await readdir(cwd)).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });

  it('says what to do, and not that orgform has a bug, when --out cannot be written', async () => {
    const { cwd, env } = await setup(CHANGING_CONFIG);
    await writeFile(join(cwd, 'not-a-directory'), 'x');
    const result = await runCli(['plan', '--out', 'not-a-directory/plan.json'], { cwd, env });
    expect(result.code).toBe(1);
    expect(result.stderr).not.toMatch(/bug in orgform/);
    expect(result.stderr).toMatch(/Cannot write not-a-directory\/plan\.json/);
    expect(result.stderr).toMatch(/choose another path for --out/);
  });

  it('refuses a token given on the command line', async () => {
    const { cwd, env } = await setup(MATCHING_CONFIG);
    const result = await runCli(['plan', '--token', 'demo-token'], { cwd, env: { ORGFORM_BASE_URL: env.ORGFORM_BASE_URL } });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/Refusing --token/);
    expect(emulator.counters.total).toBe(0);
  });

  it('reads the token from --token-file', async () => {
    const { env } = await setup(MATCHING_CONFIG);
    const cwd = await makeWorkspace({ 'orgs.yaml': MATCHING_CONFIG, 'token.txt': 'demo-token\n' });
    const result = await runCli(['plan', '--token-file', 'token.txt'], { cwd, env: { ORGFORM_BASE_URL: env.ORGFORM_BASE_URL } });
    expect(result.code).toBe(0);
  });
});

// No open point is in play here (nothing listens; an interrupt while the listing is on its way),
// and each spawns the built CLI: run once, against the lenient emulator.
describe('orgform plan as a process', () => {
  it('as a process, says the service refuses connections after its retries, and exits 1 rather than vanishing', async () => {
    const cwd = await makeWorkspace({ 'orgs.yaml': MATCHING_CONFIG });
    // A port that was free a moment ago: nothing listens there.
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    await new Promise((resolve) => server.close(resolve));
    const env = { ORGFORM_TOKEN: 'demo-token', ORGFORM_BASE_URL: `http://127.0.0.1:${port}`, ORGFORM_RETRY_BASE_MS: '100', ORGFORM_MAX_ATTEMPTS: '3' };
    const result = await spawnCli(['plan'], { cwd, env });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/getOrganisations \(all pages\) failed after 3 attempts: connection refused/);
  });

  it('as a process, stops at the first Ctrl+C instead of ignoring it, as a process stopped by SIGINT', async () => {
    const { cwd, env } = await setupEmulatorWorkspace({ 'orgs.yaml': MATCHING_CONFIG }, { latencyMs: 5_000 });
    let pid: number | undefined;
    const run = spawnCli(['plan'], { cwd, env, onSpawn: (p) => (pid = p) });
    // Wait until the listing is on its way (the emulator holds it for 5 s), then interrupt.
    await new Promise((resolve) => setTimeout(resolve, 800));
    const interruptedAt = Date.now();
    process.kill(pid!, 'SIGINT');
    const result = await run;
    expect(Date.now() - interruptedAt).toBeLessThan(2_000);
    // No handler: the signal's default ends it (a shell shows 130), whatever it is doing.
    expect(result.signal).toBe('SIGINT');
    expect(result.stdout).toBe('');
  });
});

describe.each(MATRIX_PROFILES)('orgform plan --max-changes (%s)', (name) => {
  beforeEach(() => {
    profile = name;
  });

  it('shows the budget and exits 1 when the plan is over it', async () => {
    const { cwd, env } = await setup(CHANGING_CONFIG);
    const result = await runCli(['plan', '--max-changes', '3'], { cwd, env });
    expect(result.stdout).toContain('Change budget: 5 of at most 3 — over budget');
    expect(result.stderr).toMatch(/more than --max-changes 3/);
    expect(result.code).toBe(1);
  });

  it('exits as usual within the budget', async () => {
    const { cwd, env } = await setup(CHANGING_CONFIG);
    const result = await runCli(['plan', '--max-changes', '5', '--detailed-exitcode'], { cwd, env });
    expect(result.stdout).toContain('Change budget: 5 of at most 5.');
    expect(result.code).toBe(2);
  });
});

describe('orgform plan --out and the file it would replace', () => {
  it('refuses to replace a file that is not an orgform plan (the configuration itself), before reading the service', async () => {
    const { cwd, env, emulator } = await setupEmulatorWorkspace({ 'orgs.yaml': CHANGING_CONFIG });
    const result = await runCli(['plan', '-f', 'orgs.yaml', '--out', 'orgs.yaml'], { cwd, env });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('orgs.yaml exists and is not an orgform plan: --out would replace it. Nothing was written; choose another --out, or pass --force to replace it.');
    expect(await readFile(join(cwd, 'orgs.yaml'), 'utf8')).toBe(CHANGING_CONFIG);
    expect(emulator.counters.total).toBe(0);
  });

  it('replaces a plan it saved before, an empty file, and with --force anything else', async () => {
    const { cwd, env } = await setupEmulatorWorkspace({ 'orgs.yaml': CHANGING_CONFIG, 'empty.json': '', 'notes.txt': 'mine\n' });
    expect((await runCli(['plan', '--out', 'plan.json'], { cwd, env })).code).toBe(0);
    expect((await runCli(['plan', '--out', 'plan.json'], { cwd, env })).code).toBe(0);
    expect((await runCli(['plan', '--out', 'empty.json'], { cwd, env })).code).toBe(0);
    expect(bodyOf(await readFile(join(cwd, 'empty.json'), 'utf8')).orgformSavedPlan).toBe(4);
    expect((await runCli(['plan', '--out', 'notes.txt'], { cwd, env })).code).toBe(1);
    expect((await runCli(['plan', '--out', 'notes.txt', '--force'], { cwd, env })).code).toBe(0);
    expect(bodyOf(await readFile(join(cwd, 'notes.txt'), 'utf8')).orgformSavedPlan).toBe(4);
  });

  it('refuses a directory as a directory, before reading the service', async () => {
    const { cwd, env, emulator } = await setupEmulatorWorkspace({ 'orgs.yaml': CHANGING_CONFIG, 'plans/.keep': '' });
    const result = await runCli(['plan', '--out', 'plans', '--force'], { cwd, env });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('Cannot write plans: it is a directory. Nothing was written; give --out the path of a file');
    expect(emulator.counters.total).toBe(0);
  });
});
