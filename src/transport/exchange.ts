/**
 * One request and its answer, as the transport carries it: its deadline (time held at the gate
 * moves it on), its attempts as the gate and the retry interceptor count them, the answer read
 * whole, and what fails, in words, as a TransportError. An answer cut off halfway through its body
 * is sent whole again (undici's interceptor would ask for the rest by byte range, which the service
 * does not serve): safe for every operation, as a write carries its idempotency key and a delete
 * found gone is done.
 *
 * One object a request, its methods on the prototype: a bulk apply sends 100,000.
 */
import type { Dispatcher } from 'undici';
import { OrgformError } from '../errors.js';
import type { Redactor } from '../redact.js';
import type { AttemptRecord } from './attempts.js';
import type { Timeouts } from './connection-pool.js';
import { describeConnectionFailure, describeFailure, errorCodeOf, type Peer } from './describe-failure.js';
import type { ProxySettings } from './proxy-settings.js';
import { BodyNotUtf8Error, BodyTooLargeError, discardBody, encodingOf, firstHeader, readBody, refusedEncoding, type BodySink, type Headers } from './read-answer.js';
import type { RetryDecision } from './retry-policy.js';
import { NotSentError, TransportError, type TransportFailure } from './transport-error.js';

export type { Peer } from './describe-failure.js';

/** While an attempt waits at the gate, the deadline looks again this often. */
const HOLD_RECHECK_MS = 1_000;

/** Node's timers hold at most this (about 24.8 days); a longer one would fire at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** How many times a request whose answer was cut off halfway is sent again whole. */
const MAX_CUT_RESENDS = 2;

/** What an exchange holds once it has ended: nothing of the request (see Exchange.#finish), and never sent again. */
const ENDED: TransportRequest = { method: 'GET', url: new URL('http://ended.invalid/'), headers: {}, operation: '', what: '', retry: false };
const NO_HEADERS: Headers = {};

export interface TransportRequest {
  method: string;
  url: URL;
  /** Every header, the credentials included (the caller's: the transport adds none). */
  headers: Record<string, string>;
  body?: string;
  /** What is asked, for messages: `getOrganisation`, `reading the state`. */
  operation: string;
  /** What it is about, for messages: `organisation "acme"` (redacted where an error is made). */
  target?: string;
  /** The request in words, for a line saying what the run waits for. */
  what: string;
  /** What the caller calls it (a change's address), passed to retry events. */
  label?: string;
  /** No attempt is sent after this time (epoch ms, the transport's clock): NotSentError with `readTooOld`. */
  notAfter?: number;
  /** false: sent once, never again (a lock, whose answer lost would make a second try look like someone else's). */
  retry?: boolean;
  /** Told each time an attempt is handed to undici (past the gate), for a caller that waits for it to be on its way. */
  onSent?: () => void;
  /**
   * A read's caller that will not use its answer (a page read ahead that the listing does not take):
   * once aborted, the read is let go (NotSentError), on the wire or waiting its turn, and not retried.
   */
  letGo?: AbortSignal;
}

export interface TransportAnswer {
  status: number;
  headers: Headers;
  /** The body, read whole (inflated, checked as UTF-8). */
  text: string;
  /** When the attempt that was answered was sent (the transport's clock): what the answer shows is no older. */
  sentAt: number;
  attempts: number;
  /** The retry policy's last word, when an attempt failed (why a failure status was not tried again). */
  decision?: RetryDecision;
}

/** How a transport's requests are bounded, and its failures put into words. */
export interface ExchangeSettings {
  readonly timeouts: Timeouts;
  readonly maxResponseBytes: number;
  /** The run's redactor: every error made here redacts with it. */
  readonly redactor: Redactor;
  readonly peer: Peer;
  readonly proxy?: ProxySettings | undefined;
  readonly extraCaCerts?: string | undefined;
}

/** What an exchange needs of its transport. */
export interface ExchangeHost {
  readonly settings: ExchangeSettings;
  now(): number;
  /** Sends it (again). */
  start(exchange: Exchange): void;
  /** It ended (or is sent whole again): no longer outstanding. */
  end(exchange: Exchange): void;
}

/** A request outstanding, as a line saying what the run waits for describes it. */
export interface ExchangeView {
  readonly url: URL;
  readonly what: string;
  readonly startedAt: number;
  /** Its time budget (the deadline, less the time held at the gate). */
  readonly budgetMs: number;
  readonly heldMs: number;
  /** Waiting at the gate right now. */
  readonly holding: boolean;
  readonly backoff: { until: number; after: string } | undefined;
  /** Attempts the gate has let through so far. */
  readonly attempts: number;
  /** When the current attempt went out, if it has. */
  readonly sentAt: number | undefined;
  /** The current attempt's answer has begun (its status and headers came). */
  readonly answered: boolean;
}

/** undici's request callback: the answer's start (status, headers, the body to read), or why none came. */
export function onAnswerStart(err: Error | null, data: Dispatcher.ResponseData<Exchange>): void {
  data.opaque.onAnswerStart(err, data);
}

export class Exchange implements AttemptRecord, ExchangeView, BodySink {
  startedAt = 0;
  attempts = 0;
  throttles = 0;
  heldMs = 0;
  holding = false;
  answered = false;
  sentAt: number | undefined = undefined;
  lastDecision: RetryDecision | undefined = undefined;
  backoff: { until: number; after: string } | undefined = undefined;
  /** The deadline's: aborting it stops the attempt on the wire. */
  controller: AbortController | undefined = undefined;
  #resolve: ((answer: TransportAnswer) => void) | undefined;
  #reject: ((err: Error) => void) | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined = undefined;
  #heldCounted = 0;
  #resent = 0;
  #done = false;
  #status = 0;
  #headers: Headers = NO_HEADERS;

  constructor(
    readonly host: ExchangeHost,
    /** What was asked; once it has ended, ENDED. */
    public request: TransportRequest,
    resolve: (answer: TransportAnswer) => void,
    reject: (err: Error) => void,
  ) {
    this.#resolve = resolve;
    this.#reject = reject;
  }

  get url(): URL {
    return this.request.url;
  }

  get what(): string {
    return this.request.what;
  }

  get budgetMs(): number {
    return this.host.settings.timeouts.totalMs;
  }

  /** A fresh start: a whole budget, no attempts yet; the deadline's signal. */
  begin(): AbortSignal {
    this.startedAt = this.host.now();
    this.attempts = 0;
    this.throttles = 0;
    this.heldMs = 0;
    this.#heldCounted = 0;
    this.controller = new AbortController();
    // Our own timer rather than AbortSignal.timeout: that one stays armed for the whole budget after
    // the request is done, keeping the request's objects alive with it.
    this.#arm(this.host.settings.timeouts.totalMs);
    return this.controller.signal;
  }

  #arm(ms: number): void {
    this.#timer = setTimeout(onDeadline, Math.min(ms, MAX_TIMER_MS), this);
    this.#timer.unref?.();
  }

  /** Time held at the gate (a 429's pause, pacing) is not the request's: the deadline moves by as much. */
  onDeadline(): void {
    if (this.#done) return;
    if (this.holding) return this.#arm(HOLD_RECHECK_MS);
    const extra = this.heldMs - this.#heldCounted;
    this.#heldCounted = this.heldMs;
    if (extra > 0) return this.#arm(extra);
    this.controller?.abort(new DOMException('deadline', 'TimeoutError'));
    // At once, whatever undici does: it honours the signal only once the request has a connection,
    // and one queued behind a connection that never comes (a proxy that hangs up on every CONNECT,
    // which undici's pool then opens again at once, for ever) would outlast it.
    this.#fail(describeFailure(undefined, this.host.settings.peer, true));
  }

  onAnswerStart(err: Error | null, data: Dispatcher.ResponseData<Exchange>): void {
    // An answer that comes after the deadline is let go.
    if (this.#done) return void (data.body === undefined ? undefined : discardBody(data.body));
    if (err !== null) return this.#failWith(err);
    const { statusCode, headers, body } = data;
    if (statusCode >= 300 && statusCode < 400) {
      // A redirect would carry the body and the credentials to wherever it points: never followed.
      discardBody(body);
      return this.#fail({ failure: 'redirect', detail: this.#redirected(firstHeader(headers.location)) });
    }
    const refused = refusedEncoding(encodingOf(headers));
    if (refused !== undefined) {
      discardBody(body);
      return this.#fail({ failure: 'bad-response', detail: refused });
    }
    this.#status = statusCode;
    this.#headers = headers;
    readBody(body, headers, this.host.settings.maxResponseBytes, this);
  }

  onBody(text: string): void {
    if (this.#done) return;
    const answer: TransportAnswer = { status: this.#status, headers: this.#headers, text, sentAt: this.sentAt ?? this.startedAt, attempts: Math.max(1, this.attempts) };
    if (this.lastDecision !== undefined) answer.decision = this.lastDecision;
    const resolve = this.#resolve!;
    this.#finish();
    resolve(answer);
  }

  onBodyError(err: unknown): void {
    if (this.#done) return;
    if (err instanceof BodyTooLargeError) return this.#fail({ failure: 'too-large', detail: `${err.message}; refusing to read it` });
    if (err instanceof BodyNotUtf8Error) return this.#fail({ failure: 'bad-response', detail: `${err.message}; nothing is read from it` });
    // node:zlib's own codes: the bytes came, but they do not inflate (the connection is not to blame).
    const code = errorCodeOf(err);
    const encoding = encodingOf(this.#headers);
    if (encoding !== undefined && code?.startsWith('Z_') === true) {
      return this.#fail({ failure: 'bad-response', detail: `the answer's ${encoding} encoding is corrupt or cut short (${code}); nothing is read from it` }, err);
    }
    const failure = describeConnectionFailure(err, this.host.settings.peer);
    if (failure.failure === 'connection' && this.request.retry !== false && this.#resent < MAX_CUT_RESENDS) return this.#sendWhole();
    this.#fail(failure, err);
  }

  /**
   * Held (a 429's pause, a backoff, pacing, a connection slow to open) until what it was built from
   * is too old to send: why it may not go now, or undefined.
   */
  tooOld(): NotSentError | undefined {
    const notAfter = this.request.notAfter;
    if (notAfter === undefined || this.host.now() <= notAfter) return undefined;
    return new NotSentError({ why: 'what it was built from was read too long ago', readTooOld: true });
  }

  /**
   * The run was interrupted: a read is let go at once (nothing is built from it now), whether its
   * attempt is on the wire (said as let go unanswered) or waits to be sent (said as not sent).
   */
  letGo(why: string): void {
    if (this.#done || this.request.method !== 'GET') return;
    const onWire = this.attempts > 0 && !this.holding && this.backoff === undefined;
    const [reject, { operation, target }, controller] = [this.#reject!, this.request, this.controller];
    this.#finish();
    controller?.abort(new DOMException(why, 'AbortError'));
    reject(new NotSentError({ operation, target, why, letGo: onWire, redactor: this.host.settings.redactor }));
  }

  /** Cut off halfway: sent whole again, with a budget and a count of attempts of its own; the gate still holds each send. */
  #sendWhole(): void {
    this.#resent += 1;
    clearTimeout(this.#timer);
    this.host.end(this);
    this.host.start(this);
  }

  /** The request failed before any answer: stopped at the gate, or the network's failure. */
  #failWith(err: Error): void {
    const stop = stopOf(err);
    if (stop instanceof NotSentError) {
      const [reject, { operation, target }] = [this.#reject!, this.request];
      this.#finish();
      return reject(new NotSentError({ operation, target, why: stop.why, readTooOld: stop.readTooOld, redactor: this.host.settings.redactor }));
    }
    // The gate gave up (only 429s for too long, a pause announced beyond what orgform waits out).
    if (stop !== undefined) return this.#fail({ failure: 'rate-limited', detail: `${stop.message.charAt(0).toLowerCase()}${stop.message.slice(1).replace(/\.$/, '')}` });
    const { proxy, extraCaCerts } = this.host.settings;
    this.#fail(describeFailure(err, { ...this.host.settings.peer, url: this.request.url, ...(proxy === undefined ? {} : { proxy }), ...(extraCaCerts === undefined ? {} : { extraCaCerts }) }), err);
  }

  #redirected(location: string | undefined): string {
    const { peer, redactor } = this.host.settings;
    const to = location === undefined ? '' : ` to ${redactor.short(redactor.address(location), 100)}`;
    return `${peer.name} answered with a redirect${to}, which orgform never follows: check ${peer.address}`;
  }

  #fail(failure: { failure: TransportFailure; detail: string }, cause?: unknown): void {
    const { operation, target } = this.request;
    const error = new TransportError({ operation, ...(target === undefined ? {} : { target }), ...failure, attempts: Math.max(1, this.attempts), cause, redactor: this.host.settings.redactor });
    const reject = this.#reject!;
    this.#finish();
    reject(error);
  }

  /**
   * Ends it, and lets go of all it held. undici's objects may outlive the request a while (an
   * attempt's handler, the listeners on the answer's body) and hold the exchange: what it held
   * (the request, the answer's headers, the promise's resolvers, the deadline's signal) would be
   * kept with it, and the young-generation garbage collector would copy and promote it all.
   */
  #finish(): void {
    this.#done = true;
    clearTimeout(this.#timer);
    this.host.end(this);
    this.request = ENDED;
    this.#headers = NO_HEADERS;
    this.controller = undefined;
    this.#timer = undefined;
    this.#resolve = undefined;
    this.#reject = undefined;
  }
}

function onDeadline(exchange: Exchange): void {
  exchange.onDeadline();
}

/** Why the gate let the attempt through no more (it gave up, or was stopped), wherever it was wrapped. */
function stopOf(err: unknown): OrgformError | undefined {
  let e = err as { cause?: unknown } | undefined;
  for (let depth = 0; e && depth < 4; depth += 1) {
    if (e instanceof OrgformError) return e;
    e = e.cause as typeof e;
  }
  return undefined;
}
