/**
 * `orgform emulator`: runs the local Organisations service emulator until SIGINT/SIGTERM, then
 * optionally saves its state. The demo tokens are printed because they belong to fake users.
 */
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describeOverrides, parsePointAssignment, resolveBehaviour, type Behaviour, type ProfileName } from '../emulator/behaviour.js';
import { readEmulatorData, type EmulatorData } from '../emulator/data.js';
import { parseQuotaSpec, type QuotaHeaderStyle } from '../emulator/quota.js';
import { parseRateLimitSpec, type RateLimitHeaderStyle, type RateLimitOptions } from '../emulator/rate-limit.js';
import { startEmulator, type EmulatorOptions } from '../emulator/server.js';
import type { TokenLifetime } from '../emulator/tokens.js';
import { OrgformError, UsageError } from '../errors.js';
import { writeFileAtomically, type UserFile } from '../state/write-file-atomically.js';
import { findWorkTree } from '../work-tree.js';
import type { CliIO, ExitCode } from '../cli-io.js';

interface EmulatorCommandOptions {
  port?: number;
  host?: string;
  data?: string;
  latency?: number;
  slugDelay?: number;
  save?: string;
  profile?: string;
  /** NAME=VALUE, as given to --point. */
  point?: string[];
  /** RPS[:BURST], as given to --rate-limit. */
  rateLimit?: string;
  rateLimitHeaders?: string;
  /** REQUESTS:SECONDS, as given to --quota. */
  quota?: string;
  quotaHeaders?: string;
  tokenLifetimeRequests?: number;
  tokenLifetimeSeconds?: number;
  renewEvery?: number;
}

// src/commands/emulator.ts and dist/commands/emulator.js are both two levels below the package root.
const DEFAULT_DATA_URL = new URL('../../examples/emulator-data.json', import.meta.url);

export async function run(options: Record<string, unknown>, io: CliIO, _args: string[]): Promise<ExitCode> {
  const opts = options as EmulatorCommandOptions;
  const played = readPlayedOptions(opts);
  const data = await loadData(opts.data === undefined ? DEFAULT_DATA_URL : resolve(io.cwd, opts.data));
  const host = opts.host ?? '127.0.0.1';
  const port = opts.port ?? 4010;
  const emulator = await startEmulator({
    data,
    host,
    port,
    latencyMs: opts.latency ?? 0,
    slugDelayMs: opts.slugDelay ?? 1000,
    ...played,
  }).catch((err: NodeJS.ErrnoException) => {
    if (err instanceof TypeError) throw new UsageError(err.message);
    if (err.code === 'EADDRINUSE') throw new UsageError(`Port ${port} on ${host} is already in use; choose another with --port (0 picks a free one).`);
    throw new OrgformError('CONFIG_IO', `Cannot listen on ${host}:${port}: ${err.message}`, { cause: err });
  });

  io.stdout.write(`Organisations emulator listening on ${emulator.url}\n`);
  io.stdout.write(`${describeTokens(data)}\n`);
  for (const line of describePlayed(played, emulator.behaviour)) io.stdout.write(`${line}\n`);
  io.stdout.write('Press Ctrl+C to stop.\n');
  await waitForAbort(io.signal);

  try {
    if (opts.save !== undefined) await saveState(resolve(io.cwd, opts.save), emulator.store.dump(), { shown: opts.save, option: '--save', tree: await findWorkTree(io.cwd) });
  } finally {
    await emulator.stop();
  }
  if (opts.save !== undefined) io.stdout.write(`Emulator state saved to ${opts.save}\n`);
  return 0;
}

type PlayedOptions = Pick<EmulatorOptions, 'profile' | 'behaviour' | 'rateLimit' | 'quota' | 'tokenLifetime' | 'renewals'>;

/** --profile, --point, --rate-limit(-headers), --quota(-headers), --token-lifetime-* and --renew-every, checked; a bad one is a usage error naming what is allowed. */
export function readPlayedOptions(opts: EmulatorCommandOptions): PlayedOptions {
  const usage = <T>(read: () => T): T => {
    try {
      return read();
    } catch (err) {
      throw new UsageError((err as Error).message);
    }
  };
  const profile = (opts.profile ?? 'lenient') as ProfileName;
  let behaviour: Partial<Behaviour> = {};
  for (const text of opts.point ?? []) behaviour = { ...behaviour, ...usage(() => parsePointAssignment(text)) };
  usage(() => resolveBehaviour(profile, behaviour));
  const played: PlayedOptions = { profile, behaviour };
  const headers = (opts.rateLimitHeaders ?? 'none') as RateLimitHeaderStyle;
  if (opts.rateLimit !== undefined) {
    const rateLimit: RateLimitOptions = usage(() => parseRateLimitSpec(opts.rateLimit as string));
    played.rateLimit = headers === 'none' ? rateLimit : { ...rateLimit, headers };
  } else if (headers !== 'none') {
    throw new UsageError('--rate-limit-headers needs --rate-limit RPS[:BURST].');
  }
  if (opts.quota !== undefined) {
    played.quota = { ...usage(() => parseQuotaSpec(opts.quota as string)), headers: (opts.quotaHeaders ?? 'ratelimit') as QuotaHeaderStyle };
  }
  const lifetime: TokenLifetime = {};
  if (opts.tokenLifetimeRequests !== undefined) lifetime.requests = opts.tokenLifetimeRequests;
  if (opts.tokenLifetimeSeconds !== undefined) lifetime.seconds = opts.tokenLifetimeSeconds;
  if (Object.keys(lifetime).length > 0) played.tokenLifetime = lifetime;
  if (opts.renewEvery !== undefined) played.renewals = { everyRequests: opts.renewEvery };
  return played;
}

/** A line per setting that differs from the plain emulator; none for the defaults. */
function describePlayed(played: PlayedOptions, behaviour: Behaviour): string[] {
  const lines: string[] = [];
  const overrides = describeOverrides(behaviour, played.profile ?? 'lenient');
  if (played.profile !== 'lenient' || overrides.length > 0) {
    lines.push(`Behaviour: profile ${played.profile ?? 'lenient'}${overrides.length > 0 ? `, with ${overrides.join(' ')}` : ''}`);
  }
  if (played.rateLimit) {
    const { rps, burst, headers } = played.rateLimit;
    lines.push(`Rate limit: ${rps} requests/s, burst ${burst ?? Math.max(1, Math.ceil(rps / 4))}, headers ${headers ?? 'none'}`);
  }
  if (played.quota) {
    const { requests, windowSeconds, headers } = played.quota;
    lines.push(`Quota: ${requests} requests every ${windowSeconds} s, headers ${headers ?? 'ratelimit'}`);
  }
  if (played.tokenLifetime) {
    const { requests, seconds } = played.tokenLifetime;
    const after = [requests === undefined ? '' : `${requests} requests`, seconds === undefined ? '' : `${seconds} s`].filter(Boolean).join(' or ');
    lines.push(`Tokens expire after ${after}; fresh ones: orgform emulator token URL (POST /__emulator/tokens)`);
  }
  if (played.renewals) lines.push(`A subscription is renewed every ${played.renewals.everyRequests} service requests (new subscriptionId and customerId)`);
  return lines;
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

/** Written as orgform writes every file a user names: whole, keeping the mode, never over a directory or a hard link. */
async function saveState(file: string, data: EmulatorData, named: UserFile): Promise<void> {
  await writeFileAtomically(file, `${JSON.stringify(data, null, 2)}\n`, named);
}
