/**
 * `orgform emulator`: runs the local Organisations service emulator until SIGINT/SIGTERM, then
 * optionally saves its state. The demo tokens are printed because they belong to fake users.
 */
import { writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readEmulatorData, type EmulatorData } from '../../emulator/data.js';
import { startEmulator } from '../../emulator/server.js';
import { OrgformError, UsageError } from '../../errors.js';
import type { CliIO, ExitCode } from '../io.js';

interface EmulatorCommandOptions {
  port?: number;
  host?: string;
  data?: string;
  latency?: number;
  slugDelay?: number;
  save?: string;
}

// src/cli/commands/emulator.ts and dist/cli/commands/emulator.js are both three levels below the package root.
const DEFAULT_DATA_URL = new URL('../../../examples/emulator-data.json', import.meta.url);

export async function run(options: Record<string, unknown>, io: CliIO, _args: string[]): Promise<ExitCode> {
  const opts = options as EmulatorCommandOptions;
  const data = await loadData(opts.data === undefined ? DEFAULT_DATA_URL : resolve(io.cwd, opts.data));
  const host = opts.host ?? '127.0.0.1';
  const port = opts.port ?? 4010;
  const emulator = await startEmulator({
    data,
    host,
    port,
    latencyMs: opts.latency ?? 0,
    slugDelayMs: opts.slugDelay ?? 1000,
  }).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'EADDRINUSE') throw new UsageError(`Port ${port} on ${host} is already in use; choose another with --port (0 picks a free one).`);
    throw new OrgformError('CONFIG_IO', `Cannot listen on ${host}:${port}: ${err.message}`, { cause: err });
  });

  io.stdout.write(`Organisations emulator listening on ${emulator.url}\n`);
  io.stdout.write(`${describeTokens(data)}\n`);
  io.stdout.write('Press Ctrl+C to stop.\n');
  await waitForAbort(io.signal);

  try {
    if (opts.save !== undefined) await saveState(resolve(io.cwd, opts.save), emulator.store.dump());
  } finally {
    await emulator.stop();
  }
  if (opts.save !== undefined) io.stdout.write(`Emulator state saved to ${opts.save}\n`);
  return 0;
}

async function loadData(file: string | URL): Promise<EmulatorData> {
  const name = typeof file === 'string' ? file : fileURLToPath(file);
  try {
    return await readEmulatorData(file);
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    if (e.code === 'ENOENT') throw new OrgformError('CONFIG_IO', `Emulator data file ${name} does not exist.`, { cause: err });
    if (e.code !== undefined) throw new OrgformError('CONFIG_IO', `Cannot read emulator data file ${name}: ${e.message}`, { cause: err });
    throw new OrgformError('CONFIG_INVALID', `Cannot use emulator data: ${e.message}`, { cause: err });
  }
}

/** The fake users' tokens are not secrets: naming them is how one drives the demo. */
function describeTokens(data: EmulatorData): string {
  if (data.users.length === 0) return 'No users in the data: every request will answer 401.';
  const tokens = data.users.map((u) => `${u.token} (${u.email})`);
  return `Demo token${tokens.length === 1 ? '' : 's'}: ${tokens.join(', ')}`;
}

function waitForAbort(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((done) => signal.addEventListener('abort', () => done(), { once: true }));
}

async function saveState(file: string, data: EmulatorData): Promise<void> {
  try {
    await writeFile(file, `${JSON.stringify(data, null, 2)}\n`);
  } catch (err) {
    throw new OrgformError('CONFIG_IO', `Cannot save the emulator state to ${file}: ${(err as Error).message}`, { cause: err });
  }
}
