/**
 * The bulk example's generator answers --help and bad arguments like a command-line tool, and writes
 * the committed emulator data byte for byte. That examples/bulk plans, applies and converges against
 * that data is bulk-example-apply.soak.test.ts (`npm run test:soak`: two applies of 481 changes).
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
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
