/**
 * The bulk example as shipped: examples/bulk plans, applies and converges against the emulator
 * started with the data the generator writes beside it (the commands docs/bulk.md gives), over
 * loopback, under every profile. In the soak project (`npm run test:soak`): two plans of 300
 * organisations and an apply of 481 changes per profile. The generator's own tests are
 * bulk-example.test.ts.
 */
import { cpSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readEmulatorData } from '../../src/emulator/data.js';
import { setupEmulatorWorkspace } from '../support/emulator-workspace.js';
import { MATRIX_PROFILES } from '../support/profiles.js';
import { runCli } from '../support/run-cli.js';

const ROOT = join(import.meta.dirname, '..', '..');
const BULK = join(ROOT, 'examples', 'bulk');

/** What examples/bulk declares, counted from its files: what the first plan must show. */
function declared(): { organisations: number; accept: number; remove: number } {
  const text = readdirSync(BULK).filter((n) => n.endsWith('.yaml')).map((n) => readFileSync(join(BULK, n), 'utf8')).join('\n');
  const ids = (key: string) => [...text.matchAll(new RegExp(`^ +${key}: \\[(.*)\\]$`, 'gm'))].flatMap((m) => m[1]!.split(', '));
  return { organisations: [...text.matchAll(/^ {4}id: /gm)].length, accept: ids('accept').length, remove: ids('revoke').length + ids('remove').length };
}

describe.each(MATRIX_PROFILES)('examples/bulk against the emulator started with its data (%s)', (profile) => {
  it('plans every declared change with no problem, applies them all, and then plans no changes', async () => {
    const { cwd, env } = await setupEmulatorWorkspace({}, { profile, data: await readEmulatorData(join(BULK, 'emulator-data.json')) });
    // In a repository of its own, as a user keeps it: configuration is read only from the working tree.
    cpSync(BULK, join(cwd, 'bulk'), { recursive: true, filter: (source) => !source.endsWith('.json') });
    const args = ['-f', 'bulk', '--state', join(cwd, 'state.json')];
    const { organisations, accept, remove } = declared();

    const plan = await runCli(['plan', ...args, '--format', 'json', '--detailed-exitcode'], { cwd, env });
    expect(plan.stderr).toBe('');
    expect(plan.code).toBe(2);
    expect(JSON.parse(plan.stdout).summary).toEqual({ change: organisations, remove, accept, unchanged: 0, problems: 0 });

    const apply = await runCli(['apply', ...args, '--auto-approve', '--parallelism', '20'], { cwd, env });
    expect(apply.code).toBe(0);
    expect(apply.stdout).toContain(`${organisations + remove + accept} applied, 0 already done, 0 skipped, 0 not started, 0 failed`);

    const again = await runCli(['plan', ...args, '--detailed-exitcode'], { cwd, env });
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('No changes.');
    // Two plans of 300 organisations and an apply of 481 changes: about 3 s alone, several times
    // that while the whole suite shares two cores.
  }, 120_000);
});
