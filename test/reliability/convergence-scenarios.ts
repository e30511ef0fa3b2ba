/**
 * What the two convergence properties (cases 24 and 25) share: random worlds with random faults,
 * a canary token, short backoff, and applying again as a user would. Two files, so that the two
 * long properties run side by side in `npm run test:soak`.
 */
import fc from 'fast-check';
import { afterEachTest } from '../support/after-each-test.js';
import type { Emulator } from '../../src/emulator/server.js';
import { runCli, type CliResult } from '../support/run-cli.js';
import { canaryToken } from './support.js';
import { desiredArb, faultScheduleArb, smallWorldArb } from './world-model.js';

/** Short backoff for the CLI (its default base is 250 ms); Retry-After is still honoured in full. */
export const FAST_RETRIES = { ORGFORM_RETRY_BASE_MS: '20' };

/** Emulators still running when a property fails part way; stopped after each test. */
export const emulators: Emulator[] = [];
afterEachTest(async () => {
  await Promise.all(emulators.splice(0).map((e) => e.stop()));
});

export { expectNoCrash } from './support.js';

export const token = canaryToken();
export const scenarioArb = smallWorldArb(token).chain((world) =>
  fc.record({ world: fc.constant(world), desired: desiredArb(world, token), faults: faultScheduleArb(), seed: fc.integer() }),
);

/** Runs apply up to four times, as a user would after failures, clearing the faults before the last try; the last exit code. */
export async function applyUntilDone(
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
