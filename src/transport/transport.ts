/**
 * The one way orgform sends an HTTP request (to the service, to a Terraform HTTP state): undici's
 * request API on one connection pool, every attempt through the gate (a turn at the shared rate
 * limit, its answer told to it) and undici's retry interceptor (driven by the pure retry policy),
 * with one deadline, one size cap and one set of words for what fails. Redirects are never
 * followed: they would carry the credentials wherever they point.
 *
 * The request API rather than fetch: it never follows a redirect (a 3xx is an answer like any
 * other, refused here), and it spares each request fetch's web streams, Request and Response
 * objects and signals. What is particular to a client (its credentials, its answers' meaning)
 * stays with it; a request here is a method, an address, headers and a string body.
 */
import { interceptors, type Dispatcher } from 'undici';
import type { Redactor } from '../redact.js';
import { AnswerObserver, AttemptTeller, failAttempt, retryAttempt, type AttemptEvent, type RequestGate, type RetryContext, type RetryEvent } from './attempts.js';
import { DEFAULT_TIMEOUTS, openConnectionPool, type Timeouts } from './connection-pool.js';
import { Exchange, onAnswerStart, type ExchangeHost, type ExchangeSettings, type ExchangeView, type Peer, type TransportAnswer, type TransportRequest } from './exchange.js';
import { proxyForScheme, type ProxySettings } from './proxy-settings.js';
import type { RetryPolicy } from './retry-policy.js';

export type { AttemptEvent, RequestGate, RetryEvent } from './attempts.js';
export type { ExchangeView, Peer, TransportAnswer, TransportRequest } from './exchange.js';

/** Told when requests start and end (a watch that tells a wait). */
export interface RequestWatch {
  begin(): void;
  end(): void;
}

export interface TransportOptions {
  retry: RetryPolicy;
  timeouts?: Timeouts;
  maxResponseBytes: number;
  /** The run's redactor: every error the transport makes redacts with it. */
  redactor: Redactor;
  /** Who answers and what names it, for the words of a failure (`the service`, `the base URL`). */
  peer: Peer;
  /** Connections in the pool (default 64). */
  connections?: number;
  proxy?: ProxySettings;
  /** NODE_EXTRA_CA_CERTS as the process started with it, for the hint on a certificate refused. */
  extraCaCerts?: string;
  /** Every attempt waits its turn here; the time held counts toward no deadline or budget. */
  gate?: RequestGate;
  watch?: RequestWatch;
  /** The clock of deadlines, the retry budget and `sentAt`; injected by tests. */
  now?: () => number;
  random?: () => number;
  /** Told of every retry, for progress output and tests. */
  onRetry?: (event: RetryEvent) => void;
  /** Told of every attempt as it goes on the wire and as it ends (a view of each request's attempts). Unset, nothing is made for it. */
  onAttempt?: (event: AttemptEvent) => void;
  /** Tests: the connections to send on, instead of undici's Agent. */
  pool?: Dispatcher;
  /**
   * The run's interrupt: every read outstanding is let go at once (NotSentError), as what waits its
   * turn is: nothing is built from a read once interrupted. A write on the wire is waited for.
   */
  interrupt?: AbortSignal;
}

export class Transport implements ExchangeHost {
  readonly settings: ExchangeSettings;
  readonly now: () => number;
  readonly #dispatcher: Dispatcher;
  readonly #pool: Dispatcher;
  readonly #gate: RequestGate | undefined;
  readonly #watch: RequestWatch | undefined;
  readonly #outstanding = new Set<Exchange>();
  readonly #attempts: AttemptTeller | undefined;
  readonly #interrupt: AbortSignal | undefined;

  constructor(options: TransportOptions) {
    const timeouts = options.timeouts ?? DEFAULT_TIMEOUTS;
    const { maxResponseBytes, redactor, peer, proxy, extraCaCerts } = options;
    this.settings = { timeouts, maxResponseBytes, redactor, peer, proxy, extraCaCerts };
    this.now = options.now ?? Date.now;
    this.#gate = options.gate;
    this.#watch = options.watch;
    this.#pool = options.pool ?? openConnectionPool(timeouts, options.connections ?? 64, proxy);
    this.#attempts = options.onAttempt === undefined ? undefined : new AttemptTeller(options.onAttempt, this.now);
    // One listener a transport, not one a request: the outstanding reads are let go when it fires.
    this.#interrupt = options.interrupt;
    this.#interrupt?.addEventListener('abort', this.#letGoReads, { once: true });
    const retry: RetryContext = { policy: options.retry, gate: options.gate, now: this.now, random: options.random ?? Math.random, onRetry: options.onRetry };
    this.#dispatcher = this.#pool.compose(
      (dispatch) => (opts, handler) => this.#attempt(dispatch, opts, handler),
      interceptors.retry({
        throwOnError: false,
        // The policy decides (retryAttempt): the interceptor's own lists and cap are not used.
        maxRetries: Math.max(0, options.retry.maxAttempts),
        retry: ((err: Error, attempt: never, callback: never) => retryAttempt(retry, err, attempt, callback)) as never,
      }),
    );
  }

  /** The request, its answer read whole; fails with TransportError (no usable answer) or NotSentError. */
  send(request: TransportRequest): Promise<TransportAnswer> {
    return new Promise((resolve, reject) => {
      const exchange = new Exchange(this, request, resolve, reject);
      // Let go before it starts (a read dropped while it waited for its token): never sent.
      if (!watchLetGo(exchange, request)) this.start(exchange);
    });
  }

  /** Sends an exchange (again, when its answer was cut off halfway): a fresh budget, no attempts yet. */
  start(exchange: Exchange): void {
    const signal = exchange.begin();
    this.#outstanding.add(exchange);
    this.#gate?.begin();
    this.#watch?.begin();
    const { url, method, headers, body } = exchange.request;
    this.#dispatcher.request<Exchange>({ origin: url.origin, path: `${url.pathname}${url.search}`, method: method as Dispatcher.HttpMethod, headers, body, signal, opaque: exchange }, onAnswerStart);
  }

  /** The request outstanding the longest, for a line saying what the run waits for. */
  oldest(): ExchangeView | undefined {
    let oldest: Exchange | undefined;
    for (const exchange of this.#outstanding) if (oldest === undefined || exchange.startedAt < oldest.startedAt) oldest = exchange;
    return oldest;
  }

  /** The proxy a request goes through, for its wait line: said only where NO_PROXY cannot make it untrue. */
  via(url: URL): string | undefined {
    const settings = this.settings.proxy;
    const proxy = settings === undefined || settings.noProxy.trim() !== '' ? undefined : proxyForScheme(settings, url);
    return proxy === undefined ? undefined : `${proxy.display} (${proxy.variable})`;
  }

  close(): Promise<void> {
    this.#interrupt?.removeEventListener('abort', this.#letGoReads);
    return this.#pool.close();
  }

  readonly #letGoReads = (): void => {
    for (const exchange of [...this.#outstanding]) exchange.letGo('interrupted');
  };

  end(exchange: Exchange): void {
    if (!this.#outstanding.delete(exchange)) return;
    this.#gate?.end();
    this.#watch?.end();
  }

  /**
   * Every attempt, first or retry, waits for its turn at the gate. The wait is held time: no deadline
   * or budget runs meanwhile.
   */
  #attempt(dispatch: Dispatcher['dispatch'], opts: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    const exchange = (opts as { opaque?: unknown }).opaque as Exchange;
    let turn: Promise<void> | undefined;
    try {
      // The attempt's signal: a read let go while it waits gives its turn to the next request.
      turn = this.#gate?.acquire((opts as { signal?: AbortSignal }).signal);
    } catch (err) {
      failAttempt(handler, err as Error);
      return true;
    }
    if (turn === undefined) return this.#send(dispatch, opts, handler, exchange);
    const heldFrom = this.now();
    exchange.holding = true;
    const release = () => {
      exchange.heldMs += this.now() - heldFrom;
      exchange.holding = false;
    };
    turn.then(
      () => (release(), this.#send(dispatch, opts, handler, exchange)),
      (err: Error) => (release(), failAttempt(handler, err)),
    );
    return true;
  }

  #send(dispatch: Dispatcher['dispatch'], opts: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler, exchange: Exchange): boolean {
    const tooOld = exchange.tooOld();
    if (tooOld !== undefined) {
      failAttempt(handler, tooOld);
      return true;
    }
    const sentAt = this.#gate === undefined ? 0 : this.#gate.recordSend();
    exchange.answered = false;
    const sentOn = (exchange.sentAt = this.now());
    // Counted here, for error messages: every attempt the gate lets through.
    exchange.attempts += 1;
    this.#attempts?.sent(exchange, sentOn);
    try {
      const dispatched = dispatch(opts, new AnswerObserver(handler, exchange, this.#gate, sentAt, sentOn, this.#attempts));
      exchange.request.onSent?.();
      return dispatched;
    } catch (err) {
      failAttempt(handler, err as Error);
      return true;
    }
  }
}

/**
 * A read whose caller lets it go (TransportRequest.letGo) is let go at once, as an interrupt lets
 * go of every read; whether it was let go already. Writes are never let go (Exchange.letGo).
 */
function watchLetGo(exchange: Exchange, { method, letGo: signal }: TransportRequest): boolean {
  if (signal === undefined || method !== 'GET') return false;
  const letGo = () => exchange.letGo('its answer is no longer needed');
  if (signal.aborted) return (letGo(), true);
  signal.addEventListener('abort', letGo, { once: true });
  return false;
}
