/**
 * A clock for the rate limiter (LimiterClock) whose timers fire only when the test moves time on,
 * promises settling in between: Retry-After, quota resets, pacing and backoff in fake time.
 */
import type { LimiterClock } from '../../src/api/rate/rate-gate.js';

/** A clock whose timers fire only when the test moves time on; promises settle in between. */
export class FakeClock implements LimiterClock {
  constructor(public time = 0) {}
  /** Every delay a timer was asked for, as asked. */
  readonly delays: number[] = [];
  private timers: Array<{ at: number; fn: () => void; seq: number; dead?: boolean }> = [];
  private seq = 0;

  now = () => this.time;
  setTimeout = (fn: () => void, ms: number) => {
    this.delays.push(ms);
    const timer = { at: this.time + ms, fn, seq: this.seq++ };
    this.timers.push(timer);
    return timer;
  };
  clearTimeout = (handle: unknown) => {
    if (handle) (handle as { dead?: boolean }).dead = true;
  };

  /** Timers set and not yet run or cleared. */
  get pending(): number {
    return this.timers.filter((t) => !t.dead).length;
  }

  /** When the next pending timer is due (Infinity when none is). */
  get nextAt(): number {
    return Math.min(...this.timers.filter((t) => !t.dead).map((t) => t.at));
  }

  /** Runs every timer due up to `until`, settling promises after each. */
  async runUntil(until: number): Promise<void> {
    await settle();
    for (;;) {
      this.timers = this.timers.filter((t) => !t.dead).sort((a, b) => a.at - b.at || a.seq - b.seq);
      const next = this.timers[0];
      if (!next || next.at > until) break;
      this.timers.shift();
      this.time = Math.max(this.time, next.at);
      next.fn();
      await settle();
    }
    this.time = Math.max(this.time, until);
  }

  /** Runs timers until `done()` or no timer is left. */
  async runWhile(busy: () => boolean): Promise<void> {
    await settle();
    while (busy()) {
      this.timers = this.timers.filter((t) => !t.dead).sort((a, b) => a.at - b.at || a.seq - b.seq);
      const next = this.timers.shift();
      if (!next) throw new Error('nothing left to run, yet still busy');
      this.time = Math.max(this.time, next.at);
      next.fn();
      await settle();
    }
  }
}

async function settle(): Promise<void> {
  for (let i = 0; i < 4; i += 1) await new Promise((resolve) => setImmediate(resolve));
}
