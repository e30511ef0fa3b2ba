/**
 * Reliability cases 21 and 23: process faults, with the built CLI (bin/orgform.js, built by
 * `npm test`'s pretest) as a real child process: two applies at once, and SIGINT during apply, also
 * while every request waits out a long Retry-After. Case 22, apply killed with SIGKILL at 50+
 * random points, is a campaign of its own in the soak project: kill-campaign.soak.test.ts.
 */
import { existsSync } from 'node:fs';
import { readFile, readdir } from 'node:fs/promises';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { generateEmulatorData } from '../../src/emulator/generate-emulator-data.js';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { lockPathFor, readJournalFile } from '../support/file-state.js';
import { CLI_BIN, runCli, spawnCli } from '../support/run-cli.js';
import { setupBillingWorld } from '../support/emulator-workspace.js';
import { MATRIX_PROFILES } from '../support/profiles.js';
import { CHANGING_CONFIG, makeWorkspace } from '../support/workspace.js';
import { canaryToken, expectNoCrash, LeakScanner, readLock, signalChild, startFaultProxy, startWorld, startWorldHeldAtWrites, waitFor } from './support.js';
import { configFor, countEffects, expectConverged, type Desired } from './world-model.js';

beforeAll(() => {
  if (!existsSync(CLI_BIN) || !existsSync(new URL('../../dist/cli/main.js', import.meta.url))) {
    throw new Error('These cases run the built CLI: run `npm run build` first (`npm test` does).');
  }
});

const emulators: Emulator[] = [];
afterEach(async () => {
  await Promise.all(emulators.splice(0).map((e) => e.stop()));
});

const CHANGES = CHANGING_CONFIG;

describe('process faults', () => {
  it('case 21: of two applies at once on the same journal, the second refuses at once, naming the first, and sends nothing', async () => {
    // The first apply is held at its first write, lock in hand, until the second has ended: the
    // order holds however slowly either starts. Were the second to wait for the lock, it would
    // wait for ever (and the test time out): that is what "at once" means here, not a duration.
    const { world, writeHeld, release } = await startWorldHeldAtWrites({ config: CHANGES });
    // The second apply goes through a proxy of its own, so that anything it sends can be seen apart.
    const proxy = await startFaultProxy(world.emulator.url);

    let firstPid: number | undefined;
    const first = world.spawn(['apply', '--auto-approve'], { onSpawn: (pid) => (firstPid = pid) });
    try {
      expect(await writeHeld()).toBe(true);
      const lockPath = lockPathFor(world.journalPath);
      const holder = await readLock(lockPath);
      expect(holder.pid).toBe(firstPid);

      const second = await world.spawn(['apply', '--auto-approve'], { env: { ORGFORM_BASE_URL: proxy.url } });
      expect(second.code).toBe(1);
      expect(second.stderr).toContain(`The state at ${world.journalPath} is locked by pid ${firstPid} on `);
      expect(second.stderr).toContain(`orgform force-unlock ${holder.id} --state ${world.journalPath}`);
      expect(second.stdout).toBe('');
      expect(proxy.records).toEqual([]);
      // Still held: the first has written nothing yet.
      expect(world.emulator.requestLog.filter((r) => r.method !== 'GET')).toEqual([]);
    } finally {
      release();
    }

    const done = await first;
    expect(done.code).toBe(0);
    expect(done.stdout).toMatch(/Apply complete: 5 applied, 0 already done\./);
    expect(existsSync(lockPathFor(world.journalPath))).toBe(false);
    expect((await world.cli(['plan', '--detailed-exitcode'])).code).toBe(0);
    world.leaks.expectClean();
  });

  it('case 23: SIGINT during apply lets the changes in flight finish, writes the journal, prints the summary, and a re-run converges', async () => {
    const token = canaryToken();
    const data = generateEmulatorData({ organisations: 12, token, seed: 3 });
    const emulator = await startEmulator({ data, slugDelayMs: 0, latencyMs: 150 });
    emulators.push(emulator);
    const desired: Desired = {
      organisations: data.organisations.map((o, i) => ({
        slug: o.slug,
        id: o.id,
        declareId: false,
        ...(i % 2 === 0 ? { billing: { billingEmail: `finance+${i}@new.example` } } : {}),
        accept: [],
        revoke: [],
        remove: [`chn_${o.id.slice(4)}`],
      })),
    };
    const cwd = await makeWorkspace({ 'orgs.yaml': configFor(desired) });
    const env = { ORGFORM_TOKEN: token, ORGFORM_BASE_URL: emulator.url };
    const before = emulator.store.dump();
    const effects = countEffects(emulator.store);

    let pid: number | undefined;
    const run = spawnCli(['apply', '--auto-approve', '--parallelism', '2'], { cwd, env, onSpawn: (p) => (pid = p) });
    expect(await waitFor(() => emulator.counters.writes >= 1, 15_000, 1)).toBe(true);
    expect(signalChild(pid!, 'SIGINT')).toBe(true);
    const result = await run;

    expect(result.signal).toBeNull();
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/^Interrupted: no new changes will start; waiting for [12] changes? in flight to finish\.$/m);
    const summary = /^Apply interrupted: (\d+) applied, 0 already done, (\d+) not started; run orgform apply again to finish\.$/m.exec(result.stdout);
    expect(summary).not.toBeNull();
    const applied = Number(summary![1]);
    expect(applied).toBeGreaterThanOrEqual(1);
    expect(Number(summary![2])).toBeGreaterThan(0);
    expect(result.stdout).toMatch(/^Apply results: \d+ applied, 0 already done, 0 skipped, \d+ not started, 0 failed/m);
    expectNoCrash(result.stdout + result.stderr);

    // What was in flight finished: every write the service received was answered.
    const writes = emulator.requestLog.filter((r) => r.method !== 'GET');
    expect(writes.every((r) => typeof r.status === 'number' && r.status < 300)).toBe(true);
    expect(writes).toHaveLength(applied);
    // The journal holds exactly the one-shot changes that completed.
    const removed = [...result.stdout.matchAll(/^✓ organisations\.([\w-]+)\.notificationChannels\.remove\.(\w+) applied/gm)].map(([, slug, channel]) => {
      const org = data.organisations.find((o) => o.slug === slug)!;
      return `remove-channel ${org.id} ${channel}`;
    });
    const journal = await readJournalFile(`${cwd}/.orgform/state.json`);
    expect(Object.keys(journal.services[emulator.url] ?? {}).sort()).toEqual(removed.sort());
    expect([...effects.keys()].map((k) => k.replace('deleteNotificationChannel', 'remove-channel')).sort()).toEqual(removed.sort());
    expect(existsSync(`${cwd}/.orgform/state.json.lock`)).toBe(false);

    const again = await runCli(['apply', '--auto-approve'], { cwd, env });
    expect(again.code).toBe(0);
    expectConverged(before, emulator.store.dump(), desired, token, effects);
    expect((await runCli(['plan', '--detailed-exitcode'], { cwd, env })).code).toBe(0);
    const leaks = new LeakScanner(token);
    leaks.add('interrupted', result.stdout + result.stderr);
    leaks.add('again', again.stdout + again.stderr);
    await leaks.addTree(cwd);
    leaks.expectClean();
    // Temp files from the interrupted run's journal writes are not left behind.
    expect((await readdir(`${cwd}/.orgform`)).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it.each(
    MATRIX_PROFILES.flatMap((profile) => [
      { profile, wait: 'waiting at the rate limiter for a 429 with Retry-After: 300', fault: { kind: 'status', status: 429, retryAfter: 300 } as const },
      { profile, wait: 'in a 30 s backoff after a 503', fault: { kind: 'status', status: 503, retryAfter: 30 } as const },
    ]),
  )('case 23b ($profile): SIGINT ends apply at once while a change is $wait; not sent, it is not started, not failed', async ({ profile, fault }) => {
    const world = await setupBillingWorld(6, { profile });
    world.emulator.faults.add({ operation: 'updateBillingDetails', fault });
    let pid: number | undefined;
    const run = spawnCli(['apply', '--auto-approve', '--parallelism', '1'], { cwd: world.cwd, env: world.env, onSpawn: (p) => (pid = p) });
    expect(await waitFor(() => world.emulator.requestLog.some((r) => r.status === fault.status), 15_000, 1)).toBe(true);
    expect(signalChild(pid!, 'SIGINT')).toBe(true);
    // Before, the interrupted apply sat the wait out (300 s; 30 s).
    const result = await run;
    expect(result.signal).toBeNull();
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/^Apply interrupted: 0 applied, 0 already done, 6 not started; run orgform apply again to finish\.$/m);
    expect(result.stdout).toMatch(/^Apply results: 0 applied, 0 already done, 0 skipped, 6 not started, 0 failed/m);
    expect(result.stdout.match(/^– organisations\.org-\d+\.billing not started: its request was not sent: interrupted$/gm)).toHaveLength(1);
    expectNoCrash(result.stdout + result.stderr);
    expect(world.changed()).toBe(0);
    // The one write the service saw is the one it refused; nothing was sent after the signal.
    expect(world.emulator.requestLog.filter((r) => r.method !== 'GET').map((r) => r.status)).toEqual([fault.status]);
  });
});
