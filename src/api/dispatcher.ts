/**
 * The undici 7 dispatcher that every request goes through: a pooled Agent with connect, header and
 * body timeouts, composed with undici's retry interceptor (driven by our pure retry policy) and a
 * gate that makes every attempt wait its turn at the client's shared rate limiter (and tells it
 * what came back). Request bodies are strings (http.ts), so a retried PUT sends its body again. With proxies in the environment, the pool is undici's EnvHttpProxyAgent instead,
 * with the same timeouts and size, under the same interceptors: a proxied request is retried,
 * paced and timed as any other.
 */
import { Agent, EnvHttpProxyAgent, interceptors, Pool, type buildConnector, type Dispatcher } from 'undici';
import { NotSentError } from './api-error.js';
import type { ProxySettings } from './proxy-settings.js';
import { parseRateLimitHeaders } from './rate/rate-limit-headers.js';
import type { RateGate } from './rate/rate-gate.js';
import { decideRetry, parseRetryAfter, type RetryDecision, type RetryPolicy } from './retry-policy.js';
import { WAIT_NOTICE_MS, type WaitEvent } from './wait-event.js';
import { WaitWatch, type WaitWatchClock } from './wait-watch.js';

export interface Timeouts {
  connectMs: number;
  /** Time to the response headers of one attempt. */
  headersMs: number;
  /** Longest silence between body chunks. */
  bodyMs: number;
  /** Whole logical request, retries and waits included (the retry budget). */
  totalMs: number;
}

export const DEFAULT_TIMEOUTS: Timeouts = { connectMs: 10_000, headersMs: 30_000, bodyMs: 30_000, totalMs: 60_000 };

/** What happened to one logical request across its attempts; read by http.ts when it ends. */
export interface AttemptRecord {
  startedAt: number;
  attempts: number;
  lastDecision?: RetryDecision;
  /** Where a refused redirect pointed: the message names it, since a redirect is never followed. */
  redirectLocation?: string;
  /** What the caller calls this request (a change's address), for retry events. */
  label?: string;
  /** 429 answers so far: backpressure, not attempts. */
  throttles: number;
  /** Time spent waiting at the rate limiter, which no budget or deadline counts. */
  heldMs: number;
  /** Waiting at the rate limiter right now. */
  holding: boolean;
  /** No attempt is sent after this time (a write built from a read that would be too old by then). */
  notAfter?: number;
  /** The current attempt's answer has begun (its status and headers came). */
  answered?: boolean;
  /** When the latest attempt was sent: what its answer shows is no older. */
  sentAt?: number;
  /** The request in words, for a wait line. */
  what: string;
  /** Its time budget (the deadline, less the time held at the rate limiter). */
  budgetMs: number;
  /** The proxy it goes through, redacted, with its variable. */
  via?: string;
  /** While it backs off before a retry: until when, and what failed. */
  backoff?: { until: number; after: string };
}

/** What http.ts says of a logical request as it starts. */
export interface TrackOptions {
  what: string;
  budgetMs: number;
  label?: string;
  notAfter?: number;
  via?: string;
}

export interface RetryEvent {
  requestId: string;
  label?: string;
  /** The attempt that failed (1 for the first). */
  attempt: number;
  delayMs: number;
  status?: number;
  errorCode?: string;
}

export interface RetryingDispatcher {
  dispatcher: Dispatcher;
  /** Starts tracking a logical request; its X-Request-Id header ties the attempts to it. */
  track(requestId: string, options: TrackOptions): AttemptRecord;
  untrack(requestId: string): void;
  close(): Promise<void>;
}

export interface DispatcherOptions {
  policy: RetryPolicy;
  timeouts: Timeouts;
  now?: () => number;
  random?: () => number;
  /** Told of every retry, for progress output and tests. */
  onRetry?: (event: RetryEvent) => void;
  connections?: number;
  /** The client's one rate limiter, shared by all its dispatchers. */
  limiter: RateGate;
  /** HTTP(S)_PROXY and NO_PROXY, read from the injected environment (proxy-settings.ts). */
  proxy?: ProxySettings;
  /** Told when the requests have waited WAIT_NOTICE_MS for something (wait-watch.ts). */
  onWait?: (event: WaitEvent) => void;
  /** The clock of that watch; injected by tests. */
  waitClock?: WaitWatchClock;
}

type DispatchFn = Dispatcher['dispatch'];

/** An attempt that never reached the wire (the limiter gave up on it, or was stopped) fails through the handler like a network error. */
function failAttempt(handler: Dispatcher.DispatchHandler, err: Error): void {
  const h = handler as Dispatcher.DispatchHandler & { onError?: (e: Error) => void };
  if (h.onResponseError) h.onResponseError(null as never, err);
  else h.onError?.(err);
}

/**
 * Passes everything through, telling the limiter what status and rate-limit headers each answer
 * carried; and, as the attempt's bytes are about to go out on its connection, asks `refuse` whether
 * it may still go (a connection can take seconds to open after the gate let the attempt through).
 */
class AnswerObserver implements Dispatcher.DispatchHandler {
  constructor(
    private readonly inner: Dispatcher.DispatchHandler,
    private readonly onAnswer: (status: number, headers: Record<string, string | string[] | undefined>) => void,
    private readonly refuse: () => Error | undefined = () => undefined,
  ) {}

  onRequestStart(controller: Dispatcher.DispatchController, context: unknown): void {
    const refused = this.refuse();
    // Aborted here, undici writes nothing of the request.
    if (refused !== undefined) return controller.abort(refused);
    this.inner.onRequestStart?.(controller, context);
  }

  onRequestUpgrade(controller: Dispatcher.DispatchController, statusCode: number, headers: Record<string, string | string[]>, socket: unknown): void {
    this.inner.onRequestUpgrade?.(controller, statusCode, headers as never, socket as never);
  }

  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, headers: Record<string, string | string[]>, statusMessage?: string): void {
    // An informational 1xx (103 Early Hints, 102 Processing) is not the answer, and goes no further:
    // undici's retry interceptor would take it for the answer's start, and the real one that follows
    // for a resumed download, and fail the request.
    if (statusCode < 200) return;
    this.onAnswer(statusCode, headers);
    this.inner.onResponseStart?.(controller, statusCode, headers as never, statusMessage);
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.inner.onResponseData?.(controller, chunk);
  }

  onResponseEnd(controller: Dispatcher.DispatchController, trailers: Record<string, string | string[]>): void {
    this.inner.onResponseEnd?.(controller, trailers as never);
  }

  onResponseError(controller: Dispatcher.DispatchController, err: Error): void {
    this.inner.onResponseError?.(controller, err);
  }
}

/**
 * A proxy closed the connection instead of answering the CONNECT (a web server that is no proxy
 * does that). undici's pool takes its own code for that failure (UND_ERR_SOCKET) for one that a new
 * connection mends, keeps the request queued and connects again at once, for ever, at full CPU;
 * under this code the request fails (and is retried as a reset connection).
 */
export class ProxyTunnelClosedError extends Error {
  readonly code = 'ECONNRESET';
  constructor(cause: unknown) {
    super('the proxy closed the connection instead of answering the CONNECT', { cause });
    this.name = 'ProxyTunnelClosedError';
  }
}

/**
 * The pool an EnvHttpProxyAgent opens for each origin (its `factory`): one whose tunnels, when a
 * proxy hangs up on the CONNECT, fail the request (ProxyTunnelClosedError) rather than open again.
 */
export function proxiedPool(origin: URL | string, opts: Pool.Options): Pool {
  return new Pool(origin, typeof opts.connect === 'function' ? { ...opts, connect: reportClosedTunnel(opts.connect) } : opts);
}

function reportClosedTunnel(connect: buildConnector.connector): buildConnector.connector {
  return (options, callback) =>
    connect(options, (...args) => {
      const [err] = args;
      if (err !== null && (err as { code?: unknown }).code === 'UND_ERR_SOCKET') callback(new ProxyTunnelClosedError(err), null);
      else callback(...args);
    });
}

function headerValue(headers: unknown, name: string): string | undefined {
  if (headers == null) return undefined;
  if (Array.isArray(headers)) {
    // Either [k, v, k, v] or [[k, v], ...].
    if (headers.length > 0 && Array.isArray(headers[0])) {
      for (const [k, v] of headers as [string, string][]) if (String(k).toLowerCase() === name) return String(v);
      return undefined;
    }
    for (let i = 0; i + 1 < headers.length; i += 2) {
      if (String(headers[i]).toLowerCase() === name) return String(headers[i + 1]);
    }
    return undefined;
  }
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  for (const [k, v] of Object.entries(headers as Record<string, unknown>)) {
    if (k.toLowerCase() === name) return Array.isArray(v) ? String(v[0]) : String(v);
  }
  return undefined;
}

export function createDispatcher(options: DispatcherOptions): RetryingDispatcher {
  const now = options.now ?? Date.now;
  const random = options.random ?? Math.random;
  const limiter = options.limiter;
  const records = new Map<string, AttemptRecord>();

  const retry = (err: Error, context: { state: { counter: number }; opts: Dispatcher.DispatchOptions }, callback: (err?: Error | null) => void) => {
    const e = err as Error & { statusCode?: number; code?: string; headers?: Record<string, string | string[] | undefined> };
    const requestId = headerValue(context.opts.headers, 'x-request-id') ?? '';
    const record = records.get(requestId) ?? { startedAt: now(), attempts: 0, throttles: 0, heldMs: 0, holding: false, what: 'a request', budgetMs: options.policy.budgetMs };
    const status = typeof e.statusCode === 'number' ? e.statusCode : undefined;
    if (status !== undefined && status >= 300 && status < 400) record.redirectLocation = headerValue(e.headers, 'location');
    const retryAfterRaw = e.headers?.['retry-after'];
    const decision = decideRetry(options.policy, {
      attempt: context.state.counter - record.throttles,
      status,
      errorCode: status === undefined ? e.code : undefined,
      retryAfter: Array.isArray(retryAfterRaw) ? retryAfterRaw[0] : retryAfterRaw,
      elapsedMs: now() - record.startedAt - record.heldMs,
      nowMs: now(),
      random: random(),
    });
    record.lastDecision = decision;
    // The connection broke after the answer began: undici's interceptor would ask again for the rest
    // by byte range (Range and If-Match, on a PUT too), which the service does not serve, and fail
    // anyway. The request fails here, naming the connection, and is sent no second time.
    if (status === undefined && record.answered === true) {
      callback(err);
      return;
    }
    if (!decision.retry) {
      callback(err);
      return;
    }
    if (decision.backpressure) {
      // The limiter has already paused everyone (Retry-After) and cut the rate: the retry waits its
      // turn there, at the gate, holding no socket, rather than here with the answer unread.
      record.throttles += 1;
      const waitMs = Math.max(decision.delayMs, limiter.status().pausedMs);
      options.onRetry?.({ requestId, label: record.label, attempt: context.state.counter, delayMs: waitMs, status });
      callback(null);
      return;
    }
    // An answer's status says it all; undici's own code for it (UND_ERR_REQ_RETRY) would be noise.
    options.onRetry?.({ requestId, label: record.label, attempt: context.state.counter, delayMs: decision.delayMs, status, ...(status === undefined && e.code !== undefined ? { errorCode: e.code } : {}) });
    // The limiter's backoff: not unref'd (during the wait no socket may be open, and this timer is
    // then all that keeps the process alive; unref'd, Node exits with code 13 mid-request), bounded
    // by the budget, and over at once when the client stops (an interrupt), so that the retry
    // fails at the gate, unsent.
    record.backoff = { until: now() + decision.delayMs, after: status === undefined ? (e.code ?? 'a failed connection') : `HTTP ${status}` };
    void limiter.backoff(decision.delayMs).then(() => {
      delete record.backoff;
      callback(null);
    });
  };

  const pool = {
    headersTimeout: options.timeouts.headersMs,
    bodyTimeout: options.timeouts.bodyMs,
    connections: options.connections ?? 64,
    keepAliveTimeout: 10_000,
  };
  const connect = { timeout: options.timeouts.connectMs };
  const proxy = options.proxy;
  const agent: Dispatcher =
    proxy === undefined
      ? new Agent({ ...pool, connect })
      : new EnvHttpProxyAgent({
          ...pool,
          connect,
          // A proxy's own `connect` replaces ours: the connect timeout goes to the proxy's socket and to the TLS inside the tunnel.
          proxyTls: connect,
          requestTls: connect,
          // The pool that asks the proxy for tunnels: its CONNECT is part of connecting, so the proxy's
          // answer must come within the connect timeout. undici's default (300 s) let a proxy that
          // took the connection and never answered hold each attempt, and close(), for five minutes.
          clientFactory: (origin: URL, opts: object) => new Pool(origin, { ...opts, headersTimeout: options.timeouts.connectMs, bodyTimeout: options.timeouts.connectMs }),
          // Each origin's pool, its tunnels opened through the proxy: a proxy that hangs up on a CONNECT
          // fails the request (and is retried, and named) rather than being opened again for ever.
          factory: proxiedPool,
          // Given explicitly ('' for none), so that undici never falls back to process.env.
          httpProxy: proxy.http?.url ?? '',
          httpsProxy: proxy.https?.url ?? '',
          noProxy: proxy.noProxy,
        });

  // Every attempt, first or retry, waits for its turn at the shared limiter, and every answer is
  // reported to it. The wait is held time: no deadline or budget runs meanwhile.
  const gate = (dispatch: DispatchFn): DispatchFn => (opts, handler) => {
    const record = records.get(headerValue(opts.headers, 'x-request-id') ?? '');
    // Held (a 429's pause, a backoff, pacing, a connection slow to open) until what it was built from is too old to send.
    const tooOld = (): NotSentError | undefined =>
      record?.notAfter !== undefined && now() > record.notAfter ? new NotSentError({ why: 'what it was built from was read too long ago', readTooOld: true }) : undefined;
    const send = (): boolean => {
      const refused = tooOld();
      if (refused !== undefined) {
        failAttempt(handler, refused);
        return true;
      }
      const sentAt = limiter.recordSend();
      if (record) {
        record.answered = false;
        record.sentAt = now();
      }
      const observed = new AnswerObserver(handler, (status, headers) => {
        if (record) record.answered = true;
        const get = (name: string) => {
          const v = headers[name];
          return Array.isArray(v) ? v.join(', ') : v;
        };
        const at = now();
        const retryAfterMs = status === 429 ? parseRetryAfter(get('retry-after'), at) : undefined;
        const hint = parseRateLimitHeaders(get, at);
        limiter.recordAnswer({ sentAt, status, ...(retryAfterMs === undefined ? {} : { retryAfterMs }), ...(hint === undefined ? {} : { hint }) });
      }, tooOld);
      // Counted here, for error messages: every attempt the limiter lets through.
      if (record) record.attempts += 1;
      try {
        return dispatch(opts, observed);
      } catch (err) {
        failAttempt(handler, err as Error);
        return true;
      }
    };
    let turn: Promise<void> | undefined;
    try {
      turn = limiter.acquire();
    } catch (err) {
      failAttempt(handler, err as Error);
      return true;
    }
    if (turn === undefined) return send();
    const heldFrom = now();
    if (record) record.holding = true;
    const release = () => {
      if (!record) return;
      record.heldMs += now() - heldFrom;
      record.holding = false;
    };
    turn.then(
      () => {
        release();
        send();
      },
      (err: Error) => {
        release();
        failAttempt(handler, err);
      },
    );
    return true;
  };

  const watch = options.onWait === undefined ? undefined : new WaitWatch((at) => describeWait(records, limiter, at, now()), options.onWait, options.waitClock);

  const dispatcher = agent.compose(
    gate,
    interceptors.retry({
      throwOnError: false,
      // Our policy owns the limits; the interceptor's own cap is set out of its way.
      maxRetries: Math.max(0, options.policy.maxAttempts),
      methods: ['GET', 'PUT', 'DELETE'],
      statusCodes: [...options.policy.retryableStatuses],
      errorCodes: [...options.policy.retryableErrorCodes],
      retry: retry as never,
    }),
  );

  return {
    dispatcher,
    track(requestId, tracked) {
      const record: AttemptRecord = { startedAt: now(), attempts: 0, throttles: 0, heldMs: 0, holding: false, ...tracked };
      records.set(requestId, record);
      limiter.begin();
      watch?.begin();
      return record;
    },
    untrack(requestId) {
      if (!records.delete(requestId)) return;
      limiter.end();
      watch?.end();
    },
    close: () => agent.close(),
  };
}

/**
 * What the requests wait for now, told by the oldest of them: the rate limiter's pause (a 429's, or
 * an empty quota's) or its pace, a backoff before a retry, or else an answer that has not come;
 * for a retry or an attempt held at the gate, once it has waited WAIT_NOTICE_MS for it (`now`, the
 * dispatcher's clock): one just sent, as a pause told before ends, has not made anyone wait yet.
 */
export function describeWait(records: ReadonlyMap<string, AttemptRecord>, limiter: RateGate, at: number, now: number): WaitEvent | undefined {
  let oldest: AttemptRecord | undefined;
  for (const record of records.values()) if (oldest === undefined || record.startedAt < oldest.startedAt) oldest = record;
  if (oldest === undefined) return undefined;
  const status = limiter.status();
  const what = oldest.what;
  if (status.pausedMs > 0) return { reason: status.pausedBy === 'quota' ? 'quota' : 'rate-limit', what, until: at + status.pausedMs, waiting: status.waiting, at };
  if (oldest.holding && status.rps !== undefined) return { reason: 'pacing', what, until: at + (Math.max(1, status.waiting) * 1000) / status.rps, waiting: status.waiting, rps: status.rps, at };
  if (oldest.backoff !== undefined) return { reason: 'retry', what, until: oldest.backoff.until, after: oldest.backoff.after, at };
  // A retry, or an attempt held at the gate, waits for its answer only from its sending.
  const resent = oldest.attempts > 1 || oldest.heldMs > 0;
  if (resent && now - (oldest.sentAt ?? oldest.startedAt) < WAIT_NOTICE_MS) return undefined;
  return {
    reason: 'answer',
    what,
    until: oldest.startedAt + oldest.budgetMs + oldest.heldMs,
    ...(oldest.answered === true ? { begun: true } : {}),
    ...(oldest.via === undefined ? {} : { via: oldest.via }),
    at,
  };
}
