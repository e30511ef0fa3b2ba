/**
 * What the commands that talk to the service share on the way in: the client, built from the
 * connection flags and the environment, and whether to use colour. Wiring only; the flows are in
 * engine/.
 */
import type { OrganisationsClient } from '../api/client.js';
import type { JwtExpiry } from '../api/read-jwt-expiry.js';
import type { TokenSource } from '../api/token-source.js';
import type { ClientListeners } from '../engine/open-client.js';
import { isOrgformError, UsageError } from '../errors.js';
import { resolveConnection, type ConnectionFlags } from './connection.js';
import type { CliIO } from './io.js';
import { MAX_RPS_FORM, parseMaxRps } from './parse-max-rps.js';

/** A whole number from the environment, or undefined when unset; anything else is a usage error. */
export function envInt(env: CliIO['env'], name: string, min: number): number | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(n) || n < min) {
    throw new UsageError(`${name} must be a whole number of at least ${min} (got "${raw}").`);
  }
  return n;
}

/** The first backoff step (ORGFORM_RETRY_BASE_MS), also used by apply's re-reads after an accept. */
export function retryBaseMs(io: CliIO): number | undefined {
  return envInt(io.env, 'ORGFORM_RETRY_BASE_MS', 1);
}

/** ORGFORM_MAX_RPS, or undefined when unset; anything but a positive number is a usage error. */
function envMaxRps(io: CliIO): number | undefined {
  const raw = io.env.ORGFORM_MAX_RPS;
  if (raw === undefined || raw === '') return undefined;
  const n = parseMaxRps(raw);
  if (n === undefined) throw new UsageError(`ORGFORM_MAX_RPS must be ${MAX_RPS_FORM} (got "${raw}").`);
  return n;
}

/** What the engine listens to (engine/open-client.ts), and the token's expiry, which the command tells. */
export interface ClientHooks extends ClientListeners {
  /** When a fixed token is a JWT: its expiry (never the token itself). */
  onTokenExpiry?: (expiry: JwtExpiry) => void;
}

/**
 * The client, with the request budget tunable from the environment for slow services and tests:
 * ORGFORM_REQUEST_TIMEOUT_MS (each request, retries included), ORGFORM_MAX_ATTEMPTS,
 * ORGFORM_RETRY_BASE_MS (first backoff step), ORGFORM_NO_PROGRESS_TIMEOUT_MS (only 429s for this
 * long ends the run); the rate cap from --max-rps or ORGFORM_MAX_RPS. With a token command, the
 * command runs here, before any request: when it fails, nothing is sent.
 */
export async function openClient(
  flags: ConnectionFlags & { parallelism?: number; maxRps?: number },
  io: CliIO,
  hooks: ClientHooks = {},
): Promise<OrganisationsClient> {
  const connection = await resolveConnection(flags, io);
  const totalMs = envInt(io.env, 'ORGFORM_REQUEST_TIMEOUT_MS', 100);
  const maxAttempts = envInt(io.env, 'ORGFORM_MAX_ATTEMPTS', 1);
  const baseDelayMs = retryBaseMs(io);
  const maxRps = flags.maxRps ?? envMaxRps(io);
  const noProgressMs = envInt(io.env, 'ORGFORM_NO_PROGRESS_TIMEOUT_MS', 1);
  const [{ createClient }, { fixedTokenSource, commandTokenSource }] = await Promise.all([import('../api/client.js'), import('../api/token-source.js')]);
  let tokens: TokenSource;
  if (connection.tokenCommand !== undefined) {
    const command = connection.tokenCommand;
    const { runTokenCommand } = await import('./run-token-command.js');
    let runs = 0;
    const source: TokenSource = commandTokenSource({
      now: io.now,
      obtain: async () => {
        const when = runs === 0 ? 'start' : 'refresh';
        runs += 1;
        try {
          return await runTokenCommand(command, { env: io.env, cwd: io.cwd, secrets: source.secrets, when });
        } catch (err) {
          if (when === 'refresh' && isOrgformError(err)) hooks.onHalt?.(err);
          throw err;
        }
      },
    });
    tokens = source;
    // It runs at the start: a command that fails or prints nothing stops here, before any request.
    await tokens.current();
  } else {
    tokens = fixedTokenSource(connection.token);
    const { readJwtExpiry } = await import('../api/read-jwt-expiry.js');
    const expiry = readJwtExpiry(connection.token);
    if (expiry) hooks.onTokenExpiry?.(expiry);
  }
  return createClient({
    baseUrl: connection.baseUrl,
    tokens,
    ...(maxRps === undefined ? {} : { maxRps }),
    // --parallelism: the requests in flight at once, enforced by the size of the connection pool.
    ...(flags.parallelism === undefined ? {} : { parallelism: flags.parallelism }),
    ...(noProgressMs === undefined ? {} : { noProgressMs }),
    onRate: (event) => hooks.onRate?.(event),
    onStall: (error) => hooks.onHalt?.(error),
    ...(hooks.onRetry === undefined ? {} : { onRetry: hooks.onRetry }),
    ...(totalMs === undefined ? {} : { timeouts: { totalMs } }),
    retryPolicy: {
      ...(maxAttempts === undefined ? {} : { maxAttempts }),
      ...(baseDelayMs === undefined ? {} : { baseDelayMs }),
    },
  });
}

export function useColor(flags: { color?: boolean }, io: CliIO): boolean {
  if (flags.color === false) return false;
  if (io.env.NO_COLOR !== undefined && io.env.NO_COLOR !== '') return false;
  return io.stdout.isTTY === true;
}
