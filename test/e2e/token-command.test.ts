/**
 * Tokens that expire, against the emulator's token lifetimes over loopback: a token command
 * (ORGFORM_TOKEN_COMMAND, --token-command) runs at the start and again on a 401, once for 401s
 * that arrive together; a command that fails or prints nothing stops the run with its status and a
 * hint, never its stderr, before anything is sent; a command that hangs is stopped with every
 * process it started, at its time limit or on an interrupt; an option beats the environment; a
 * fixed JWT that runs out before the apply would end is warned about; no token ever shows.
 */
import { existsSync, readFileSync } from 'node:fs';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createClient } from '../../src/api/client.js';
import { commandTokenSource } from '../../src/api/token-source.js';
import type { EmulatorOptions } from '../../src/emulator/server.js';
import { signalChild, waitFor } from '../reliability/support.js';
import { setupBillingWorld } from '../support/emulator-workspace.js';
import { CLI_BIN, runCli, spawnCli } from '../support/run-cli.js';

const STACK = /^\s+at .+(\(|:\d+:\d+)/m;
const NODE = JSON.stringify(process.execPath);

async function billingWorld(n: number, options: EmulatorOptions = {}) {
  const world = await setupBillingWorld(n, options);
  // No ORGFORM_TOKEN: the command is the source. PATH for the shell's own commands.
  const env: Record<string, string> = { ORGFORM_BASE_URL: world.emulator.url, PATH: process.env.PATH ?? '/usr/bin:/bin' };
  return { ...world, env };
}

/** A fresh token from the emulator, as `orgform emulator token` gets it. */
async function issue(url: string): Promise<string> {
  const response = await fetch(new URL('/__emulator/tokens', url), { method: 'POST' });
  return ((await response.json()) as { token: string }).token;
}

describe('token commands', () => {
  it('401s that arrive together run the command once, and each refused request is sent again with the new token', async () => {
    const world = await billingWorld(10, { tokenLifetime: { requests: 10 } });
    let runs = 0;
    const tokens = commandTokenSource({
      obtain: async () => {
        runs += 1;
        return issue(world.emulator.url);
      },
    });
    const client = createClient({ baseUrl: world.emulator.url, tokens });
    try {
      const ids = world.emulator.store.dump().organisations.map((o) => o.id);
      // Ten requests use the first token up…
      for (const id of ids) await client.getOrganisation(id);
      expect(runs).toBe(1);
      // …so eight at once are all refused with it, together.
      const orgs = await Promise.all(ids.slice(0, 8).map((id) => client.getOrganisation(id)));
      expect(orgs.map((o) => o.id)).toEqual(ids.slice(0, 8));
      expect(runs).toBe(2);
      const refused = world.emulator.requestLog.filter((r) => r.status === 401);
      expect(refused).toHaveLength(8);
      expect(tokens.secrets).toHaveLength(2);
    } finally {
      await client.close();
    }
  });

  it('an apply whose token expires every 15 requests finishes in one run with no failure, and no token shows anywhere', async () => {
    const world = await billingWorld(60, { tokenLifetime: { requests: 15 } });
    // Records each token it hands out (in a file the scan leaves out), and how often it ran.
    const command = `t=$(${NODE} ${JSON.stringify(CLI_BIN)} emulator token ${world.emulator.url}) && echo "$t" >> tokens.log && echo "$t"`;
    const result = await runCli(['apply', '--auto-approve', '--parallelism', '8', '--token-command', command], { cwd: world.cwd, env: world.env });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(world.changed()).toBe(60);
    const issued = (await readFile(join(world.cwd, 'tokens.log'), 'utf8')).trim().split('\n');
    // 61 requests that succeed need 5 tokens at least; 401s that come together share a run.
    expect(issued.length).toBeGreaterThanOrEqual(5);
    expect(issued.length).toBeLessThanOrEqual(9);
    const saved = await runCli(['plan', '--out', 'plan.json', '--format', 'json', '--token-command', command], { cwd: world.cwd, env: world.env });
    expect(saved.code).toBe(0);
    const all = (await readFile(join(world.cwd, 'tokens.log'), 'utf8')).trim().split('\n');
    expect(all.length).toBeGreaterThan(issued.length);
    // Every file the runs left in the workspace (the saved plan, the journal, orgs.yaml) but the log of tokens.
    const written = await Promise.all(
      (await readdir(world.cwd, { recursive: true, withFileTypes: true }))
        .filter((entry) => entry.isFile() && entry.name !== 'tokens.log')
        .map((entry) => readFile(join(entry.parentPath, entry.name), 'utf8')),
    );
    expect(written.some((text) => text.includes('"orgformSavedPlan"'))).toBe(true);
    for (const token of all) {
      for (const text of [result.stdout, saved.stdout, saved.stderr, ...written]) expect(text).not.toContain(token);
    }
  });

  it('a fixed token that expires mid-run stops the run, naming where the token came from; with ORGFORM_TOKEN_COMMAND the same run succeeds', async () => {
    const world = await billingWorld(20, { tokenLifetime: { requests: 8 } });
    const fixed = await runCli(['apply', '--auto-approve', '--parallelism', '4'], { cwd: world.cwd, env: { ...world.env, ORGFORM_TOKEN: await issue(world.emulator.url) } });
    expect(fixed.code).toBe(1);
    expect(fixed.stdout).toMatch(/HTTP 401 token_expired/);
    expect(fixed.stdout).toContain('Check the token (from ORGFORM_TOKEN), or set ORGFORM_TOKEN_COMMAND');
    expect(fixed.stderr).toContain('Error: The service refused the token from ORGFORM_TOKEN (HTTP 401 token_expired), and a fixed token cannot be replaced during a run: nothing more is sent.');
    const command = `${NODE} ${JSON.stringify(CLI_BIN)} emulator token ${world.emulator.url}`;
    const renewed = await runCli(['apply', '--auto-approve', '--parallelism', '4'], { cwd: world.cwd, env: { ...world.env, ORGFORM_TOKEN: 'ignored-when-a-command-is-set', ORGFORM_TOKEN_COMMAND: command } });
    expect(renewed.code).toBe(0);
    expect(world.changed()).toBe(20);
  });

  it('a command that fails stops before any request: exit 1, its exit status and a hint to run it by hand, never its stderr (a token there is not known as one), no stack', async () => {
    const world = await billingWorld(3);
    // `echo $TOKEN >&2; exit 3`: the token only on stderr, so nothing could have redacted it.
    const command = `echo "sso: token canary-7f3e9a1b-5c2d refused" >&2; exit 3`;
    const result = await runCli(['apply', '--auto-approve', '--token-command', command], { cwd: world.cwd, env: world.env });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      'Error: The token command (--token-command) failed with exit status 3. Nothing was sent. Run the command by hand to see what it says (orgform never shows its error output, which may hold a token), fix it, and run again.\n',
    );
    expect(result.stdout).toBe('');
    expect(world.emulator.counters.total).toBe(0);
  });

  it('a command that hangs while a child holds its output is stopped at its time limit with every process it started, and nothing is sent', async () => {
    const world = await billingWorld(3);
    // The shell waits on `sleep 400`, which holds the pipe: killing the shell alone left orgform waiting 400 s.
    const command = 'sleep 400 & echo $! > sleep.pid; wait; echo late-token';
    const result = await runCli(['plan'], { cwd: world.cwd, env: { ...world.env, ORGFORM_TOKEN_COMMAND: command, ORGFORM_TOKEN_COMMAND_TIMEOUT_MS: '300' } });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      'Error: The token command (ORGFORM_TOKEN_COMMAND) did not finish within 300 ms and was stopped, with every process it started. Nothing was sent. Run the command by hand to see what it says (orgform never shows its error output, which may hold a token), fix it, and run again.\n',
    );
    const pid = Number(await readFile(join(world.cwd, 'sleep.pid'), 'utf8'));
    expect(await waitFor(() => !isAlive(pid), 5_000)).toBe(true);
    expect(world.emulator.counters.total).toBe(0);
  });

  it('a command that prints the token and leaves a child holding its output gives the token once it has exited', async () => {
    const world = await billingWorld(3);
    const command = 'sleep 400 & echo $! > sleep.pid; echo demo-token';
    const result = await runCli(['plan', '--format', 'json'], { cwd: world.cwd, env: { ...world.env, ORGFORM_TOKEN_COMMAND: command } });
    // Before, orgform waited for the pipe to close: 400 s.
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect((JSON.parse(result.stdout) as { changes: unknown[] }).changes).toHaveLength(3);
    // Once the command has exited, what it left running is its own business.
    process.kill(Number(await readFile(join(world.cwd, 'sleep.pid'), 'utf8')), 'SIGKILL');
  });

  it.each([
    ['Ctrl+C', 'apply, which winds down,', ['apply', '--auto-approve'], 'SIGINT', 1],
    // No handler of its own: it ends by the signal (a shell shows 130), the command's group first.
    ['Ctrl+C', 'plan, which stops at once,', ['plan'], 'SIGINT', 'SIGINT'],
    // A terminal closed (or an ssh session dropped) under it.
    ['A hang-up', 'apply, which winds down,', ['apply', '--auto-approve'], 'SIGHUP', 1],
    ['A hang-up', 'plan, which stops at once,', ['plan'], 'SIGHUP', 'SIGHUP'],
  ] as const)('%s while the token command runs ends %s its whole process group with it, and sends nothing', async (_signal, _what, args, signal, code) => {
    const world = await billingWorld(3);
    const command = 'sleep 400 & echo $! > sleep.pid; wait; echo late-token';
    let orgform: number | undefined;
    const run = spawnCli([...args], { cwd: world.cwd, env: { ...world.env, ORGFORM_TOKEN_COMMAND: command }, onSpawn: (p) => (orgform = p) });
    const pidFile = join(world.cwd, 'sleep.pid');
    expect(await waitFor(() => existsSync(pidFile) && readPid(pidFile) !== undefined, 15_000)).toBe(true);
    const pid = readPid(pidFile)!;
    expect(signalChild(orgform!, signal)).toBe(true);
    const result = await run;
    if (typeof code === 'string') expect(result.signal).toBe(code);
    else expect(result.code).toBe(code);
    if (code === 1) expect(result.stderr).toContain('Error: The token command (ORGFORM_TOKEN_COMMAND) was stopped: orgform was interrupted. Nothing was sent.');
    expect(result.stderr).not.toMatch(STACK);
    expect(await waitFor(() => !isAlive(pid), 5_000)).toBe(true);
    expect(world.emulator.counters.total).toBe(0);
  });

  it.each([
    ['prints nothing', 'true', 'The token command (--token-command) printed nothing (exit status 0); it must print the token on stdout.'],
    ['prints only blanks', 'printf "  \\n\\n"', 'The token command (--token-command) printed nothing (exit status 0); it must print the token on stdout.'],
    ['prints two lines', 'printf "one-token\\ntwo-token\\n"', 'The token command (--token-command) printed more than one line (exit status 0); it must print the token alone.'],
    ['prints a token with an escape sequence', 'printf "one-token\\033[0m\\n"', 'The token command (--token-command) printed a token that holds a character an HTTP header cannot carry (U+001B, at position 10).'],
    ['is killed', 'kill -9 $$', 'The token command (--token-command) was killed by SIGKILL.'],
    ['cannot be found', 'no-such-command-for-orgform', 'The token command (--token-command) failed with exit status 127.'],
  ])('a command that %s stops before any request, exit 1', async (_what, command, message) => {
    const world = await billingWorld(3);
    const result = await runCli(['plan', '--token-command', command], { cwd: world.cwd, env: world.env });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`Error: ${message}`);
    expect(result.stderr).not.toMatch(STACK);
    expect(result.stderr).not.toContain('one-token');
    expect(world.emulator.counters.total).toBe(0);
  });

  it.each([
    ['an empty --token-command', ['--token-command', '  '], {}, 'The token command is empty (--token-command)'],
    ['a blank ORGFORM_TOKEN_COMMAND', [], { ORGFORM_TOKEN_COMMAND: ' ' }, 'The token command is empty (ORGFORM_TOKEN_COMMAND)'],
    ['--token-command with --token-file', ['--token-command', 'true', '--token-file', 'token.txt'], {}, 'Pass --token-command or --token-file, not both'],
  ])('refuses %s before anything runs or is sent', async (_what, args, env, message) => {
    const world = await billingWorld(3);
    const result = await runCli(['plan', ...args], { cwd: world.cwd, env: { ...world.env, ...env } });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(message);
    expect(world.emulator.counters.total).toBe(0);
  });

  it('a command that fails when run again part way stops the run: nothing new starts, and it says why', async () => {
    const world = await billingWorld(30, { tokenLifetime: { requests: 6 } });
    const command = `if [ -f ran ]; then echo "sso session expired" >&2; exit 5; fi; touch ran; ${NODE} ${JSON.stringify(CLI_BIN)} emulator token ${world.emulator.url}`;
    const result = await runCli(['apply', '--auto-approve', '--parallelism', '2', '--token-command', command], { cwd: world.cwd, env: world.env });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('Error: The token command (--token-command) failed with exit status 5 (run again for a fresh token). The run stops here; what was done is recorded.');
    expect(result.stderr).not.toContain('sso session expired');
    expect(result.stdout).toMatch(/Apply interrupted: \d+ applied/);
    expect(result.stdout).toMatch(/not started/);
    expect(result.stderr).not.toMatch(STACK);
    expect(world.changed()).toBeGreaterThan(0);
    expect(world.changed()).toBeLessThan(30);
  });

  it('a fixed token answered 401 halts an apply of 300 changes: only the requests already on the wire are refused, the rest never start, and the log stays short', async () => {
    // The listing uses the token's one request; every write after it would be refused.
    const world = await billingWorld(300, { tokenLifetime: { requests: 1 } });
    const token = await issue(world.emulator.url);
    const result = await runCli(['apply', '--auto-approve', '--parallelism', '8'], { cwd: world.cwd, env: { ...world.env, ORGFORM_TOKEN: token } });
    expect(result.code).toBe(1);
    const refused = world.emulator.requestLog.filter((r) => r.status === 401);
    // Before: 300 requests, all answered 401, and 300 failures listed twice.
    expect(refused.length).toBeGreaterThan(0);
    expect(refused.length).toBeLessThanOrEqual(8);
    expect(world.emulator.counters.total).toBe(1 + refused.length);
    const summary = /^Apply interrupted: 0 applied, 0 already done(?:, (\d+) failed)?, (\d+) not started; run orgform apply again to finish\.$/m.exec(result.stdout);
    expect(summary).not.toBeNull();
    // A refused write fails its change; a refused read (the listing apply reads again) fails none.
    const refusedWrites = refused.filter((r) => r.method === 'PUT').length;
    expect(Number(summary![1] ?? 0)).toBe(refusedWrites);
    expect(Number(summary![2])).toBe(300 - refusedWrites);
    expect(result.stderr).toBe(
      'Error: The service refused the token from ORGFORM_TOKEN (HTTP 401 token_expired), and a fixed token cannot be replaced during a run: nothing more is sent. What was done is recorded. Check the token, or set ORGFORM_TOKEN_COMMAND (or --token-command) to a command that prints a fresh one, and run again.\n',
    );
    // The plan's digest, 8 failures as they happen and again in the summary: not 300 of each.
    expect(result.stdout.split('\n').length).toBeLessThan(100);
    expect(result.stdout + result.stderr).not.toContain(token);
  });

  it('warns at the start when a fixed JWT expires before the apply is likely to end, without showing it', async () => {
    const world = await billingWorld(60, { tokenLifetime: { seconds: 60 } });
    const token = await issue(world.emulator.url);
    // 60 changes at 1 a second take about 90 s; the token has 60.
    const result = await runCli(['apply', '--max-rps', '1'], { cwd: world.cwd, env: { ...world.env, ORGFORM_TOKEN: token }, tty: true, stdin: 'no\n' });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^Warning: the token \(a JWT\) expires at \S+Z, in (5\d s|1 min), but this apply of 60 changes may take about 2 min \(about 90 requests at up to 1 a second\)/);
    expect(result.stderr).toContain('Set ORGFORM_TOKEN_COMMAND (or --token-command) to a command that prints a fresh token');
    expect(result.stdout).toContain('Apply cancelled. Nothing was changed.');
    expect(result.stdout + result.stderr).not.toContain(token);
    // Fast enough for the token: no warning.
    const quick = await runCli(['apply'], { cwd: world.cwd, env: { ...world.env, ORGFORM_TOKEN: token }, tty: true, stdin: 'no\n' });
    expect(quick.stderr).toBe('');
  });
});

describe('where the token and the service come from', () => {
  it.each([
    ['--token-file over ORGFORM_TOKEN_COMMAND', ['--token-file', 'token.txt'], { ORGFORM_TOKEN_COMMAND: 'exit 9' }],
    ['--token-file over ORGFORM_TOKEN', ['--token-file', 'token.txt'], { ORGFORM_TOKEN: 'wrong-token' }],
    ['--token-command over ORGFORM_TOKEN', ['--token-command', 'cat token.txt'], { ORGFORM_TOKEN: 'wrong-token' }],
    ['--token-command over ORGFORM_TOKEN_COMMAND', ['--token-command', 'cat token.txt'], { ORGFORM_TOKEN_COMMAND: 'exit 9' }],
    ['--base-url over ORGFORM_BASE_URL', ['--base-url', 'EMULATOR'], { ORGFORM_TOKEN: 'demo-token', ORGFORM_BASE_URL: 'http://127.0.0.1:9' }],
    ['--max-rps over ORGFORM_MAX_RPS', ['--max-rps', '1000'], { ORGFORM_TOKEN: 'demo-token', ORGFORM_MAX_RPS: '0.001' }],
  ])('a command-line option beats the environment: %s', async (_what, args, env) => {
    const world = await billingWorld(3);
    await writeFile(join(world.cwd, 'token.txt'), 'demo-token\n');
    const flags = args.map((a) => (a === 'EMULATOR' ? world.emulator.url : a));
    const result = await runCli(['plan', '--format', 'json', ...flags], { cwd: world.cwd, env: { ...world.env, ...env } });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect((JSON.parse(result.stdout) as { changes: unknown[] }).changes).toHaveLength(3);
  });

  it.each([
    ['ORGFORM_TOKEN', [], { ORGFORM_TOKEN: 'wrong-token' }],
    ['--token-file token.txt', ['--token-file', 'token.txt'], {}],
  ])('a 401 says which source the refused token came from (%s), and quotes the service word for word', async (source, args, env) => {
    const world = await billingWorld(3);
    await writeFile(join(world.cwd, 'token.txt'), 'wrong-token\n');
    const result = await runCli(['plan', ...args], { cwd: world.cwd, env: { ...world.env, ...env } });
    expect(result.code).toBe(1);
    // "A valid bearer token is required." as the service wrote it: not "A valid Bearer [REDACTED] is required..".
    expect(result.stderr).toBe(
      `Error: getOrganisations (all pages) failed with HTTP 401: unauthenticated: A valid bearer token is required. Check the token (from ${source}), or set ORGFORM_TOKEN_COMMAND (or --token-command) to a command that prints a fresh one\n`,
    );
  });
});

/**
 * Whether a process is still running. A killed process whose parent died before reaping it stays a
 * zombie until init reaps it, and some inits (a container's) take their time: a zombie has ended.
 */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    // /proc/PID/stat: "PID (COMMAND) STATE ...", the command in parentheses may hold spaces.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return true;
  }
}

function readPid(path: string): number | undefined {
  try {
    const pid = Number(readFileSync(path, 'utf8'));
    return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}
