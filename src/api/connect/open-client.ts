/**
 * Connecting: the client, built from the connection settings (the service, the token or the
 * command that prints one) and the client settings (the request budget, the rate cap), which
 * cli/settings.ts reads. Each flow calls clientOpener's opener at its Connect step.
 */
import type { OrganisationsClient } from '../client.js';
import type { NetworkSettings } from '../../transport/proxy-settings.js';
import type { JwtExpiry } from '../read-jwt-expiry.js';
import type { TokenSource } from '../token-source.js';
import type { WaitEvent } from '../wait-event.js';
import type { ClientListeners, OpenClient } from './client-listeners.js';
import { isOrgformError } from '../../errors.js';
import { resolveConnection, type ConnectionSettings } from './resolve-connection.js';

/**
 * The request budget, tunable for slow services and tests; unset, the client's defaults:
 * ORGFORM_REQUEST_TIMEOUT_MS (each request, retries included), ORGFORM_MAX_ATTEMPTS,
 * ORGFORM_RETRY_BASE_MS (the first backoff step; apply's re-reads after an accept too),
 * ORGFORM_NO_PROGRESS_TIMEOUT_MS (only 429s for this long ends the run, and no announced pause is
 * waited out longer), ORGFORM_TOKEN_COMMAND_TIMEOUT_MS; the rate cap from --max-rps or ORGFORM_MAX_RPS.
 */
export interface ClientSettings {
  maxRps?: number;
  requestTimeoutMs?: number;
  maxAttempts?: number;
  retryBaseMs?: number;
  noProgressMs?: number;
  tokenCommandTimeoutMs?: number;
}

/** What opening a client takes: the settings read at the edge, and --parallelism (the pool is sized above it). */
export interface OpenClientSettings {
  connection: ConnectionSettings;
  client: ClientSettings;
  network: NetworkSettings;
  parallelism?: number;
}

/** Where the command runs, its clock, and the interrupt that stops the token command and every request not yet sent. */
export interface ClientWorld {
  cwd: string;
  now: () => number;
  signal: AbortSignal;
}

/** What the flow listens to (client-listeners.ts), and a fixed token's expiry, which clientOpener hands back. */
export interface ClientHooks extends ClientListeners {
  /** When a fixed token is a JWT: its expiry (never the token itself). */
  onTokenExpiry?: (expiry: JwtExpiry) => void;
}

/**
 * The client. With a token command, the command runs here, before any request: when it fails,
 * nothing is sent. An interrupt (world.signal) stops the token command and every request not yet sent.
 */
export async function openClient(settings: OpenClientSettings, world: ClientWorld, hooks: ClientHooks = {}): Promise<OrganisationsClient> {
  const connection = await resolveConnection(settings.connection, world.cwd);
  const { proxy, extraCaCerts } = settings.network;
  const { maxRps, requestTimeoutMs: totalMs, maxAttempts, retryBaseMs: baseDelayMs, noProgressMs, tokenCommandTimeoutMs } = settings.client;
  const [{ createClient }, { fixedTokenSource, commandTokenSource }] = await Promise.all([import('../client.js'), import('../token-source.js')]);
  let tokens: TokenSource;
  if (connection.tokenCommand !== undefined) {
    const command = connection.tokenCommand;
    const [{ runTokenCommand, TOKEN_COMMAND_TIMEOUT_MS }, { tellIfSlow }] = await Promise.all([import('./run-token-command.js'), import('../wait-event.js')]);
    let runs = 0;
    const source: TokenSource = commandTokenSource({
      now: world.now,
      source: connection.source,
      obtain: async () => {
        const when = runs === 0 ? 'start' : 'refresh';
        runs += 1;
        const startedAt = world.now();
        const timeoutMs = tokenCommandTimeoutMs ?? TOKEN_COMMAND_TIMEOUT_MS;
        try {
          const run = runTokenCommand(command, { childEnv: settings.connection.childEnv, cwd: settings.connection.tokenCommandDirectory ?? world.cwd, when, source: connection.source, signal: world.signal, timeoutMs });
          const wait = { reason: 'token-command' as const, what: `the token command (${connection.source})`, until: startedAt + timeoutMs, setting: 'ORGFORM_TOKEN_COMMAND_TIMEOUT_MS' };
          return await tellIfSlow(run, () => wait, hooks.onWait?.bind(hooks), world.now);
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
    ...(settings.parallelism === undefined ? {} : { parallelism: settings.parallelism }),
    ...(noProgressMs === undefined ? {} : { noProgressMs }),
    onRate: (event) => hooks.onRate?.(event),
    onHalt: (error) => hooks.onHalt?.(error),
    ...(hooks.onWait === undefined ? {} : { onWait: (event: WaitEvent) => hooks.onWait?.(event) }),
    signal: world.signal,
    ...(hooks.onRetry === undefined ? {} : { onRetry: hooks.onRetry }),
    ...(totalMs === undefined ? {} : { timeouts: { totalMs } }),
    retryPolicy: {
      ...(maxAttempts === undefined ? {} : { maxAttempts }),
      ...(baseDelayMs === undefined ? {} : { baseDelayMs }),
    },
  });
}

/** What a flow calls at its Connect step: the client from these settings, with the fixed token's expiry when it is a JWT. */
export function clientOpener(settings: OpenClientSettings, world: ClientWorld): OpenClient {
  return async (listeners) => {
    let tokenExpiry: JwtExpiry | undefined;
    const client = await openClient(settings, world, {
      ...listeners,
      onTokenExpiry: (expiry) => {
        tokenExpiry = expiry;
      },
    });
    return { client, ...(tokenExpiry === undefined ? {} : { tokenExpiry }) };
  };
}
