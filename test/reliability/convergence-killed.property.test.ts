/**
 * Reliability case 25 (issue 5): as case 24 (convergence.property.test.ts), with apply killed
 * (SIGKILL) at a random point and run again: it still converges, each change in effect exactly once.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { startEmulator } from '../../src/emulator/server.js';
import { MATRIX_PROFILES } from '../support/profiles.js';
import { runCli, spawnCli } from '../support/run-cli.js';
import { makeWorkspace } from '../support/workspace.js';
import { applyUntilDone, emulators, expectNoCrash, FAST_RETRIES, scenarioArb, token } from './convergence-scenarios.js';
import { LeakScanner, signalChild, waitFor } from './support.js';
import { configFor, countEffects, expectConverged } from './world-model.js';

// Under every profile of the matrix, as case 24.
describe.each(MATRIX_PROFILES)('convergence (%s)', (profile) => {
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
