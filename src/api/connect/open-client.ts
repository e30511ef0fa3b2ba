/**
 * Connecting: the client, built from the connection settings (the service, the token or the
 * command that prints one) and the client settings (the request budget, the rate cap), which
 * cli/settings.ts reads. Each flow calls clientOpener's opener at its Connect step and hands it
 * its view: what the client tells (a retry of a change's request, a rate change, a wait) reaches
 * the view as an event of the run, the way the flow's own events do.
 */
import type { OrganisationsClient } from '../client.js';
import type { AttemptEvent, RetryEvent } from '../../transport/transport.js';
import type { NetworkSettings } from '../../transport/proxy-settings.js';
import type { RateEvent } from '../rate/rate-gate.js';
import type { JwtExpiry } from '../read-jwt-expiry.js';
import type { TokenSource } from '../token-source.js';
import type { WaitEvent } from '../wait-event.js';
import type { EventSink } from '../../model/event-sink.js';
import { isOrgformError, type OrgformError } from '../../errors.js';
import { resolveConnection, type Connection, type ConnectionSettings } from './resolve-connection.js';

/**
 * What the client tells a flow's view while it works, each with when (epoch ms): a retry of a
 * request a change sent (under the change's address: the client's label), a change of the shared
 * rate worth showing, and a wait that has lasted WAIT_NOTICE_MS (the service, its rate limit, the
 * token command; the flows add the state's). Views decide what to show.
 */
export type ClientEvent =
  | { type: 'change-retry'; address: string; attempt: number; delayMs: number; status?: number; errorCode?: string; at: number }
  /** `rps` undefined while nothing limits the client; `stalled`: only 429s for so long that the run stops. */
  | { type: 'rate'; at: number; reason: RateEvent['reason']; rps?: number; pausedMs: number; waiting: number }
  | ({ type: 'wait' } & WaitEvent);

/** What a flow hands the client at Connect: where its events go, and who hears that the run cannot go on. */
export interface ClientHooks {
  /** The flow's view. */
  events?: EventSink<ClientEvent>;
  /** Only 429s for too long, or the token command failed part way: nothing new should start. */
  onHalt?(error: OrgformError): void;
  /** When a fixed token is a JWT: its expiry (never the token itself); clientOpener hands it back. */
  onTokenExpiry?(expiry: JwtExpiry): void;
  /** Each request attempt, sent and ended: for a view that records the run over time (apply's report). */
  onAttempt?(event: AttemptEvent): void;
}

export interface OpenedClient {
  client: OrganisationsClient;
  /** When the token is a fixed JWT: its expiry (never the token itself), for apply's warning that it runs out part way. */
  tokenExpiry?: JwtExpiry;
}

/** How a flow gets its client at its Connect step (clientOpener below; tests open a scripted client instead). */
export type OpenClient = (hooks: Omit<ClientHooks, 'onTokenExpiry'>) => Promise<OpenedClient>;

/** The service as plans and the journal name it: the base URL as the client normalised it. */
export function serviceKeyOf(client: Pick<OrganisationsClient, 'baseUrl'>): string {
  return client.baseUrl.toString().replace(/\/$/, '');
}

/** A wait as an event of the run: for a wait the flow watches itself (the state's lock, its read). */
export function waitEvent(wait: WaitEvent): ClientEvent {
  return { type: 'wait', ...wait };
}

/** The client's callbacks, as the events they are: a retry no change sent (the plan's own reads) is no event. */
export function clientCallbacks(events: EventSink<ClientEvent> | undefined, now: () => number) {
  return {
    onRetry({ requestId: _requestId, label, ...rest }: RetryEvent): void {
      if (label !== undefined) events?.event({ type: 'change-retry', address: label, ...rest, at: now() });
    },
    onRate({ reason, rps, pausedMs, waiting }: RateEvent): void {
      events?.event({ type: 'rate', at: now(), reason, pausedMs, waiting, ...(rps === undefined ? {} : { rps }) });
    },
    onWait(wait: WaitEvent): void {
      events?.event(waitEvent(wait));
    },
  };
}

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

/**
 * The client. With a token command, the command runs here, before any request: when it fails,
 * nothing is sent. An interrupt (world.signal) stops the token command and every request not yet sent.
 */
export async function openClient(settings: OpenClientSettings, world: ClientWorld, hooks: ClientHooks = {}): Promise<OrganisationsClient> {
  const connection = await resolveConnection(settings.connection, world.cwd);
  const { proxy, extraCaCerts } = settings.network;
  const { maxRps, requestTimeoutMs: totalMs, maxAttempts, retryBaseMs: baseDelayMs, noProgressMs } = settings.client;
  // Without a view to tell, the client watches for no wait and reports no retry.
  const told = hooks.events === undefined ? undefined : clientCallbacks(hooks.events, world.now);
  const [{ createClient }, tokens] = await Promise.all([import('../client.js'), openTokenSource(connection, settings, world, hooks)]);
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
    onRate: (event) => told?.onRate(event),
    onHalt: (error) => hooks.onHalt?.(error),
    ...(hooks.onAttempt === undefined ? {} : { onAttempt: hooks.onAttempt }),
    ...(told === undefined ? {} : { onWait: told.onWait, onRetry: told.onRetry }),
    signal: world.signal,
    ...(totalMs === undefined ? {} : { timeouts: { totalMs } }),
    retryPolicy: {
      ...(maxAttempts === undefined ? {} : { maxAttempts }),
      ...(baseDelayMs === undefined ? {} : { baseDelayMs }),
    },
  });
}

/**
 * Where the token comes from. A token command runs here, at the start: a command that fails or
 * prints nothing stops the run before any request. A fixed token that is a JWT has its expiry told.
 */
async function openTokenSource(connection: Connection, settings: OpenClientSettings, world: ClientWorld, hooks: ClientHooks): Promise<TokenSource> {
  const { fixedTokenSource, commandTokenSource } = await import('../token-source.js');
  if (connection.tokenCommand === undefined) {
    const { readJwtExpiry } = await import('../read-jwt-expiry.js');
    const expiry = readJwtExpiry(connection.token);
    if (expiry) hooks.onTokenExpiry?.(expiry);
    return fixedTokenSource(connection.token, connection.source);
  }
  const command = connection.tokenCommand;
  const [{ runTokenCommand, TOKEN_COMMAND_TIMEOUT_MS }, { tellIfSlow }] = await Promise.all([import('./run-token-command.js'), import('../wait-event.js')]);
  const timeoutMs = settings.client.tokenCommandTimeoutMs ?? TOKEN_COMMAND_TIMEOUT_MS;
  const onWait = hooks.events === undefined ? undefined : (wait: WaitEvent) => hooks.events?.event(waitEvent(wait));
  let runs = 0;
  const tokens = commandTokenSource({
    now: world.now,
    source: connection.source,
    obtain: async () => {
      const when = runs === 0 ? 'start' : 'refresh';
      runs += 1;
      const startedAt = world.now();
      try {
        const run = runTokenCommand(command, { childEnv: settings.connection.childEnv, cwd: settings.connection.tokenCommandDirectory ?? world.cwd, when, source: connection.source, signal: world.signal, timeoutMs });
        const wait = { reason: 'token-command' as const, what: `the token command (${connection.source})`, until: startedAt + timeoutMs, setting: 'ORGFORM_TOKEN_COMMAND_TIMEOUT_MS' };
        return await tellIfSlow(run, () => wait, onWait, world.now);
      } catch (err) {
        // Interrupted, the run is winding down already; any other failure part way stops it.
        if (when === 'refresh' && isOrgformError(err) && err.code !== 'INTERRUPTED') hooks.onHalt?.(err);
        throw err;
      }
    },
  });
  await tokens.current();
  return tokens;
}

/** What a flow calls at its Connect step: the client from these settings, with the fixed token's expiry when it is a JWT. */
export function clientOpener(settings: OpenClientSettings, world: ClientWorld): OpenClient {
  return async (hooks) => {
    let tokenExpiry: JwtExpiry | undefined;
    const client = await openClient(settings, world, {
      ...hooks,
      onTokenExpiry: (expiry) => {
        tokenExpiry = expiry;
      },
    });
    return { client, ...(tokenExpiry === undefined ? {} : { tokenExpiry }) };
  };
}
