/**
 * The attempts of one request, as undici's retry interceptor makes them: each told to the gate as it
 * is answered (and an informational 1xx taken for no answer at all), and after each failed one the
 * retry policy asked whether, and when, to send another.
 */
import type { Dispatcher } from 'undici';
import type { Headers } from './read-answer.js';
import { decideRetry, type RetryDecision, type RetryPolicy } from './retry-policy.js';

/**
 * The transport's gate, which every attempt passes (api/rate's RateGate): a turn at the shared rate
 * limit, what each attempt was answered, backoffs that end when the gate stops, and the count of
 * requests outstanding (its no-progress watchdog measures only while there are some).
 */
export interface RequestGate {
  /** undefined when the attempt may go at once; else its turn. Throws (or rejects) once the gate stopped, or `signal` (the attempt's) is aborted. */
  acquire(signal?: AbortSignal): Promise<void> | undefined;
  begin(): void;
  end(): void;
  /** An attempt goes out: the time its answer must quote. */
  recordSend(): number;
  /** What the attempt sent at `sentAt` was answered: its status and headers (Retry-After, rate-limit headers). */
  recordResponse(sentAt: number, status: number, headers: Headers): void;
  /** Waits before a retry; over early when the gate stops. */
  backoff(ms: number): Promise<void>;
  status(): { pausedMs: number };
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

/** What every attempt event says of its request. */
interface AttemptOf {
  /** What the caller calls the request (a change's address), when it named one. */
  label?: string;
  /** The request in words: `updateBillingDetails organisation "org_acme"`. */
  what: string;
  method: string;
  /** 1 for the first attempt. */
  attempt: number;
}

/**
 * An attempt of a request, first or retry, read or write: when it went on the wire, and when it
 * ended, answered whole (`status`) or failed (`status` if its answer had begun, else the failure's
 * `errorCode`). For a view that shows each request's attempts (the apply report's timeline); times
 * on the transport's clock.
 */
export type AttemptEvent = ({ type: 'attempt-sent'; at: number } | { type: 'attempt-ended'; at: number; sentAt: number; status?: number; errorCode?: string }) & AttemptOf;

/** What the attempts of one request share, kept by the transport's exchange. */
export interface AttemptRecord {
  readonly request: { readonly headers: Readonly<Record<string, string>>; readonly label?: string; readonly retry?: boolean };
  startedAt: number;
  attempts: number;
  /** 429 answers so far: backpressure, not attempts. */
  throttles: number;
  /** Time spent waiting at the gate, which no budget or deadline counts. */
  heldMs: number;
  /** The current attempt's answer has begun (its status and headers came). */
  answered: boolean;
  lastDecision: RetryDecision | undefined;
  /** While it backs off before a retry: until when, and what failed. */
  backoff: { until: number; after: string } | undefined;
  /** Why it may no longer be sent (what it was built from is too old), or undefined. */
  tooOld(): Error | undefined;
}

/** An attempt's record, as the attempt events describe it. */
export type AttemptSeen = AttemptRecord & { readonly request: { readonly what: string; readonly method: string } };

/** Tells a listener of each attempt as it goes and as it ends (AttemptEvent); made only for a listener. */
export class AttemptTeller {
  constructor(
    private readonly listener: (event: AttemptEvent) => void,
    private readonly now: () => number,
  ) {}

  sent(record: AttemptSeen, at: number): void {
    this.listener({ type: 'attempt-sent', at, ...this.of(record) });
  }

  ended(record: AttemptSeen, sentAt: number, status: number | undefined, err: Error | undefined): void {
    const code = (err as { code?: unknown } | undefined)?.code;
    const failure = status === undefined && typeof code === 'string' ? { errorCode: code } : {};
    this.listener({ type: 'attempt-ended', at: this.now(), sentAt, ...(status === undefined ? {} : { status }), ...failure, ...this.of(record) });
  }

  private of(record: AttemptSeen): AttemptOf {
    const { label, what, method } = record.request;
    return { ...(label === undefined ? {} : { label }), what, method, attempt: record.attempts };
  }
}

/** What deciding on a retry needs of the transport. */
export interface RetryContext {
  policy: RetryPolicy;
  gate: RequestGate | undefined;
  now(): number;
  random(): number;
  onRetry: ((event: RetryEvent) => void) | undefined;
}

/** An attempt that never reached the wire (the gate gave up on it, or was stopped) fails through the handler like a network error. */
export function failAttempt(handler: Dispatcher.DispatchHandler, err: Error): void {
  const h = handler as Dispatcher.DispatchHandler & { onError?: (e: Error) => void };
  if (h.onResponseError) h.onResponseError(null as never, err);
  else h.onError?.(err);
}

/** Passes everything through, marking the answer begun and telling the gate what it said; refuses an attempt too late to go. */
export class AnswerObserver implements Dispatcher.DispatchHandler {
  private status: number | undefined = undefined;

  constructor(
    private readonly inner: Dispatcher.DispatchHandler,
    private readonly record: AttemptSeen,
    private readonly gate: RequestGate | undefined,
    /** The gate's time of the send, which its answer quotes. */
    private readonly sentAt: number,
    /** When the attempt went (the transport's clock), for `onAttempt`. */
    private readonly sentOn: number,
    private readonly attempts: AttemptTeller | undefined,
  ) {}

  /**
   * The attempt's bytes are about to go out on its connection, which can take seconds to open after
   * the gate let it through: asked again whether it may still go (aborted here, undici writes
   * nothing of it).
   */
  onRequestStart(controller: Dispatcher.DispatchController, context: unknown): void {
    const refused = this.record.tooOld();
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
    this.record.answered = true;
    this.status = statusCode;
    this.gate?.recordResponse(this.sentAt, statusCode, headers);
    this.inner.onResponseStart?.(controller, statusCode, headers as never, statusMessage);
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.inner.onResponseData?.(controller, chunk);
  }

  onResponseEnd(controller: Dispatcher.DispatchController, trailers: Record<string, string | string[]>): void {
    this.attempts?.ended(this.record, this.sentOn, this.status, undefined);
    this.inner.onResponseEnd?.(controller, trailers as never);
  }

  onResponseError(controller: Dispatcher.DispatchController, err: Error): void {
    this.attempts?.ended(this.record, this.sentOn, this.status, err);
    this.inner.onResponseError?.(controller, err);
  }
}

type RetryCallback = (err?: Error | null) => void;
type FailedAttempt = Error & { statusCode?: number; code?: string; headers?: Headers };

/**
 * undici's retry interceptor asks after each failed attempt: `callback(null)` sends another once
 * the wait is over, `callback(err)` gives up. The policy decides (retry-policy.ts); a 429 waits at
 * the gate, which already paused everyone; a backoff waits at the gate too, so that it ends when
 * the gate stops (an interrupt) and the retry then fails there, unsent.
 */
export function retryAttempt(context: RetryContext, err: Error, attempt: { state: { counter: number }; opts: Dispatcher.DispatchOptions }, callback: RetryCallback): void {
  const record = (attempt.opts as { opaque?: unknown }).opaque as AttemptRecord;
  // Marked as sent once (a lock whose answer may be lost would look like someone else's on a second try).
  if (record.request.retry === false) return callback(err);
  const e = err as FailedAttempt;
  const status = typeof e.statusCode === 'number' ? e.statusCode : undefined;
  const decision = decideFor(context, record, e, attempt.state.counter, status);
  record.lastDecision = decision;
  // The connection broke after the answer began: undici's interceptor would ask again for the rest
  // by byte range (Range and If-Match, on a PUT too), which the service does not serve, and fail
  // anyway. The request fails here, naming the connection, and is sent whole again by the exchange.
  if ((status === undefined && record.answered) || !decision.retry) return callback(err);
  const event = { requestId: record.request.headers['x-request-id'] ?? '', ...(record.request.label === undefined ? {} : { label: record.request.label }), attempt: attempt.state.counter };
  if (decision.backpressure && context.gate !== undefined) {
    record.throttles += 1;
    context.onRetry?.({ ...event, delayMs: Math.max(decision.delayMs, context.gate.status().pausedMs), ...(status === undefined ? {} : { status }) });
    return callback(null);
  }
  // An answer's status says it all; undici's own code for it (UND_ERR_REQ_RETRY) would be noise.
  context.onRetry?.({ ...event, delayMs: decision.delayMs, ...(status === undefined ? (e.code === undefined ? {} : { errorCode: e.code }) : { status }) });
  record.backoff = { until: context.now() + decision.delayMs, after: status === undefined ? (e.code ?? 'a failed connection') : `HTTP ${status}` };
  void wait(context, decision.delayMs).then(() => {
    record.backoff = undefined;
    callback(null);
  });
}

function decideFor(context: RetryContext, record: AttemptRecord, e: FailedAttempt, counter: number, status: number | undefined): RetryDecision {
  const retryAfter = e.headers?.['retry-after'];
  const now = context.now();
  return decideRetry(context.policy, {
    attempt: counter - record.throttles,
    status,
    errorCode: status === undefined ? e.code : undefined,
    retryAfter: Array.isArray(retryAfter) ? retryAfter[0] : retryAfter,
    elapsedMs: now - record.startedAt - record.heldMs,
    nowMs: now,
    random: context.random(),
  });
}

/**
 * The gate's backoff, or without a gate a timer. Not unref'd: during the wait no socket may be open,
 * and this timer is then all that keeps the process alive (unref'd, Node exits with code 13 mid-request).
 */
function wait(context: RetryContext, ms: number): Promise<void> {
  if (context.gate !== undefined) return context.gate.backoff(ms);
  return new Promise((resolve) => setTimeout(resolve, ms));
}
