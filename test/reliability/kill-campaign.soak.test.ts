/**
 * Reliability case 22: apply, the built CLI as a real child process, killed with SIGKILL at 50+
 * random points and run again, writes nothing twice, takes over the stale lock its killed
 * predecessor left, and converges. A campaign of a minute or more on two cores, so it runs in the
 * soak project (`npm run test:soak`, which CI runs after `npm test`); cases 21 and 23 are in
 * process-faults.test.ts.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import fc from 'fast-check';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { generateEmulatorData } from '../../src/emulator/generate-emulator-data.js';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { BASE_HEADER } from '../../src/state/file/journal-lines.js';
import { lockPathFor, readJournalFile } from '../support/file-state.js';
import { CLI_BIN, runCli, spawnCli } from '../support/run-cli.js';
import { makeWorkspace } from '../support/workspace.js';
import { canaryToken, expectNoCrash, LeakScanner, readLock, signalChild, waitFor } from './support.js';
import { configFor, countEffects, desiredArb, enlargeWorld, expectConverged, type Desired } from './world-model.js';

beforeAll(() => {
  if (!existsSync(CLI_BIN) || !existsSync(new URL('../../dist/cli/main.js', import.meta.url))) {
    throw new Error('This case runs the built CLI: run `npm run build` first (`npm test` does).');
  }
});

const emulators: Emulator[] = [];
afterEach(async () => {
  await Promise.all(emulators.splice(0).map((e) => e.stop()));
});

describe('process faults', () => {
  it('case 22: apply killed with SIGKILL at random points (50+ kill points), then run again, writes nothing twice, takes over the stale lock and converges', async () => {
    const token = canaryToken();
    const base = enlargeWorld(generateEmulatorData({ organisations: 30, token, seed: 7 }), { invitedOrganisations: 5 });
    // A kill point: a share of the requests the run would make (its listing and its remaining
    // changes), plus a few milliseconds; so that kills land anywhere from start-up to the last write.
    const killPoint = fc.noBias(fc.record({ share: fc.integer({ min: 0, max: 999 }).map((n) => n / 1000), extraMs: fc.integer({ min: 0, max: 20 }) }));
    let kills = 0;
    let takeovers = 0;
    let runs = 0;

    await fc.assert(
      fc.asyncProperty(desiredArb(base, token), fc.integer({ min: 5, max: 30 }), fc.array(killPoint, { minLength: 8, maxLength: 8 }), async (desired: Desired, latencyMs, killPoints) => {
        runs += 1;
        const emulator = await startEmulator({ data: base, slugDelayMs: 0, latencyMs });
        emulators.push(emulator);
        try {
          const cwd = await makeWorkspace({ 'orgs.yaml': configFor(desired) });
          const env = { ORGFORM_TOKEN: token, ORGFORM_BASE_URL: emulator.url };
          const leaks = new LeakScanner(token);
          const before = emulator.store.dump();
          const effects = countEffects(emulator.store);
          const statePath = `${cwd}/.orgform/state.json`;
          const lockPath = lockPathFor(statePath);
          const killedPids = new Set<number>();

          // Kill five runs (trying at most eight kill points), each at its own random point.
          let killedHere = 0;
          for (const point of killPoints) {
            if (killedHere === 5) break;
            const lockBefore = existsSync(lockPath) ? await readLock(lockPath) : undefined;
            const pending = await runCli(['plan', '--format', 'json'], { cwd, env: { ...env, ORGFORM_BASE_URL: emulator.url } });
            const remaining = (JSON.parse(pending.stdout) as { changes: unknown[] }).changes.length;
            const requests = Math.floor(point.share * (1 + remaining));
            emulator.resetCounters();
            let pid: number | undefined;
            let exited = false;
            const run = spawnCli(['apply', '--auto-approve'], { cwd, env, onSpawn: (p) => (pid = p) }).finally(() => (exited = true));
            await waitFor(() => pid !== undefined);
            await waitFor(() => exited || emulator.counters.total >= requests, 20_000, 1);
            await waitFor(() => exited, point.extraMs, 1);
            if (!exited) signalChild(pid!, 'SIGKILL');
            const result = await run;
            leaks.add('killed run', result.stdout + result.stderr);
            if (result.signal === 'SIGKILL') {
              killedHere += 1;
              killedPids.add(pid!);
            } else {
              expect(result.code).toBe(0);
              expectNoCrash(result.stdout + result.stderr);
            }
            // A run that got as far as saying so took over the lock its killed predecessor left.
            if (lockBefore && result.stderr.includes('Took over a stale lock')) {
              expect(result.stderr).toContain(`left by pid ${lockBefore.pid} (no longer running)`);
              takeovers += 1;
            }
          }
          kills += killedHere;

          // Then to completion. A lock left behind is taken over: its holder is dead, on this host.
          const left = existsSync(lockPath) ? await readLock(lockPath) : undefined;
          const final = await runCli(['apply', '--auto-approve'], { cwd, env });
          leaks.add('final run', final.stdout + final.stderr);
          expectNoCrash(final.stdout + final.stderr);
          expect(final.code).toBe(0);
          if (left) {
            expect(killedPids.has(left.pid!)).toBe(true);
            expect(final.stderr).toContain(`Took over a stale lock on ${statePath} left by pid ${left.pid} (no longer running).`);
            takeovers += 1;
          } else {
            expect(final.stderr).toBe('');
          }
          expect(existsSync(lockPath)).toBe(false);

          expectConverged(before, emulator.store.dump(), desired, token, effects);
          const plan = await runCli(['plan', '--detailed-exitcode'], { cwd, env });
          expect(plan.stdout).toContain('No changes.');
          expect(plan.code).toBe(0);
          leaks.add('plan', plan.stdout + plan.stderr);
          // The journal is whole (its base written atomically, its logs read to their last whole line,
          // whatever the kill interrupted): it reads as a journal of the current version.
          if (existsSync(statePath)) expect((await readFile(statePath, 'utf8')).split('\n', 1)[0]).toBe(BASE_HEADER);
          if (existsSync(statePath)) expect(Object.keys((await readJournalFile(statePath)).services)).toEqual([emulator.url.replace(/\/$/, '')]);
          await leaks.addTree(dirname(statePath));
          leaks.expectClean();
        } finally {
          await emulator.stop();
        }
      }),
      { numRuns: 10, seed: Number(process.env.ORGFORM_PROPERTY_SEED ?? 20_250_322), endOnFailure: true },
    );
    expect(runs).toBe(10);
    expect(kills).toBeGreaterThanOrEqual(50);
    expect(takeovers).toBeGreaterThan(0);
  }, 240_000);
});
