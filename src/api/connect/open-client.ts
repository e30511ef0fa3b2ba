/**
 * Connecting: the client, built from the connection flags and the environment (the request budget,
 * the rate cap, the token or the command that prints one). Each flow calls clientOpener's opener at
 * its Connect step.
 */
import type { OrganisationsClient } from '../client.js';
import type { JwtExpiry } from '../read-jwt-expiry.js';
import type { TokenSource } from '../token-source.js';
import type { WaitEvent } from '../wait-event.js';
import type { ClientListeners, OpenClient } from './client-listeners.js';
import { isOrgformError, UsageError } from '../../errors.js';
import { resolveConnection, type ConnectionFlags } from './resolve-connection.js';
import type { CliIO } from '../../cli-io.js';
import { MAX_RPS_FORM, parseMaxRps } from '../rate/parse-max-rps.js';
import { envInt } from '../../env-int.js';

/** The first backoff step (ORGFORM_RETRY_BASE_MS), also used by apply's re-reads after an accept. */
export function retryBaseMs(io: CliIO): number | undefined {
  return envInt(io.env, 'ORGFORM_RETRY_BASE_MS');
}

/** ORGFORM_MAX_RPS, or undefined when unset; anything but a number in its range is a usage error. */
function envMaxRps(io: CliIO): number | undefined {
  const raw = io.env.ORGFORM_MAX_RPS;
  if (raw === undefined || raw === '') return undefined;
  const n = parseMaxRps(raw);
  if (n === undefined) throw new UsageError(`ORGFORM_MAX_RPS must be ${MAX_RPS_FORM} (got "${raw}").`);
  return n;
}

/** What the flow listens to (client-listeners.ts), and a fixed token's expiry, which clientOpener hands back. */
export interface ClientHooks extends ClientListeners {
  /** When a fixed token is a JWT: its expiry (never the token itself). */
  onTokenExpiry?: (expiry: JwtExpiry) => void;
}

/**
 * The client, with the request budget tunable from the environment for slow services and tests:
 * ORGFORM_REQUEST_TIMEOUT_MS (each request, retries included), ORGFORM_MAX_ATTEMPTS,
 * ORGFORM_RETRY_BASE_MS (first backoff step), ORGFORM_NO_PROGRESS_TIMEOUT_MS (only 429s for this
 * long ends the run, and no announced pause is waited out longer), ORGFORM_TOKEN_COMMAND_TIMEOUT_MS;
 * the rate cap from --max-rps or ORGFORM_MAX_RPS. With a token command, the command runs here,
 * before any request: when it fails, nothing is sent. An interrupt (io.signal) stops the token
 * command and every request not yet sent.
 */
export async function openClient(
  flags: ConnectionFlags & { parallelism?: number; maxRps?: number },
  io: CliIO,
  hooks: ClientHooks = {},
): Promise<OrganisationsClient> {
  const connection = await resolveConnection(flags, io);
  // Read before anything runs, so that a proxy variable's mistake stops here, naming it.
  const { readProxySettings } = await import('../proxy-settings.js');
  const proxy = readProxySettings(io.env);
  const extraCaCerts = io.env.NODE_EXTRA_CA_CERTS === '' ? undefined : io.env.NODE_EXTRA_CA_CERTS;
  const totalMs = envInt(io.env, 'ORGFORM_REQUEST_TIMEOUT_MS');
  const maxAttempts = envInt(io.env, 'ORGFORM_MAX_ATTEMPTS');
  const baseDelayMs = retryBaseMs(io);
  // --max-rps beats ORGFORM_MAX_RPS, as every option beats its variable.
  const maxRps = flags.maxRps ?? envMaxRps(io);
  const noProgressMs = envInt(io.env, 'ORGFORM_NO_PROGRESS_TIMEOUT_MS');
  const tokenCommandTimeoutMs = envInt(io.env, 'ORGFORM_TOKEN_COMMAND_TIMEOUT_MS');
  const [{ createClient }, { fixedTokenSource, commandTokenSource }] = await Promise.all([import('../client.js'), import('../token-source.js')]);
  let tokens: TokenSource;
  if (connection.tokenCommand !== undefined) {
    const command = connection.tokenCommand;
    const [{ runTokenCommand, TOKEN_COMMAND_TIMEOUT_MS }, { tellIfSlow }] = await Promise.all([import('./run-token-command.js'), import('../wait-event.js')]);
    let runs = 0;
    const source: TokenSource = commandTokenSource({
      now: io.now,
      source: connection.source,
      obtain: async () => {
        const when = runs === 0 ? 'start' : 'refresh';
        runs += 1;
        const startedAt = io.now();
        const timeoutMs = tokenCommandTimeoutMs ?? TOKEN_COMMAND_TIMEOUT_MS;
        try {
          const run = runTokenCommand(command, { env: io.env, cwd: io.cwd, when, source: connection.source, signal: io.signal, timeoutMs });
          const wait = { reason: 'token-command' as const, what: `the token command (${connection.source})`, until: startedAt + timeoutMs, setting: 'ORGFORM_TOKEN_COMMAND_TIMEOUT_MS' };
          return await tellIfSlow(run, () => wait, hooks.onWait?.bind(hooks), io.now);
        } catch (err) {
          // Interrupted, the run is winding down already; any other failure part way stops it.
          if (when === 'refresh' && isOrgformError(err) && err.code !== 'INTERRUPTED') hooks.onHalt?.(err);
          throw err;
        }
      },
    });
    tokens = source;
    // It runs at the start: a command that fails or prints nothing stops here, before any request.
    await tokens.current();
  } else {
    tokens = fixedTokenSource(connection.token, connection.source);
    const { readJwtExpiry } = await import('../read-jwt-expiry.js');
    const expiry = readJwtExpiry(connection.token);
    if (expiry) hooks.onTokenExpiry?.(expiry);
  }
  return createClient({
    baseUrl: connection.baseUrl,
    tokens,
    ...(proxy === undefined ? {} : { proxy }),
    ...(extraCaCerts === undefined ? {} : { extraCaCerts }),
    ...(maxRps === undefined ? {} : { maxRps }),
    // --parallelism: the callers bound the requests in flight (apply's workers, the reader's p-limit);
    // the client sizes its connection pool from it, above that bound (poolSize in client.ts).
    ...(flags.parallelism === undefined ? {} : { parallelism: flags.parallelism }),
    ...(noProgressMs === undefined ? {} : { noProgressMs }),
    onRate: (event) => hooks.onRate?.(event),
    onHalt: (error) => hooks.onHalt?.(error),
    ...(hooks.onWait === undefined ? {} : { onWait: (event: WaitEvent) => hooks.onWait?.(event) }),
    signal: io.signal,
    ...(hooks.onRetry === undefined ? {} : { onRetry: hooks.onRetry }),
    ...(totalMs === undefined ? {} : { timeouts: { totalMs } }),
    retryPolicy: {
      ...(maxAttempts === undefined ? {} : { maxAttempts }),
      ...(baseDelayMs === undefined ? {} : { baseDelayMs }),
    },
  });
}

/** What a flow calls at its Connect step: the client from these flags and io, with the fixed token's expiry when it is a JWT. */
export function clientOpener(flags: ConnectionFlags & { parallelism?: number; maxRps?: number }, io: CliIO): OpenClient {
  return async (listeners) => {
    let tokenExpiry: JwtExpiry | undefined;
    const client = await openClient(flags, io, {
      ...listeners,
      onTokenExpiry: (expiry) => {
        tokenExpiry = expiry;
      },
    });
    return { client, ...(tokenExpiry === undefined ? {} : { tokenExpiry }) };
  };
}
