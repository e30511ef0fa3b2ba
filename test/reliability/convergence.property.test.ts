/**
 * Reliability cases 24–25 (issue 5): against the emulator with faults injected — 429 with
 * Retry-After, 503s, dropped connections, lost responses on every kind of write — apply converges,
 * every declared change is in effect exactly once, nothing undeclared was touched, and plan
 * afterwards shows `No changes.` (exit 0 with --detailed-exitcode). A property over random
 * desired and current states with random faults; then the same with apply killed at a random
 * point and run again.
 */
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { MATRIX_PROFILES } from '../support/profiles.js';
import { runCli, spawnCli, type CliResult } from '../support/run-cli.js';
import { makeWorkspace } from '../support/workspace.js';
import { canaryToken, LeakScanner, signalChild, STACK_LINE, waitFor } from './support.js';
import { configFor, countEffects, desiredArb, expectConverged, faultScheduleArb, smallWorldArb } from './world-model.js';

/** Short backoff for the CLI (its default base is 250 ms); Retry-After is still honoured in full. */
const FAST_RETRIES = { ORGFORM_RETRY_BASE_MS: '20' };

const emulators: Emulator[] = [];
afterEach(async () => {
  await Promise.all(emulators.splice(0).map((e) => e.stop()));
});

function expectNoCrash(text: string): void {
  expect(text).not.toMatch(STACK_LINE);
  expect(text).not.toContain('bug in orgform');
}

const token = canaryToken();
const scenarioArb = smallWorldArb(token).chain((world) =>
  fc.record({ world: fc.constant(world), desired: desiredArb(world, token), faults: faultScheduleArb(), seed: fc.integer() }),
);

// Under every profile of the matrix: the answers to the interface's open points (billing PUT that
// replaces, pages of 50, lagging memberships, 410 for gone channels, ...) are the emulator's too.
describe.each(MATRIX_PROFILES)('convergence (%s)', (profile) => {
  it('case 24: with random faults on reads and every kind of write, apply converges over random worlds: each declared change exactly once, nothing undeclared touched, then No changes', async () => {
    let applies = 0;
    let faultsHit = 0;
    await fc.assert(
      fc.asyncProperty(scenarioArb, async ({ world, desired, faults }) => {
        const emulator = await startEmulator({ data: world, slugDelayMs: 0, profile });
        emulators.push(emulator);
        try {
          const cwd = await makeWorkspace({ 'orgs.yaml': configFor(desired) });
          const env = { ORGFORM_TOKEN: token, ORGFORM_BASE_URL: emulator.url, ...FAST_RETRIES };
          const leaks = new LeakScanner(token);
          const before = emulator.store.dump();
          const effects = countEffects(emulator.store);
          for (const rule of faults) emulator.faults.add(rule);

          // Faults can outlast the bounded retries of one run: run again, as a user would.
          const code = await applyUntilDone(emulator, cwd, env, (result, run) => {
            applies += 1;
            leaks.add(`apply ${run} stdout`, result.stdout);
            leaks.add(`apply ${run} stderr`, result.stderr);
            expectNoCrash(result.stdout + result.stderr);
            expect([0, 1]).toContain(result.code);
          });
          expect(code).toBe(0);
          faultsHit += faults.reduce((n, r) => n + (r.times ?? 1), 0) - emulator.faults.pending().reduce((n, r) => n + (r.times ?? 1), 0);
          emulator.faults.clear();

          expectConverged(before, emulator.store.dump(), desired, token, effects);
          const plan = await runCli(['plan', '--detailed-exitcode'], { cwd, env });
          expect(plan.stdout).toContain('No changes.');
          expect(plan.code).toBe(0);
          leaks.add('plan', plan.stdout + plan.stderr);
          await leaks.addTree(cwd);
          leaks.expectClean();
        } finally {
          await emulator.stop();
        }
      }),
      { numRuns: 25, seed: Number(process.env.ORGFORM_PROPERTY_SEED ?? 20_250_305), endOnFailure: true },
    );
    // The faults were not all left unused.
    expect(faultsHit).toBeGreaterThan(10);
    expect(applies).toBeGreaterThanOrEqual(25);
  }, 240_000);

  it('case 25: with random faults and apply killed (SIGKILL) at a random point then run again, apply still converges with each change exactly once', async () => {
    let kills = 0;
    await fc.assert(
      fc.asyncProperty(scenarioArb, fc.noBias(fc.record({ requests: fc.integer({ min: 0, max: 20 }), extraMs: fc.integer({ min: 0, max: 15 }) })), async ({ world, desired, faults }, killAt) => {
        const emulator = await startEmulator({ data: world, slugDelayMs: 0, latencyMs: 10, profile });
        emulators.push(emulator);
        try {
          const cwd = await makeWorkspace({ 'orgs.yaml': configFor(desired) });
          const env = { ORGFORM_TOKEN: token, ORGFORM_BASE_URL: emulator.url, ...FAST_RETRIES };
          const leaks = new LeakScanner(token);
          const before = emulator.store.dump();
          const effects = countEffects(emulator.store);
          for (const rule of faults) emulator.faults.add(rule);

          let pid: number | undefined;
          let exited = false;
          const killed = spawnCli(['apply', '--auto-approve'], { cwd, env, onSpawn: (p) => (pid = p) }).finally(() => (exited = true));
          // The kill point: after the service has seen a random number of requests (reads or
          // writes), plus a few milliseconds.
          await waitFor(() => pid !== undefined);
          await waitFor(() => exited || emulator.counters.total >= killAt.requests, 20_000, 1);
          await waitFor(() => exited, killAt.extraMs, 1);
          if (!exited) signalChild(pid!, 'SIGKILL');
          const first = await killed;
          if (first.signal === 'SIGKILL') kills += 1;
          leaks.add('killed stdout', first.stdout);
          leaks.add('killed stderr', first.stderr);

          const code = await applyUntilDone(emulator, cwd, env, (result, run) => {
            leaks.add(`apply ${run}`, result.stdout + result.stderr);
            expectNoCrash(result.stdout + result.stderr);
          });
          expect(code).toBe(0);
          emulator.faults.clear();
          expectConverged(before, emulator.store.dump(), desired, token, effects);
          const plan = await runCli(['plan', '--detailed-exitcode'], { cwd, env });
          expect(plan.code).toBe(0);
          await leaks.addTree(cwd);
          leaks.expectClean();
        } finally {
          await emulator.stop();
        }
      }),
      { numRuns: 20, seed: Number(process.env.ORGFORM_PROPERTY_SEED ?? 20_250_306), endOnFailure: true },
    );
    expect(kills).toBeGreaterThanOrEqual(10);
  }, 240_000);
});

/** Runs apply up to four times, as a user would after failures, clearing the faults before the last try; the last exit code. */
async function applyUntilDone(
  emulator: Emulator,
  cwd: string,
  env: Record<string, string>,
  onResult: (result: CliResult, run: number) => void,
): Promise<number> {
  let code = -1;
  for (let run = 0; run < 4 && code !== 0; run += 1) {
    if (run === 3) emulator.faults.clear();
    const result = await runCli(['apply', '--auto-approve'], { cwd, env });
    onResult(result, run);
    code = result.code;
  }
  return code;
}
