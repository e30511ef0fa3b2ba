/**
 * What plan and apply share on the way in: the config files, the selection, the connection, the
 * client and the state journal's path. Wiring only; the work is in config/, state/ and plan/.
 */
import { dirname, join, resolve } from 'node:path';
import type { OrganisationsClient } from '../api/client.js';
import type { RetryEvent } from '../api/dispatcher.js';
import type { DesiredState } from '../config/types.js';
import { ConfigError, UsageError } from '../errors.js';
import { parseShard, selectOrganisations } from '../plan/select-organisations.js';
import { resolveConnection, type ConnectionFlags } from './connection.js';
import type { CliIO } from './io.js';

export interface SelectionFlags {
  file?: string[];
  target?: string[];
  shard?: string;
}

export async function loadDesiredState(flags: SelectionFlags, io: CliIO): Promise<{ desired: DesiredState; selected: DesiredState }> {
  const { loadConfig, formatProblem } = await import('../config/load-config.js');
  const files = flags.file && flags.file.length > 0 ? flags.file : ['orgs.yaml'];
  const result = await loadConfig(files, { cwd: io.cwd, env: io.env });
  if (!result.ok) {
    const files = new Set(result.problems.map((p) => p.file)).size;
    throw new ConfigError(
      `The configuration has ${result.problems.length} problem${result.problems.length === 1 ? '' : 's'} in ${files} file${files === 1 ? '' : 's'}; nothing was read from the service.`,
      result.problems.map(formatProblem),
      { problems: result.problems },
    );
  }
  const shard = flags.shard === undefined ? undefined : parseShard(flags.shard);
  return { desired: result.state, selected: selectOrganisations(result.state, { targets: flags.target ?? [], shard }) };
}

/** A whole number from the environment, or undefined when unset; anything else is a usage error. */
function envInt(io: CliIO, name: string, min: number): number | undefined {
  const raw = io.env[name];
  if (raw === undefined || raw === '') return undefined;
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(n) || n < min) {
    throw new UsageError(`${name} must be a whole number of at least ${min} (got "${raw}").`);
  }
  return n;
}

/**
 * The client, with the request budget tunable from the environment for slow services and tests:
 * ORGFORM_REQUEST_TIMEOUT_MS (each request, retries included), ORGFORM_MAX_ATTEMPTS,
 * ORGFORM_RETRY_BASE_MS (first backoff step).
 */
export async function openClient(
  flags: ConnectionFlags & { parallelism?: number },
  io: CliIO,
  hooks: { onRetry?: (event: RetryEvent) => void } = {},
): Promise<OrganisationsClient> {
  const connection = await resolveConnection(flags, io);
  const totalMs = envInt(io, 'ORGFORM_REQUEST_TIMEOUT_MS', 100);
  const maxAttempts = envInt(io, 'ORGFORM_MAX_ATTEMPTS', 1);
  const baseDelayMs = envInt(io, 'ORGFORM_RETRY_BASE_MS', 1);
  const { createClient } = await import('../api/client.js');
  return createClient({
    baseUrl: connection.baseUrl,
    token: connection.token,
    ...(hooks.onRetry === undefined ? {} : { onRetry: hooks.onRetry }),
    ...(totalMs === undefined ? {} : { timeouts: { totalMs } }),
    retryPolicy: {
      ...(maxAttempts === undefined ? {} : { maxAttempts }),
      ...(baseDelayMs === undefined ? {} : { baseDelayMs }),
    },
  });
}

/** The journal lives beside the first config file unless --state says otherwise. */
export function statePathFor(flags: { state?: string }, desired: DesiredState | undefined, io: CliIO): string {
  if (flags.state !== undefined) return resolve(io.cwd, flags.state);
  const first = desired?.files[0]?.path ?? 'orgs.yaml';
  return join(dirname(resolve(io.cwd, first)), '.orgform', 'state.json');
}

export function useColor(flags: { color?: boolean }, io: CliIO): boolean {
  if (flags.color === false) return false;
  if (io.env.NO_COLOR !== undefined && io.env.NO_COLOR !== '') return false;
  return io.stdout.isTTY === true;
}

/** The service key used in plans and the journal: the base URL as the client normalised it. */
export function serviceKey(client: OrganisationsClient): string {
  return client.baseUrl.toString().replace(/\/$/, '');
}
