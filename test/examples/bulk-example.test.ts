/**
 * The bulk example as shipped: its generator answers --help and bad arguments like a command-line
 * tool, and examples/bulk plans, applies and converges against the emulator started with the data
 * the generator writes beside it (the commands docs/bulk.md gives), over loopback, under every profile.
 */
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { readEmulatorData } from '../../src/emulator/data.js';
import { setupEmulatorWorkspace } from '../support/emulator-workspace.js';
import { MATRIX_PROFILES } from '../support/profiles.js';
import { runCli } from '../support/run-cli.js';
import { makeWorkspace } from '../support/workspace.js';

const ROOT = join(import.meta.dirname, '..', '..');
const BULK = join(ROOT, 'examples', 'bulk');
const GENERATE = join(ROOT, 'examples', 'generate-bulk.mjs');

async function generate(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [GENERATE, ...args]);
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

/** What examples/bulk declares, counted from its files: what the first plan must show. */
function declared(): { organisations: number; accept: number; remove: number } {
  const text = readdirSync(BULK).filter((n) => n.endsWith('.yaml')).map((n) => readFileSync(join(BULK, n), 'utf8')).join('\n');
  const ids = (key: string) => [...text.matchAll(new RegExp(`^ +${key}: \\[(.*)\\]$`, 'gm'))].flatMap((m) => m[1]!.split(', '));
  return { organisations: [...text.matchAll(/^ {4}id: /gm)].length, accept: ids('accept').length, remove: ids('revoke').length + ids('remove').length };
}

describe('examples/generate-bulk.mjs', () => {
  it('prints its usage with examples for --help and -h, and exits 0', async () => {
    for (const flag of ['--help', '-h']) {
      const result = await generate([flag]);
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(/^Usage: node examples\/generate-bulk\.mjs \[--count N\] \[--files K\] \[--out DIR\]/);
      expect(result.stdout).toContain('--count 10000 --files 1 --out /tmp/bulk');
    }
  });

  it.each([
    [['--bogus'], "Unknown option '--bogus'"],
    [['--count', 'x'], '--count must be a whole number from 1 to 1000000 (got "x")'],
    [['--count', '0'], '--count must be a whole number from 1 to 1000000 (got "0")'],
    [['--files', '1.5'], '--files must be a whole number from 1 to 1000 (got "1.5")'],
    [['stray'], "Unexpected argument 'stray'"],
  ])('refuses %j with one clear line and a pointer to --help, no stack trace, exit 2', async (args, message) => {
    const result = await generate(args);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(`generate-bulk: ${message}${message.startsWith('Unexpected') ? '. This command does not take positional arguments' : ''}\nRun node examples/generate-bulk.mjs --help for the usage.\n`);
  });

  it('regenerates the committed emulator data byte for byte', async () => {
    const out = await makeWorkspace();
    expect((await generate(['--out', out])).code).toBe(0);
    expect(readFileSync(join(out, 'emulator-data.json'), 'utf8')).toBe(readFileSync(join(BULK, 'emulator-data.json'), 'utf8'));
  });
});

describe.each(MATRIX_PROFILES)('examples/bulk against the emulator started with its data (%s)', (profile) => {
  it('plans every declared change with no problem, applies them all, and then plans no changes', async () => {
    const { cwd, env } = await setupEmulatorWorkspace({}, { profile, data: await readEmulatorData(join(BULK, 'emulator-data.json')) });
    const args = ['-f', BULK, '--state', join(cwd, 'state.json')];
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
