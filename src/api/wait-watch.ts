/**
 * Watches the client's requests for a wait: once none has ended for WAIT_NOTICE_MS while some are
 * outstanding, it asks what they wait for (`describe`: a pause, the pace, a backoff, an answer) and
 * tells it, once; and looks again every WAIT_NOTICE_MS while the wait lasts, telling it again only
 * when what it waits for changed (a 429's pause announced while an answer was awaited), and then
 * only once the wait has lasted twice as long as when it was last told: a storm of 429s, each a
 * short pause of its own, is a line at 2, 4, 8, 16 s… rather than one every 2 s. A request that
 * ends ends the wait. A pace already told is not told again until the rate changes: at a rate of
 * one request every few seconds, every request would otherwise be a wait of its own.
 */
import type { ExchangeView } from '../transport/transport.js';
import type { LimiterClock, RateStatus } from './rate/rate-gate.js';
import { WAIT_NOTICE_MS, type WaitEvent } from './wait-event.js';

/** The rate limiter's kind of clock; the real one's timers here never keep the process alive. */
export type WaitWatchClock = LimiterClock;

const REAL_CLOCK: WaitWatchClock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => {
    const timer = setTimeout(fn, ms);
    // The requests keep the process alive, not their watch.
    timer.unref();
    return timer;
  },
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

export class WaitWatch {
  private outstanding = 0;
  /** Since when no request has ended. */
  private quietSince = 0;
  private timer: unknown;
  /** What the wait under way was told as (cleared when a request ends). */
  private told: string | undefined;
  /** How long the wait under way had lasted when it was last told. */
  private toldAfter = 0;
  private pacingTold: number | undefined;

  constructor(
    private readonly describe: (now: number) => WaitEvent | undefined,
    private readonly onWait: (event: WaitEvent) => void,
    private readonly clock: WaitWatchClock = REAL_CLOCK,
  ) {}

  /** A request starts. */
  begin(): void {
    if (this.outstanding === 0) this.quietSince = this.clock.now();
    this.outstanding += 1;
    this.arm(this.quietSince + WAIT_NOTICE_MS);
  }

  /** A request ended: whatever the run waited for, it moves. */
  end(): void {
    this.outstanding = Math.max(0, this.outstanding - 1);
    this.quietSince = this.clock.now();
    this.told = undefined;
    this.disarm();
    if (this.outstanding > 0) this.arm(this.quietSince + WAIT_NOTICE_MS);
  }

  private arm(at: number): void {
    if (this.timer !== undefined) return;
    this.timer = this.clock.setTimeout(() => this.look(), Math.max(0, at - this.clock.now()));
  }

  private disarm(): void {
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }

  private look(): void {
    this.timer = undefined;
    if (this.outstanding === 0) return;
    const now = this.clock.now();
    // A timer may fire a few ms early (Node counts it from the loop's last reading of the clock,
    // which lags after synchronous work): look again when the wait is due, not 2 s later.
    if (now - this.quietSince < WAIT_NOTICE_MS) return this.arm(this.quietSince + WAIT_NOTICE_MS);
    this.tell(now);
    this.arm(now + WAIT_NOTICE_MS);
  }

  private tell(now: number): void {
    const wait = this.describe(now);
    if (wait === undefined) return;
    // A pause told again only when it is moved (another 429); anything else, when it waits for something else.
    const moved = wait.reason === 'rate-limit' || wait.reason === 'quota' ? ` ${Math.floor(wait.until / 1000)}` : '';
    const key = wait.reason === 'pacing' ? `pacing ${wait.rps}` : `${wait.reason} ${wait.what}${moved}`;
    if (key === this.told) return;
    if (wait.reason === 'pacing' && wait.rps === this.pacingTold) return;
    const lasted = now - this.quietSince;
    if (this.told !== undefined && lasted < 2 * this.toldAfter) return;
    this.told = key;
    this.toldAfter = lasted;
    if (wait.reason === 'pacing') this.pacingTold = wait.rps;
    this.onWait(wait);
  }
}

/** What describeWait needs: the requests of one transport, and its clock. */
export interface WaitingRequests {
  oldest(): ExchangeView | undefined;
  via(url: URL): string | undefined;
  now(): number;
}

/**
 * What the requests wait for now, told by the oldest of them: the rate limiter's pause (a 429's, or
 * an empty quota's) or its pace, a backoff before a retry, or else an answer that has not come (or
 * has begun and not ended); for a retry or an attempt held at the gate, once it has waited
 * WAIT_NOTICE_MS for it (on the transport's clock): one just sent, as a pause told before ends,
 * has not made anyone wait yet.
 */
export function describeWait(requests: WaitingRequests, gate: { status(): RateStatus }, at: number): WaitEvent | undefined {
  const oldest = requests.oldest();
  if (oldest === undefined) return undefined;
  const status = gate.status();
  const what = oldest.what;
  if (status.pausedMs > 0) return { reason: status.pausedBy === 'quota' ? 'quota' : 'rate-limit', what, until: at + status.pausedMs, waiting: status.waiting, at };
  if (oldest.holding && status.rps !== undefined) return { reason: 'pacing', what, until: at + (Math.max(1, status.waiting) * 1000) / status.rps, waiting: status.waiting, rps: status.rps, at };
  if (oldest.backoff !== undefined) return { reason: 'retry', what, until: oldest.backoff.until, after: oldest.backoff.after, at };
  // A retry, or an attempt held at the gate, waits for its answer only from its sending.
  const resent = oldest.attempts > 1 || oldest.heldMs > 0;
  if (resent && requests.now() - (oldest.sentAt ?? oldest.startedAt) < WAIT_NOTICE_MS) return undefined;
  const via = requests.via(oldest.url);
  return { reason: 'answer', what, until: oldest.startedAt + oldest.budgetMs + oldest.heldMs, ...(oldest.answered ? { begun: true } : {}), ...(via === undefined ? {} : { via }), at };
}
