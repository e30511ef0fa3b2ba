/**
 * Remote state end to end: `orgform apply` and `plan` against the emulator over loopback, with the
 * journal in a real PostgreSQL (test/support/postgres.ts) or a Terraform HTTP backend
 * (test/support/terraform-http-backend.mjs), chosen by ORGFORM_STATE or --state; and the state
 * commands across backends.
 */
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { generateEmulatorData } from '../../src/emulator/generate-emulator-data.js';
import { readStateSettings } from '../../src/cli/settings.js';
import { lockRequest, openState } from '../../src/state/open-state.js';
import { NO_INTEREST } from '../../src/state/journal-index.js';
import { setupEmulatorWorkspace } from '../support/emulator-workspace.js';
import { createTestDatabase, query } from '../support/postgres.js';
import { MATRIX_PROFILES } from '../support/profiles.js';
import { runCli, spawnCli } from '../support/run-cli.js';
import { startTerraformBackend, type TerraformBackend } from '../support/terraform-http-backend.mjs';

/** A state's address as orgform shows it: the user name of the test server's URL hidden with any password. */
const shown = (address: string) => address.replace('postgres://postgres@', 'postgres://[REDACTED]@');
import { CHANGING_CONFIG, makeWorkspace } from '../support/workspace.js';

const BACKENDS = ['postgres', 'http'] as const;
const CREDENTIALS = { ORGFORM_STATE_USERNAME: 'gitlab-ci-token', ORGFORM_STATE_PASSWORD: 'job-token-123' };

const servers: TerraformBackend[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

/** A fresh remote state of that kind: its URL and the environment that reaches it. */
async function remoteState(kind: (typeof BACKENDS)[number]): Promise<{ url: string; env: Record<string, string> }> {
  if (kind === 'postgres') return { url: `${await createTestDatabase('e2e')}?state=prod`, env: {} };
  const server = await startTerraformBackend();
  servers.push(server);
  return { url: `${server.url}/api/v4/projects/42/terraform/state/orgform`, env: CREDENTIALS };
}

describe.each(MATRIX_PROFILES)('remote state (%s)', (profile) => {
  describe.each(BACKENDS)('in %s', (kind) => {
    it('records an apply so that a plan from a fresh checkout with the same state shows No changes for the deletions done', async () => {
      const { cwd, env } = await setupEmulatorWorkspace({ 'orgs.yaml': CHANGING_CONFIG }, { profile });
      const state = await remoteState(kind);
      const withState = { ...env, ...state.env, ORGFORM_STATE: state.url };
      const applied = await runCli(['apply', '--auto-approve'], { cwd, env: withState });
      expect(applied.stderr).toBe('');
      expect(applied.code).toBe(0);
      expect(existsSync(join(cwd, '.orgform'))).toBe(false);

      // A fresh checkout: the same orgs.yaml in another directory, nothing else.
      const fresh = await makeWorkspace({ 'orgs.yaml': CHANGING_CONFIG });
      const plan = await runCli(['plan', '--detailed-exitcode', '--no-color'], { cwd: fresh, env: withState });
      expect(plan.stdout).toContain('No changes.');
      expect(plan.stdout).toContain('2 one-shot changes already done according to the journal');
      expect(plan.code).toBe(0);
      // Without that state the same checkout proposes the deletions again: the journal is what says they are done.
      const without = await runCli(['plan', '--detailed-exitcode', '--no-color'], { cwd: fresh, env });
      expect(without.code).toBe(2);
      expect(without.stdout).toContain('organisations.acme.invitations.revoke.inv_acme_carol');
    });

    it('refuses a second apply on the same state while one holds it, naming the holder, and writes nothing', async () => {
      const { cwd, env, emulator } = await setupEmulatorWorkspace({ 'orgs.yaml': CHANGING_CONFIG }, { profile });
      const state = await remoteState(kind);
      const first = await (await openState({ state: state.url, defaultPath: '/none', cwd, settings: readStateSettings(state.env) })).lock(lockRequest('orgform apply plan.json', {}), NO_INTEREST);
      try {
        const second = await runCli(['apply', '--auto-approve', '--state', state.url], { cwd, env: { ...env, ...state.env } });
        expect(second.code).toBe(1);
        expect(second.stderr).toContain('is locked by');
        expect(second.stderr).toContain(`(lock ID ${first.lock.id})`);
        expect(second.stderr).toContain(`orgform force-unlock ${first.lock.id}`);
        expect(emulator.store.dump().organisations.find((o) => o.id === 'org_acme')?.billing?.billingEmail).toBe('billing@acme.example');
      } finally {
        await first.release();
      }
    });
  });
});

describe('state commands', () => {
  it('migrate a journal file to PostgreSQL and back: the copy checked, the source left as it was; list and pull read it', async () => {
    const { cwd, env } = await setupEmulatorWorkspace({ 'orgs.yaml': CHANGING_CONFIG });
    expect((await runCli(['apply', '--auto-approve'], { cwd, env })).code).toBe(0);
    const file = join(cwd, '.orgform', 'state.json');
    const before = await readFile(file, 'utf8');
    const database = `${await createTestDatabase('migrate')}?state=prod`;

    const there = await runCli(['state', 'migrate', '--to', database], { cwd, env });
    expect(there.stderr).toBe('');
    expect(there.stdout).toContain(`Copied 2 entries from ${file} to ${shown(database)}.`);
    expect(there.stdout).toContain('Read back and checked');
    expect(await readFile(file, 'utf8')).toBe(before);
    expect(existsSync(`${file}.lock`)).toBe(false);

    const list = await runCli(['state', 'list', '--state', database], { cwd, env });
    expect(list.stdout).toContain(`State ${shown(database)}: 2 entries.`);
    expect(list.stdout).toMatch(/organisations\.acme\.invitations\.revoke\.inv_acme_carol +applied +\S+ +run [0-9a-f]{12}/);
    expect((await runCli(['state', 'pull'], { cwd, env: { ...env, ORGFORM_STATE: database } })).stdout).toBe(before);

    const back = await runCli(['state', 'migrate', '--state', database, '--to', 'copy.json'], { cwd, env });
    expect(back.code).toBe(0);
    expect(await readFile(join(cwd, 'copy.json'), 'utf8')).toBe(before);
    // Again: everything is there already, nothing is copied, nothing changes.
    const again = await runCli(['state', 'migrate', '--state', database, '--to', 'copy.json'], { cwd, env });
    expect(again.stdout).toContain('Copied 0 entries');
    expect(again.stdout).toContain('(2 already there, kept as they were)');
  });

  it('refuses to migrate a state that holds nothing (a mistyped --state), and writes nothing to the target', async () => {
    const cwd = await makeWorkspace();
    const result = await runCli(['state', 'migrate', '--state', 'typo/state.json', '--to', 'copy.json'], { cwd, env: {} });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('holds no entries: there is nothing to migrate');
    expect(existsSync(join(cwd, 'copy.json'))).toBe(false);
  });

  it.each(['postgres', 'http', 'file'] as const)('migrate a journal written before orgform recorded runs to %s: copied as it was, and the check passes', async (kind) => {
    const cwd = await makeWorkspace();
    const entries = Object.fromEntries(
      [1, 2, 3].map((i) => [`remove-channel org_${i} chn_${i}`, { kind: 'remove-channel', organisation: `org-${i}`, outcome: 'applied', at: '2025-01-02T03:04:05.000Z' }]),
    );
    const source = join(cwd, 'old.json');
    await writeFile(source, JSON.stringify({ version: 1, services: { 'https://orgs.example.test': entries } }));
    const target = kind === 'file' ? { url: join(cwd, 'copy.json'), env: {} } : await remoteState(kind);
    const migrated = await runCli(['state', 'migrate', '--state', source, '--to', target.url], { cwd, env: target.env });
    expect(migrated.stderr).toBe('');
    expect(migrated.stdout).toContain('Copied 3 entries');
    expect(migrated.code).toBe(0);
    const list = await runCli(['state', 'list', '--state', target.url], { cwd, env: target.env });
    expect(list.stdout).toMatch(/organisations\.org-1\.notificationChannels\.remove\.chn_1 +applied +2025-01-02T03:04:05.000Z +-\n/);
  });

  it('migrate, interrupted by Ctrl+C while it writes to an HTTP backend, finishes the copy, says so and lets go of both locks', async () => {
    const cwd = await makeWorkspace();
    const service = 'https://orgs.example.test';
    const entries = Object.fromEntries(
      Array.from({ length: 30 }, (_, i) => [`remove-channel org_${i} chn_${i}`, { kind: 'remove-channel', organisation: `org-${i}`, outcome: 'applied', at: '2025-01-02T03:04:05.000Z' }]),
    );
    await mkdir(join(cwd, '.orgform'));
    await writeFile(join(cwd, '.orgform', 'state.json'), JSON.stringify({ version: 1, services: { [service]: entries } }));
    const server = await startTerraformBackend();
    servers.push(server);
    // A slow server: each write takes 300 ms, so that the interrupt comes while writes are under way.
    let writes = 0;
    const slow = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', async () => {
        const body = Buffer.concat(chunks);
        if (req.method === 'POST' && !req.url!.endsWith('/lock')) {
          writes += 1;
          await new Promise((r) => setTimeout(r, 300));
        }
        const answer = await fetch(server.url + req.url, { method: req.method, headers: { authorization: req.headers.authorization ?? '', 'content-type': 'application/json' }, ...(body.length > 0 ? { body } : {}) });
        res.writeHead(answer.status).end(await answer.text());
      });
    });
    await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve));
    try {
      const path = '/api/v4/projects/42/terraform/state/orgform';
      const url = `http://127.0.0.1:${(slow.address() as { port: number }).port}${path}`;
      let pid: number | undefined;
      const run = spawnCli(['state', 'migrate', '--to', url], { cwd, env: { ...CREDENTIALS, ORGFORM_STATE_BATCH: '10' }, onSpawn: (p) => (pid = p) });
      for (let i = 0; i < 1000 && writes === 0; i++) await new Promise((r) => setTimeout(r, 10));
      process.kill(pid!, 'SIGINT');
      const result = await run;
      expect(result.signal).toBeNull();
      expect(result.stderr).toContain('Interrupted: finishing the copy');
      expect(result.stdout).toContain(`Copied 30 entries from ${join(cwd, '.orgform', 'state.json')} to ${url}.`);
      expect(result.code).toBe(0);
      expect(server.lockOf(path)).toBeNull();
      expect(Object.keys(JSON.parse(server.versions(path).at(-1)!.body).orgform.services[service])).toHaveLength(30);
      expect(existsSync(join(cwd, '.orgform', 'state.json.lock'))).toBe(false);
    } finally {
      slow.close();
    }
  });

  it('force-unlock breaks a remote lock with its ID', async () => {
    const cwd = await makeWorkspace();
    const database = `${await createTestDatabase('unlock')}?state=prod`;
    const held = await (await openState({ state: database, defaultPath: '/none', cwd })).lock(lockRequest('orgform apply', {}), NO_INTEREST);
    const wrong = await runCli(['force-unlock', '0123456789ab', '--state', database], { cwd });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain(`has no lock with ID 0123456789ab; it is held by pid ${process.pid}`);
    expect(wrong.stderr).toContain(`(lock ID ${held.lock.id})`);
    const right = await runCli(['force-unlock', held.lock.id], { cwd, env: { ORGFORM_STATE: database } });
    expect(right.stdout).toContain(`Released the lock ${held.lock.id} on ${shown(database)} (held by pid ${process.pid} on`);
    await held.release();
  });
});

describe('shards against one PostgreSQL table', () => {
  it('apply four shards at once, each under its own state name, and each shard’s plan then shows No changes', async () => {
    const data = generateEmulatorData({ organisations: 120 });
    const lines = ['version: 1', 'organisations:', ...data.organisations.flatMap((o) => [`  ${o.slug}:`, '    notificationChannels:', `      remove: [chn_${o.id.slice(4)}]`])];
    const { cwd, env } = await setupEmulatorWorkspace({ 'orgs.yaml': `${lines.join('\n')}\n` }, { data });
    const database = await createTestDatabase('shards');
    const shard = (i: number) => ['--shard', `${i}/4`, '--state', `${database}?state=shard-${i}-of-4`];
    const applies = await Promise.all([1, 2, 3, 4].map((i) => runCli(['apply', '--auto-approve', ...shard(i)], { cwd, env })));
    for (const result of applies) {
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
    }
    const rows = await query<{ state: string; n: number }>(database, 'SELECT state, count(*)::int AS n FROM orgform.journal GROUP BY state ORDER BY state');
    expect(rows.map((r) => r.state)).toEqual(['shard-1-of-4', 'shard-2-of-4', 'shard-3-of-4', 'shard-4-of-4']);
    expect(rows.reduce((n, r) => n + r.n, 0)).toBe(120);
    for (const i of [1, 2, 3, 4]) {
      const plan = await runCli(['plan', '--detailed-exitcode', ...shard(i)], { cwd, env });
      expect(plan.stdout).toContain('No changes.');
      expect(plan.code).toBe(0);
    }
  });
});

describe('a killed apply with the state in PostgreSQL', () => {
  it('loses at most the entries not yet written, harmlessly: the next apply finds those changes done, then the plan is empty', async () => {
    const data = generateEmulatorData({ organisations: 40 });
    const lines = ['version: 1', 'organisations:', ...data.organisations.flatMap((o) => [`  ${o.slug}:`, '    notificationChannels:', `      remove: [chn_${o.id.slice(4)}]`])];
    const { cwd, env, emulator } = await setupEmulatorWorkspace({ 'orgs.yaml': `${lines.join('\n')}\n` }, { data, latencyMs: 40 });
    const database = await createTestDatabase('killed');
    const run = { ...env, ORGFORM_STATE: `${database}?state=prod`, ORGFORM_STATE_BATCH: '5', ORGFORM_STATE_FLUSH_MS: '60000' };
    const written = async () => (await query<{ n: number }>(database, 'SELECT count(*)::int AS n FROM orgform.journal').catch(() => [{ n: 0 }]))[0]!.n;

    let pid: number | undefined;
    const killed = spawnCli(['apply', '--auto-approve', '--parallelism', '2'], { cwd, env: run, onSpawn: (p) => (pid = p) });
    for (let i = 0; i < 1500 && (await written()) < 10; i++) await new Promise((r) => setTimeout(r, 10));
    process.kill(pid!, 'SIGKILL');
    expect((await killed).signal).toBe('SIGKILL');

    const recorded = await written();
    const removed = 40 - emulator.store.dump().channels.length;
    expect(recorded).toBeGreaterThanOrEqual(10);
    expect(removed).toBeLessThan(40); // killed part way
    // Not written: the batch filling (< 5), the batch being written (5) and the changes in flight (2).
    expect(removed - recorded).toBeGreaterThanOrEqual(0);
    expect(removed - recorded).toBeLessThanOrEqual(12);

    // The session died with the process, and the lock with it: the next apply goes ahead, and says
    // whose registration it found dead.
    const again = await runCli(['apply', '--auto-approve', '--no-color'], { cwd, env: run });
    expect(again.stderr).toBe(`Took over a stale lock on ${shown(`${database}?state=prod`)} left by pid ${pid} (no longer running).\n`);
    expect(again.code).toBe(0);
    expect(emulator.store.dump().channels).toEqual([]);
    expect(await written()).toBe(40);
    const plan = await runCli(['plan', '--detailed-exitcode'], { cwd, env: run });
    expect(plan.stdout).toContain('No changes.');
  });
});
