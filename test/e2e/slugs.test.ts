/**
 * `orgform slugs check` end to end against the emulator over loopback HTTP.
 */
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import type { Emulator, EmulatorOptions } from '../../src/emulator/server.js';
import { CLI_BIN, runCli } from '../support/run-cli.js';
import { setupEmulatorWorkspace } from '../support/emulator-workspace.js';

let emulator: Emulator;

async function setup(options: EmulatorOptions = {}) {
  const world = await setupEmulatorWorkspace({}, options);
  emulator = world.emulator;
  return world;
}

const slugRequests = () => emulator.requestLog.filter((e) => e.operation === 'getSlugAvailability').map((e) => e.path);

describe('orgform slugs check', () => {
  it('shows available, taken, reserved and invalid slugs in a table and exits 1', async () => {
    const { cwd, env } = await setup();
    const result = await runCli(['slugs', 'check', 'new-team', 'acme', 'admin', 'Bad_Slug', '..'], { cwd, env });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe('');
    const lines = result.stdout.split('\n');
    expect(lines[0]).toMatch(/^SLUG\s+AVAILABLE\s+REASONS$/);
    expect(lines[1]).toMatch(/^new-team\s+yes$/);
    expect(lines[2]).toMatch(/^acme\s+no\s+This slug is already taken\.$/);
    expect(lines[3]).toMatch(/^admin\s+no\s+This slug is reserved\.$/);
    expect(lines[4]).toMatch(/^Bad_Slug\s+no\s+A slug may contain only lowercase letters, digits and hyphens\.$/);
    expect(lines[5]).toMatch(/^\.\.\s+invalid\s+Not checked: it cannot be sent in a URL path/);
    expect(result.stdout).toContain('5 slugs checked: 1 available, 3 unavailable, 1 invalid.');
  });

  it('writes each row as soon as its slug is checked, not all at the end', async () => {
    const { cwd, env } = await setup({ slugDelayMs: 400 });
    const child = spawn(process.execPath, [CLI_BIN, 'slugs', 'check', 'one', 'two', 'three', '--parallelism', '1'], { cwd, env: { PATH: process.env.PATH, ...env } });
    let stdout = '';
    let exited = false;
    child.on('exit', () => (exited = true));
    const firstRow = new Promise<string>((resolve) =>
      child.stdout.on('data', (chunk: Buffer) => {
        stdout += chunk.toString();
        if (/^one\s+yes$/m.test(stdout)) resolve(stdout);
      }),
    );
    const seen = await firstRow;
    // Two slugs still to check, 400 ms each: the process is still running.
    expect(exited).toBe(false);
    expect(seen).not.toContain('three');
    await new Promise((resolve) => child.on('close', resolve));
    expect(stdout).toMatch(/^SLUG\s+AVAILABLE\s+REASONS\none\s+yes\ntwo\s+yes\nthree\s+yes\n\n3 slugs checked: 3 available, 0 unavailable\.\n$/);
  });

  it('on a terminal, keeps a progress line on standard error below the rows, and clears it at the end', async () => {
    const { cwd, env } = await setup();
    const result = await runCli(['slugs', 'check', 'one', 'two'], { cwd, env: { ...env, NO_COLOR: '1' }, tty: true });
    expect(result.stderr).toBe('\r\x1b[2Kchecking slugs: 0/2\r\x1b[2K\r\x1b[2Kchecking slugs: 1/2\r\x1b[2K\r\x1b[2Kchecking slugs: 2/2\r\x1b[2K');
    expect(result.stdout).toMatch(/^SLUG\s+AVAILABLE\s+REASONS\none\s+yes\ntwo\s+yes\n\n2 slugs checked/);
  });

  it('exits 0 when every slug is available', async () => {
    const { cwd, env } = await setup();
    const result = await runCli(['slugs', 'check', 'new-team', 'another-one'], { cwd, env });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('2 slugs checked: 2 available, 0 unavailable.');
  });

  it('never sends a slug that would change the URL path, and sends one with "/" as a single encoded segment', async () => {
    const { cwd, env } = await setup();
    const result = await runCli(['slugs', 'check', '--format', 'json', '..', 'a/b'], { cwd, env });
    expect(slugRequests()).toEqual(['/api/organisations/v1/slug/a%2Fb/availability']);
    const { slugs } = JSON.parse(result.stdout);
    expect(slugs[0]).toMatchObject({ slug: '..', status: 'invalid', available: false });
    expect(slugs[1]).toMatchObject({ slug: 'a/b', status: 'unavailable', available: false });
    expect(slugs[1].messages).toContain('A slug may contain only lowercase letters, digits and hyphens.');
    expect(result.code).toBe(1);
  });

  it('reads slugs from standard input with -, skipping blank lines and comments, each slug once', async () => {
    const { cwd, env } = await setup();
    const stdin = '# candidates\nnew-team\n\nacme\r\nnew-team\n  spare-name  \n';
    const result = await runCli(['slugs', 'check', '-', '--format', 'json'], { cwd, env, stdin });
    const { slugs } = JSON.parse(result.stdout);
    expect(slugs.map((s: { slug: string }) => s.slug)).toEqual(['new-team', 'acme', 'spare-name']);
    expect(slugRequests()).toHaveLength(3);
    expect(result.code).toBe(1);
  });

  it('refuses an empty standard input without asking the service anything', async () => {
    const { cwd, env } = await setup();
    const result = await runCli(['slugs', 'check', '-'], { cwd, env, stdin: '\n# nothing\n' });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/No slugs to check/);
    expect(emulator.counters.total).toBe(0);
  });

  it('writes JSON with available, messages and, for a failed check, the error, without hiding the other slugs', async () => {
    const { cwd, env } = await setup();
    emulator.faults.add({ operation: 'getSlugAvailability', fault: { kind: 'status', status: 403 } });
    const result = await runCli(['slugs', 'check', '--format', 'json', '--parallelism', '1', 'first-one', 'acme', 'new-team'], { cwd, env });
    expect(result.code).toBe(1);
    const { slugs } = JSON.parse(result.stdout);
    expect(slugs[0]).toMatchObject({ slug: 'first-one', status: 'error', available: null, messages: [] });
    expect(slugs[0].error).toMatch(/HTTP 403/);
    expect(slugs[1]).toEqual({ slug: 'acme', status: 'unavailable', available: false, messages: ['This slug is already taken.'] });
    expect(slugs[2]).toEqual({ slug: 'new-team', status: 'available', available: true, messages: [] });
  });

  it('keeps exactly --parallelism checks in flight against the slow endpoint', async () => {
    const { cwd, env } = await setup({ slugDelayMs: 200 });
    const slugs = Array.from({ length: 20 }, (_, i) => `candidate-${i}`);
    const result = await runCli(['slugs', 'check', '--parallelism', '10', ...slugs], { cwd, env });
    expect(result.code).toBe(0);
    expect(emulator.counters.byOperation.getSlugAvailability).toBe(20);
    expect(emulator.counters.maxInFlight).toBe(10);
  });

  it('with --parallelism 1 checks one slug at a time', async () => {
    const { cwd, env } = await setup({ slugDelayMs: 50 });
    await runCli(['slugs', 'check', '--parallelism', '1', 'one-slug', 'two-slug', 'three-slug'], { cwd, env });
    expect(emulator.counters.maxInFlight).toBe(1);
  });
});
