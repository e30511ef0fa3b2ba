/**
 * The one gate every request attempt of a client passes (listing, reads, writes, slug checks; first
 * attempts and retries): a token bucket whose rate the adaptive controller sets, a pause that
 * holds everyone until a 429's Retry-After or an empty quota's reset, and a watchdog that gives up
 * when nothing but 429s came back for too long. Waiters are served first come, first served.
 *
 * Every wait here ends: a pause the service announces (Retry-After, or a quota's reset in the
 * RateLimit or X-RateLimit-* headers) is waited out only up to `noProgressMs`; one further away
 * stops the limiter at once, saying when the quota resets. Once stopped (given up, interrupted,
 * halted), every waiting attempt, every backoff and every later attempt fails without being sent.
 *
 * Why not p-queue or limiter: p-queue limits per fixed interval (a whole interval's allowance goes
 * out at once at each window start, a burst the service's own bucket answers with 429s) and its
 * interval cannot change while running; limiter's bucket has a fixed rate and no shared pause.
 * Both would need the same code around them as this does without them.
 */
import { OrgformError } from '../../errors.js';
import type { Headers } from '../../transport/read-answer.js';
import { parseRetryAfter } from '../../transport/retry-policy.js';
import type { RequestGate } from '../../transport/transport.js';
import { MAX_TIMER_MS, timerDelay } from './timer-delay.js';
import { DEFAULT_RATE_SETTINGS, initialRateState, recordAnswer, recordSend, type RateChange, type RateLimitHint, type RateSettings, type RateState } from './adaptive-rate.js';
import { parseRateLimitHeaders } from './rate-limit-headers.js';

export interface LimiterClock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

const REAL_CLOCK: LimiterClock = {
  now: () => Date.now(),
  // Not unref'd: while requests wait here no socket may be open, and this timer is then all that
  // keeps the process alive.
  setTimeout: (fn, ms) => setTimeout(fn, timerDelay(ms)),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/** Ten minutes of nothing but 429s: the service is not going to let this run through. */
export const DEFAULT_NO_PROGRESS_MS = 10 * 60_000;
/** Float slack: a token 1e-15 short must not become a timer of 0 ms that finds it still short, forever. */
const TOKEN_EPSILON = 1e-9;
/** A bucket of 20 ms of requests: smooth pacing, yet more than one request per timer tick at high rates. */
const BURST_SECONDS = 0.02;

export interface RateEvent {
  reason: Exclude<RateChange, 'none'> | 'stalled';
  /** Requests per second allowed now; undefined while nothing limits the client. */
  rps: number | undefined;
  /** How long every request is held from now (Retry-After, an empty quota). */
  pausedMs: number;
  /** Attempts waiting for their turn. */
  waiting: number;
}

export interface RateStatus {
  rps: number | undefined;
  pausedMs: number;
  /** While paused: what paused it, a 429 (throttled) or a quota used up. */
  pausedBy?: 'throttled' | 'quota';
  waiting: number;
  /** 429 answers so far. */
  throttled: number;
}

/** No answer but 429 for `noProgressMs`: every waiting and later attempt fails with this. */
export class RateLimitStalledError extends OrgformError {
  constructor(readonly noProgressMs: number) {
    super(
      'RATE_LIMITED',
      `No request succeeded for ${describeMs(noProgressMs)}: the service kept answering 429 (too many requests). Run again later; what was done is recorded, and apply picks up from there.`,
    );
    this.name = 'RateLimitStalledError';
  }
}

/**
 * The service announced a pause (Retry-After on a 429, or an empty quota with its reset) longer
 * than orgform waits out: every waiting and later attempt fails with this, at once, rather than
 * sitting silently until then.
 */
export class RateLimitResetTooFarError extends OrgformError {
  constructor(
    /** Epoch milliseconds when the service said requests may go again. */
    readonly resetAt: number,
    readonly waitMs: number,
    readonly limitMs: number,
    how: 'retry-after' | 'quota',
  ) {
    // A Date holds ±8.64e15 ms: a reset announced beyond that (Retry-After: 99999999999999999999) has no date.
    const until = Math.abs(resetAt) <= 8.64e15 ? new Date(resetAt).toISOString().replace(/\.\d{3}Z$/, 'Z') : undefined;
    super(
      'RATE_LIMITED',
      `${how === 'quota' ? "The service's request quota is used up" : 'The service asked every request to wait (Retry-After)'}${until === undefined ? '' : ` until ${until}`}, in ${describeMs(waitMs)}: longer than the ${describeMs(limitMs)} orgform waits out a rate limit (ORGFORM_NO_PROGRESS_TIMEOUT_MS). Run again ${until === undefined ? 'much later' : `after ${until}`}; what was done is recorded, and apply picks up from there.`,
    );
    this.name = 'RateLimitResetTooFarError';
  }
}

/** 1.5 s, 10 minutes, 2.5 hours, 3 days. */
function describeMs(ms: number): string {
  const unit = (n: number, name: string) => {
    const rounded = Math.round(n * 10) / 10;
    return `${rounded} ${name}${rounded === 1 ? '' : 's'}`;
  };
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${Math.round(ms / 100) / 10} s`;
  if (ms < 2 * 3_600_000) return unit(ms / 60_000, 'minute');
  if (ms < 2 * 86_400_000) return unit(ms / 3_600_000, 'hour');
  return unit(ms / 86_400_000, 'day');
}

export interface RateGateOptions {
  settings?: Partial<RateSettings>;
  /**
   * How long only 429s may come back, with requests outstanding, before the limiter gives up; also
   * the longest pause the service may announce (Retry-After, a quota's reset) that is waited out.
   */
  noProgressMs?: number;
  clock?: LimiterClock;
  onRate?: (event: RateEvent) => void;
  /** Told once, when the limiter gives up by itself (only 429s, a pause announced too far ahead). */
  onStall?: (error: OrgformError) => void;
}

interface Waiter {
  resolve: () => void;
  reject: (err: Error) => void;
}

/** The transport's gate (RequestGate) for a client's requests. */
export class RateGate implements RequestGate {
  readonly settings: RateSettings;
  readonly noProgressMs: number;
  private readonly clock: LimiterClock;
  private state: RateState;
  private queue: Waiter[] = [];
  private head = 0;
  private tokens = 1;
  private refilledAt: number;
  private timer: unknown;
  private timerAt = Infinity;
  private active = 0;
  private progressAt: number;
  private throttledSinceProgress = false;
  private throttles = 0;
  private stopped: OrgformError | undefined;
  private pausedBy: RateStatus['pausedBy'];
  /** Backoffs (before retrying a 5xx or a dropped connection) not yet over: they end early when the limiter stops. */
  private backoffs = new Set<{ handle: unknown; done: () => void }>();

  constructor(private readonly options: RateGateOptions = {}) {
    this.settings = { ...DEFAULT_RATE_SETTINGS, ...options.settings };
    this.noProgressMs = Math.min(options.noProgressMs ?? DEFAULT_NO_PROGRESS_MS, MAX_TIMER_MS);
    this.clock = options.clock ?? REAL_CLOCK;
    const now = this.clock.now();
    this.state = initialRateState(this.settings, now);
    this.refilledAt = now;
    this.progressAt = now;
  }

  /** The error every attempt fails with once the limiter stopped (gave up, or was stopped). */
  get stoppedBy(): OrgformError | undefined {
    return this.stopped;
  }

  /**
   * Lets nothing more through: every waiting attempt fails with `error` at once, every backoff ends
   * (its retry then fails here), and so does every later attempt. The first stop wins. Not told to
   * onStall: whoever stops the limiter knows why.
   */
  stop(error: OrgformError): void {
    if (this.stopped) return;
    this.stopped = error;
    const waiting = this.queue.slice(this.head);
    this.queue = [];
    this.head = 0;
    this.clearTimer();
    for (const w of waiting) w.reject(error);
    const backoffs = [...this.backoffs];
    this.backoffs.clear();
    for (const b of backoffs) {
      this.clock.clearTimeout(b.handle);
      b.done();
    }
  }

  /**
   * Waits `ms` before a retry (a backoff, not a turn): over early, resolved, once the limiter stops,
   * so that the retry it was holding fails at the gate, unsent, instead of waiting on.
   */
  backoff(ms: number): Promise<void> {
    if (this.stopped) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const entry = { handle: undefined as unknown, done: resolve };
      entry.handle = this.clock.setTimeout(() => {
        this.backoffs.delete(entry);
        resolve();
      }, timerDelay(ms));
      this.backoffs.add(entry);
    });
  }

  status(): RateStatus {
    const now = this.clock.now();
    const pausedMs = Math.max(0, this.state.pauseUntil - now);
    return {
      rps: Number.isFinite(this.state.rps) ? this.state.rps : undefined,
      pausedMs,
      ...(pausedMs > 0 && this.pausedBy !== undefined ? { pausedBy: this.pausedBy } : {}),
      waiting: this.queue.length - this.head,
      throttled: this.throttles,
    };
  }

  /** A logical request starts (its attempts and waits are outstanding until end()). */
  begin(): void {
    // The watchdog measures only time with something outstanding: an idle client (a prompt, a
    // pause between plan and apply) has not been refused anything.
    if (this.active === 0) this.resetProgress(this.clock.now());
    this.active += 1;
  }

  end(): void {
    this.active = Math.max(0, this.active - 1);
  }

  /**
   * Waits for this attempt's turn: undefined when it may go at once, else a promise. Throws (or
   * rejects) with RateLimitStalledError once the limiter gave up. `signal`: the attempt's, aborted
   * when its request is let go; it then leaves the queue (rejected with the signal's reason), and
   * its turn goes to the one behind it rather than to a request that is not sent.
   */
  acquire(signal?: AbortSignal): Promise<void> | undefined {
    if (this.stopped) throw this.stopped;
    if (signal?.aborted === true) throw signal.reason;
    const now = this.clock.now();
    if (this.checkStall(now)) throw this.stopped;
    if (this.head === this.queue.length && now >= this.state.pauseUntil && this.takeToken(now)) return undefined;
    return new Promise<void>((resolve, reject) => {
      if (signal === undefined) {
        this.queue.push({ resolve, reject });
        return this.schedule(now);
      }
      // Removed once the turn comes: a request held at each of its attempts would add one a time.
      const onAbort = () => this.leave(waiter, signal.reason as Error);
      const waiter: Waiter = { resolve: () => (signal.removeEventListener('abort', onAbort), resolve()), reject };
      this.queue.push(waiter);
      this.schedule(now);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** A waiter let go before its turn came: out of the queue, rejected. */
  private leave(waiter: Waiter, reason: Error): void {
    const at = this.queue.indexOf(waiter, this.head);
    if (at < 0) return;
    this.queue.splice(at, 1);
    waiter.reject(reason);
  }

  /** Notes that an attempt was sent; returns the time, which its answer must quote. */
  recordSend(): number {
    const now = this.clock.now();
    this.state = recordSend(this.state, this.settings, now);
    return now;
  }

  /** What an attempt sent at `sentAt` was answered: a 429's Retry-After and the rate-limit headers of any answer. */
  recordResponse(sentAt: number, status: number, headers: Headers): void {
    const get = (name: string) => {
      const v = headers[name];
      return Array.isArray(v) ? v.join(', ') : v;
    };
    const at = this.clock.now();
    const retryAfterMs = status === 429 ? parseRetryAfter(get('retry-after'), at) : undefined;
    const hint = parseRateLimitHeaders(get, at);
    this.recordAnswer({ sentAt, status, ...(retryAfterMs === undefined ? {} : { retryAfterMs }), ...(hint === undefined ? {} : { hint }) });
  }

  recordAnswer(answer: { sentAt: number; status: number; retryAfterMs?: number; hint?: RateLimitHint }): void {
    if (this.stopped) return;
    const now = this.clock.now();
    const throttled = answer.status === 429;
    // The pause the service announced: a 429's Retry-After, else an empty quota's reset (which also
    // holds a 429 that gave no Retry-After, rather than letting it be retried at once).
    const hint = answer.hint;
    const quotaResetMs = hint?.remaining !== undefined && hint.remaining <= 0 ? hint.resetMs : undefined;
    const announcedMs = throttled ? (answer.retryAfterMs ?? quotaResetMs) : quotaResetMs !== undefined && quotaResetMs >= this.settings.minQuotaPauseMs ? quotaResetMs : undefined;
    if (announcedMs !== undefined && announcedMs > this.noProgressMs) {
      // Further away than orgform waits: stop now and say until when, rather than wait in silence.
      const how = throttled && answer.retryAfterMs !== undefined ? 'retry-after' : 'quota';
      this.giveUp(new RateLimitResetTooFarError(now + announcedMs, announcedMs, this.noProgressMs, how));
      return;
    }
    const retryAfterMs = throttled ? announcedMs : undefined;
    const wasInfinite = !Number.isFinite(this.state.rps);
    const { state, change } = recordAnswer(this.state, this.settings, {
      now,
      sentAt: answer.sentAt,
      throttled,
      ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
      ...(hint === undefined ? {} : { hint }),
    });
    if (state.pauseUntil > this.state.pauseUntil) this.pausedBy = throttled ? 'throttled' : 'quota';
    this.state = state;
    if (wasInfinite && Number.isFinite(state.rps)) {
      // From no limit to a rate: start from one token, not a bucket banked while unlimited.
      this.tokens = 1;
      this.refilledAt = now;
    }
    if (throttled) {
      this.throttles += 1;
      this.throttledSinceProgress = true;
    } else {
      this.resetProgress(now);
    }
    if (change !== 'none') this.emit(change, now);
    if (throttled && this.checkStall(now)) return;
    if (this.head < this.queue.length) this.schedule(now, true);
  }

  private resetProgress(now: number): void {
    this.progressAt = now;
    this.throttledSinceProgress = false;
  }

  private emit(reason: RateEvent['reason'], now: number): void {
    this.options.onRate?.({
      reason,
      rps: Number.isFinite(this.state.rps) ? this.state.rps : undefined,
      pausedMs: Math.max(0, this.state.pauseUntil - now),
      waiting: this.queue.length - this.head,
    });
  }

  /** True (and everyone waiting rejected) when only 429s came back for noProgressMs. */
  private checkStall(now: number): boolean {
    if (this.stopped) return true;
    if (this.active === 0 || !this.throttledSinceProgress || now - this.progressAt < this.noProgressMs) return false;
    this.giveUp(new RateLimitStalledError(this.noProgressMs), () => this.emit('stalled', now));
    return true;
  }

  /** Stops by itself, and says so once (after the rate event, if any). */
  private giveUp(error: OrgformError, emit?: () => void): void {
    this.stop(error);
    emit?.();
    this.options.onStall?.(error);
  }

  private capacity(): number {
    // Plus 2 ms of slack: timers wake on whole milliseconds, late, and the fraction a late wake
    // accrued must carry over rather than be clipped (at 49 rps that was 2 % of the rate).
    return Math.max(1, this.state.rps * BURST_SECONDS) + this.state.rps * 0.002;
  }

  private refill(now: number): void {
    const rps = this.state.rps;
    if (!Number.isFinite(rps) || now <= this.refilledAt) return;
    // Nothing accrues during a pause: the service's bucket is what refills then, not ours.
    const from = Math.max(this.refilledAt, Math.min(now, this.state.pauseUntil));
    this.tokens = Math.min(this.capacity(), this.tokens + (Math.max(0, now - from) * rps) / 1000);
    this.refilledAt = now;
  }

  private takeToken(now: number): boolean {
    if (!Number.isFinite(this.state.rps)) return true;
    this.refill(now);
    if (this.tokens >= 1 - TOKEN_EPSILON) {
      this.tokens = Math.max(0, this.tokens - 1);
      return true;
    }
    return false;
  }

  /** When the next waiter may go: after the pause, once a token has accrued; bounded by the watchdog. */
  private nextWake(now: number): number {
    let at = Math.max(now, this.state.pauseUntil);
    const rps = this.state.rps;
    this.refill(now);
    // At least a millisecond ahead when a token is missing: at epoch milliseconds a smaller step is lost to rounding.
    if (Number.isFinite(rps) && this.tokens < 1 - TOKEN_EPSILON) at = Math.max(at, now + Math.max(1, ((1 - this.tokens) * 1000) / rps));
    if (this.throttledSinceProgress && this.active > 0) at = Math.min(at, Math.max(now, this.progressAt + this.noProgressMs));
    return at;
  }

  private schedule(now: number, force = false): void {
    const at = this.nextWake(now);
    if (!force && this.timer !== undefined && this.timerAt <= at) return;
    if (this.timer !== undefined && this.timerAt === at) return;
    this.clearTimer();
    this.timerAt = at;
    // Clamped (a pause cannot be that long, but a timer beyond 2^31 ms would fire at once, in a
    // loop): an early wake finds the waiters still held and sleeps again.
    this.timer = this.clock.setTimeout(() => this.drain(), timerDelay(at - now));
  }

  private clearTimer(): void {
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
    this.timerAt = Infinity;
  }

  private drain(): void {
    this.timer = undefined;
    this.timerAt = Infinity;
    const now = this.clock.now();
    if (this.checkStall(now)) return;
    if (now >= this.state.pauseUntil) {
      while (this.head < this.queue.length && this.takeToken(now)) {
        const waiter = this.queue[this.head]!;
        this.head += 1;
        waiter.resolve();
      }
    }
    if (this.head === this.queue.length) {
      this.queue = [];
      this.head = 0;
      return;
    }
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
    this.schedule(now);
  }
}
