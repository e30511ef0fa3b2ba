/**
 * Runs orgform in-process with a captured CliIO (fast, for most command tests), or as a real
 * child process of the built CLI (for signals, TTY-less refusal and exit codes).
 */
import { spawn } from 'node:child_process';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { guardWorkflowCommands } from '../../src/ci/guard-workflow-commands.js';
import { readOutputSettings } from '../../src/cli/output-settings.js';
import { buildProgram } from '../../src/cli/program.js';
import type { CliIO, ExitCode } from '../../src/cli-io.js';
import { formatError } from '../../src/text/format-error.js';
import { afterEachTest } from './after-each-test.js';

/** Watched runs still going: killed after each test, so that none outlives the test that failed waiting for it. */
const watched = new Set<{ kill(signal: NodeJS.Signals): void }>();
afterEachTest(() => {
  for (const run of watched) run.kill('SIGKILL');
  watched.clear();
});

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  cwd: string;
  env?: Record<string, string | undefined>;
  stdin?: string;
  tty?: boolean;
  signal?: AbortSignal;
}

export async function runCli(args: string[], options: RunOptions): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  const stdin = new PassThrough() as PassThrough & { isTTY?: boolean };
  stdin.isTTY = options.tty;
  if (options.stdin !== undefined) stdin.end(options.stdin);
  else if (!options.tty) stdin.end();
  const raw: CliIO = {
    stdout: { write: (s: string) => ((stdout += s), true), isTTY: options.tty },
    stderr: { write: (s: string) => ((stderr += s), true), isTTY: options.tty },
    stdin,
    cwd: options.cwd,
    signal: options.signal ?? new AbortController().signal,
    now: () => Date.now(),
  };
  // Guarded as main guards the process's streams, so that a fatal error goes through the guard too.
  const env = options.env ?? {};
  const output = readOutputSettings(env);
  const io = guardWorkflowCommands(raw, output.ci);
  let code: number = 0;
  const program = buildProgram(
    io,
    (c: ExitCode) => {
      code = c;
    },
    env,
    output,
  );
  try {
    await program.parseAsync(['node', 'orgform', ...args]);
  } catch (err) {
    const e = err as { code?: string };
    if (typeof e.code === 'string' && e.code.startsWith('commander.')) {
      code = e.code === 'commander.helpDisplayed' || e.code === 'commander.version' ? 0 : 1;
    } else {
      io.stderr.write(formatError(err));
      code = 1;
    }
  }
  return { code, stdout, stderr };
}

export const CLI_BIN = fileURLToPath(new URL('../../bin/orgform.js', import.meta.url));

/** The built CLI as a child process (needs `npm run build`, which `npm test` runs first). */
export function spawnCli(
  args: string[],
  options: RunOptions & { onSpawn?: (pid: number) => void; /** Run as this user (root may). */ as?: { uid: number; gid: number } },
): Promise<CliResult & { signal: NodeJS.Signals | null }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI_BIN, ...args], {
      cwd: options.cwd,
      env: { PATH: process.env.PATH, ...options.env },
      stdio: ['pipe', 'pipe', 'pipe'],
      ...options.as,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code: code ?? -1, signal, stdout, stderr }));
    if (options.stdin !== undefined) child.stdin.end(options.stdin);
    else child.stdin.end();
    if (child.pid !== undefined) options.onSpawn?.(child.pid);
  });
}

export interface WatchedCli {
  /** Resolves once `pattern` has been written to the stream, with what was written so far; rejects if the process ends first. */
  written(stream: 'stdout' | 'stderr', pattern: RegExp): Promise<string>;
  kill(signal: NodeJS.Signals): void;
  done: Promise<CliResult & { signal: NodeJS.Signals | null }>;
}

/**
 * The built CLI as a child process, watched as it writes: for a run held at a point (a wait the
 * test set up) whose output the test looks for before it lets the run go on, or stops it.
 */
export function watchCli(args: string[], options: RunOptions): WatchedCli {
  const child = spawn(process.execPath, [CLI_BIN, ...args], { cwd: options.cwd, env: { PATH: process.env.PATH, ...options.env }, stdio: ['pipe', 'pipe', 'pipe'] });
  const text = { stdout: '', stderr: '' };
  const watchers: Array<{ stream: 'stdout' | 'stderr'; pattern: RegExp; resolve: (s: string) => void; reject: (e: Error) => void }> = [];
  const look = () => {
    for (const w of [...watchers]) {
      if (!w.pattern.test(text[w.stream])) continue;
      watchers.splice(watchers.indexOf(w), 1);
      w.resolve(text[w.stream]);
    }
  };
  child.stdout.on('data', (c: Buffer) => ((text.stdout += c.toString()), look()));
  child.stderr.on('data', (c: Buffer) => ((text.stderr += c.toString()), look()));
  child.stdin.end(options.stdin ?? '');
  const run = { kill: (signal: NodeJS.Signals) => void child.kill(signal) };
  watched.add(run);
  const done = new Promise<CliResult & { signal: NodeJS.Signals | null }>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => {
      watched.delete(run);
      for (const w of watchers.splice(0)) w.reject(new Error(`orgform ended (${code ?? signal}) without writing ${w.pattern} to ${w.stream}:\n${text.stdout}\n${text.stderr}`));
      resolve({ code: code ?? -1, signal, ...text });
    });
  });
  return {
    written: (stream, pattern) =>
      new Promise((resolve, reject) => {
        watchers.push({ stream, pattern, resolve, reject });
        look();
      }),
    kill: run.kill,
    done,
  };
}
