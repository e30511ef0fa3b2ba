/**
 * Reliability case 24 (issue 5): against the emulator with faults injected — 429 with
 * Retry-After, 503s, dropped connections, lost responses on every kind of write — apply converges,
 * every declared change is in effect exactly once, nothing undeclared was touched, and plan
 * afterwards shows `No changes.` (exit 0 with --detailed-exitcode). A property over random
 * desired and current states with random faults. Case 25, the same with apply killed part way,
 * is convergence-killed.property.test.ts.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { startEmulator } from '../../src/emulator/server.js';
import { MATRIX_PROFILES } from '../support/profiles.js';
import { runCli } from '../support/run-cli.js';
import { propertyRuns } from '../support/soak.js';
import { makeWorkspace } from '../support/workspace.js';
import { applyUntilDone, emulators, expectNoCrash, FAST_RETRIES, scenarioArb, token } from './convergence-scenarios.js';
import { LeakScanner } from './support.js';
import { configFor, countEffects, expectConverged } from './world-model.js';

/** 25 worlds a profile in the soak project; 3 in `npm test` (about 2 s each). */
const NUM_RUNS = propertyRuns(25, 3);

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
      { numRuns: NUM_RUNS, seed: Number(process.env.ORGFORM_PROPERTY_SEED ?? 20_250_305), endOnFailure: true },
    );
    // The faults were not all left unused.
    expect(faultsHit).toBeGreaterThan(NUM_RUNS * 0.4);
    expect(applies).toBeGreaterThanOrEqual(NUM_RUNS);
  }, 240_000);
});
