/**
 * The process entry, as a process: what SIGINT does to the commands that do not wind down
 * gracefully (apply's graceful interrupt is test/reliability/process-faults.test.ts, case 23).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { spawnCli } from '../support/run-cli.js';
import { makeWorkspace } from '../support/workspace.js';

/** About 3.5 MB that only the yaml package reads (the directive keeps the fast parser out): seconds of parsing. */
function slowFile(): string {
  const lines = ['%YAML 1.2', '---', 'version: 1', 'organisations:'];
  for (let i = 0; i < 36_000; i++) lines.push(`  org-${i}:`, '    billing:', `      billingEmail: "billing+${i}@example.com"`, `      customerID: 'cus_${i}'`);
  return `${lines.join('\n')}\n`;
}

/** CPU time a process has used so far, from /proc (Linux), in milliseconds; undefined where there is no /proc. */
function cpuMs(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return undefined;
  }
}

/**
 * Resolves once the process has used `ms` of CPU: past its start (about 150 ms) and into the parse.
 * Where there is no /proc, after `ms` of wall time.
 */
async function busyFor(pid: number, ms: number): Promise<void> {
  const started = Date.now();
  for (;;) {
    const used = cpuMs(pid);
    if (used === undefined ? Date.now() - started >= ms : used >= ms) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('orgform as a process, interrupted', () => {
  it.each([
    ['validate', ['validate']],
    ['plan', ['plan']],
    ['export -f', ['export', '-f', 'orgs.yaml', '--diff']],
  ])('ends %s at the first Ctrl+C, even in the middle of parsing a large file, as a process stopped by SIGINT', async (_name, args) => {
    const cwd = await makeWorkspace({ 'orgs.yaml': slowFile() });
    let pid: number | undefined;
    const run = spawnCli(args, { cwd, env: { ORGFORM_TOKEN: 'demo-token', ORGFORM_BASE_URL: 'http://127.0.0.1:9' }, onSpawn: (p) => (pid = p) });
    while (pid === undefined) await new Promise((resolve) => setTimeout(resolve, 5));
    await busyFor(pid, 600);
    process.kill(pid, 'SIGINT');
    const result = await run;
    // Stopped by the signal itself (a shell shows 130), not by a handler after the parse: nothing was validated.
    expect(result.signal).toBe('SIGINT');
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe('');
  }, 60_000);
});

describe('a standard output closed by its reader', () => {
  it('ends a read-only command quietly, as SIGPIPE would (141), without a stack trace', async () => {
    const { setupBillingWorld } = await import('../support/emulator-workspace.js');
    const { spawn } = await import('node:child_process');
    const { CLI_BIN } = await import('../support/run-cli.js');
    const { cwd, env } = await setupBillingWorld(3000);
    const child = spawn(process.execPath, [CLI_BIN, 'plan', '--format', 'json'], { cwd, env: { PATH: process.env.PATH, ...env } });
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    // The reader takes the first chunk and goes away, as `| head -c 100` does.
    child.stdout.once('data', () => child.stdout.destroy());
    const code = await new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)));
    expect(stderr).not.toMatch(/EPIPE|at .*\.js:\d+/);
    expect(code).toBe(141);
  });
});
