/**
 * The one gate every request attempt of a client passes (listing, reads, writes, slug checks; first
 * attempts and retries): a token bucket whose rate the adaptive controller sets, a pause that
 * holds everyone until a 429's Retry-After, and a watchdog that gives up when nothing but 429s
 * came back for too long. Waiters are served first come, first served.
 *
 * Why not p-queue or limiter: p-queue limits per fixed interval (a whole interval's allowance goes
 * out at once at each window start, a burst the service's own bucket answers with 429s) and its
 * interval cannot change while running; limiter's bucket has a fixed rate and no shared pause.
 * Both would need the same code around them as this does without them.
 */
import { OrgformError } from '../errors.js';
import { DEFAULT_RATE_SETTINGS, initialRateState, recordAnswer, recordSend, type RateChange, type RateLimitHint, type RateSettings, type RateState } from './rate-controller.js';

export interface LimiterClock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

const REAL_CLOCK: LimiterClock = {
  now: () => Date.now(),
  // Not unref'd: while requests wait here no socket may be open, and this timer is then all that
  // keeps the process alive.
  setTimeout: (fn, ms) => setTimeout(fn, ms),
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

function describeMs(ms: number): string {
  if (ms >= 60_000 && ms % 60_000 === 0) return `${ms / 60_000} minute${ms === 60_000 ? '' : 's'}`;
  return ms >= 1000 ? `${Math.round(ms / 100) / 10} s` : `${ms} ms`;
}

export interface RateLimiterOptions {
  settings?: Partial<RateSettings>;
  /** How long only 429s may come back, with requests outstanding, before the limiter gives up. */
  noProgressMs?: number;
  clock?: LimiterClock;
  onRate?: (event: RateEvent) => void;
  /** Told once, when the limiter gives up. */
  onStall?: (error: RateLimitStalledError) => void;
}

interface Waiter {
  resolve: () => void;
  reject: (err: Error) => void;
}

export class RateLimiter {
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
  private stalled: RateLimitStalledError | undefined;

  constructor(private readonly options: RateLimiterOptions = {}) {
    this.settings = { ...DEFAULT_RATE_SETTINGS, ...options.settings };
    this.noProgressMs = options.noProgressMs ?? DEFAULT_NO_PROGRESS_MS;
    this.clock = options.clock ?? REAL_CLOCK;
    const now = this.clock.now();
    this.state = initialRateState(this.settings, now);
    this.refilledAt = now;
    this.progressAt = now;
  }

  /** The error every attempt fails with once the limiter gave up. */
  get stall(): RateLimitStalledError | undefined {
    return this.stalled;
  }

  status(): RateStatus {
    const now = this.clock.now();
    return {
      rps: Number.isFinite(this.state.rps) ? this.state.rps : undefined,
      pausedMs: Math.max(0, this.state.pauseUntil - now),
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
   * rejects) with RateLimitStalledError once the limiter gave up.
   */
  acquire(): Promise<void> | undefined {
    if (this.stalled) throw this.stalled;
    const now = this.clock.now();
    if (this.checkStall(now)) throw this.stalled;
    if (this.head === this.queue.length && now >= this.state.pauseUntil && this.takeToken(now)) return undefined;
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ resolve, reject });
      this.schedule(now);
    });
  }

  /** Notes that an attempt was sent; returns the time, which its answer must quote. */
  recordSend(): number {
    const now = this.clock.now();
    this.state = recordSend(this.state, this.settings, now);
    return now;
  }

  recordAnswer(answer: { sentAt: number; status: number; retryAfterMs?: number; hint?: RateLimitHint }): void {
    const now = this.clock.now();
    const throttled = answer.status === 429;
    // A Retry-After beyond the watchdog is not waited for (that request fails at once), so it pauses no one.
    const retryAfterMs = answer.retryAfterMs !== undefined && answer.retryAfterMs <= this.noProgressMs ? answer.retryAfterMs : undefined;
    const wasInfinite = !Number.isFinite(this.state.rps);
    const { state, change } = recordAnswer(this.state, this.settings, {
      now,
      sentAt: answer.sentAt,
      throttled,
      ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
      ...(answer.hint === undefined ? {} : { hint: answer.hint }),
    });
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
    if (this.stalled) return true;
    if (this.active === 0 || !this.throttledSinceProgress || now - this.progressAt < this.noProgressMs) return false;
    this.stalled = new RateLimitStalledError(this.noProgressMs);
    const waiting = this.queue.slice(this.head);
    this.queue = [];
    this.head = 0;
    this.clearTimer();
    for (const w of waiting) w.reject(this.stalled);
    this.emit('stalled', now);
    this.options.onStall?.(this.stalled);
    return true;
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
    this.timer = this.clock.setTimeout(() => this.drain(), Math.max(0, Math.ceil(at - now)));
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
