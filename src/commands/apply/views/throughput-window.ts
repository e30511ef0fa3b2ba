/**
 * Changes completed per second over a sliding window (default the last 30 s), for the progress
 * line's rate and ETA. A window rather than the average since the start: after a pause for a 429's
 * Retry-After, or once a rate limiter has settled, the ETA should follow the rate as it is now.
 * Keeps one sample per twentieth of the window, so memory does not grow with the number of changes.
 */
interface Sample {
  at: number;
  count: number;
}

export class ThroughputWindow {
  private readonly samples: Sample[];
  private readonly resolutionMs: number;

  /** `start`: when counting began (the count was 0 then). */
  constructor(
    start: number,
    private readonly windowMs = 30_000,
  ) {
    this.samples = [{ at: start, count: 0 }];
    this.resolutionMs = windowMs / 20;
  }

  /** The running count at `at` (times never go backwards). */
  record(at: number, count: number): void {
    const last = this.samples[this.samples.length - 1];
    if (last !== undefined && at - last.at < this.resolutionMs) return;
    this.samples.push({ at, count });
    this.trim(at);
  }

  /** Per second, over the window that ends at `now` with the count at `count`; undefined when no time has passed. */
  rate(now: number, count: number): number | undefined {
    this.trim(now);
    const oldest = this.samples[0];
    if (oldest === undefined || now <= oldest.at) return undefined;
    return ((count - oldest.count) * 1000) / (now - oldest.at);
  }

  /** Keeps one sample at or before the window's start, so that the window is always full once it can be. */
  private trim(now: number): void {
    while (this.samples.length > 1 && (this.samples[1]?.at ?? Infinity) <= now - this.windowMs) this.samples.shift();
  }
}
