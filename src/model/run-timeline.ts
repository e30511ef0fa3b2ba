/**
 * A run's requests over time, as the client saw them, second by second: what was sent and answered,
 * the 429s, what was in flight, how long answers took, the rate orgform held itself to and how long
 * every request was held back. What the apply report's chart and the job summary's draw
 * (text/plan/render-run-chart-*.ts). Pure: the recorder is told the time of each thing; it reads
 * no clock.
 *
 * A timeline counts request attempts (its `unit` is `request`) where the transport tells each one;
 * where it does not, it counts changes (`change`): `sent` is then the changes started, `answered`
 * the changes ended, `failed` the changes that failed, in flight and latency those of changes,
 * while the 429 answers, the rate held to and the time held back stay the client's, of every request.
 */

/** One bucket (a second, unless coarsened) of a run. */
export interface TimelineBucket {
  /** Requests sent, every attempt counted (retries included). */
  sent: number;
  /** Answers received, 429s included. */
  answered: number;
  /** Answers 429 (too many requests). */
  throttled: number;
  /** Attempts that ended without an answer, or with a 5xx. */
  failed: number;
  /** The most requests in flight at once during the bucket. */
  maxInFlight: number;
  /** The answers' latency in milliseconds: their sum (for the mean) and the slowest. */
  latencySumMs: number;
  latencyMaxMs: number;
  /** The rate orgform held itself to (requests a second) at the end of the bucket; null while nothing limited it. */
  rateLimit: number | null;
  /** How long within the bucket every request was held back (a 429's pause, the quota), in milliseconds. */
  pausedMs: number;
}

/** What a timeline's counts count (see the head of this file). */
export type TimelineUnit = 'request' | 'change';

export interface RunTimeline {
  /** When the first bucket starts (epoch milliseconds). */
  startedAt: number;
  unit: TimelineUnit;
  /** Each bucket's length in milliseconds: 1000 as recorded. */
  bucketMs: number;
  buckets: TimelineBucket[];
}

function emptyBucket(inFlight: number, rateLimit: number | null): TimelineBucket {
  return { sent: 0, answered: 0, throttled: 0, failed: 0, maxInFlight: inFlight, latencySumMs: 0, latencyMaxMs: 0, rateLimit, pausedMs: 0 };
}

/**
 * Builds a RunTimeline from what the client tells it, in any order within a bucket. A bucket that
 * nothing happened in still counts (requests in flight, the rate held to): a run that waited shows
 * as a gap in what was sent, not as a shorter run.
 */
export class RunTimelineRecorder {
  private readonly buckets: TimelineBucket[] = [];
  private inFlight = 0;
  private rateLimit: number | null = null;

  constructor(
    private readonly startedAt: number,
    private readonly unit: TimelineUnit = 'request',
    private readonly bucketMs = 1000,
  ) {}

  /** A request attempt was sent (or, counting changes, a change started). */
  requestSent(at: number): void {
    const bucket = this.at(at);
    this.inFlight += 1;
    bucket.sent += 1;
    bucket.maxInFlight = Math.max(bucket.maxInFlight, this.inFlight);
  }

  /** An attempt ended: with its answer's status, or without one (`status` undefined: a network failure). */
  requestEnded(at: number, answer: { status?: number; latencyMs: number }): void {
    const failed = answer.status === undefined || answer.status >= 500;
    this.ended(at, { answered: answer.status !== undefined, failed, throttled: answer.status === 429, latencyMs: answer.latencyMs });
  }

  /** A change started (a timeline of changes). */
  changeStarted(at: number): void {
    this.requestSent(at);
  }

  /** A change ended, after `durationMs`, failed or not (a timeline of changes). */
  changeEnded(at: number, change: { failed: boolean; durationMs: number }): void {
    this.ended(at, { answered: true, failed: change.failed, throttled: false, latencyMs: change.durationMs });
  }

  /** `count` answers were 429, as the client counted them (a timeline of changes: its own ends are not answers). */
  throttledAnswers(at: number, count: number): void {
    if (count > 0) this.at(at).throttled += count;
  }

  /** The rate orgform holds itself to from now on; undefined when nothing limits it. */
  rateChanged(at: number, rps: number | undefined): void {
    this.rateLimit = rps ?? null;
    this.at(at).rateLimit = this.rateLimit;
  }

  /** Every request was held back from `from` to `until` (spread over the buckets it spans). */
  paused(from: number, until: number): void {
    for (let t = from; t < until; ) {
      const end = Math.min(until, this.startedAt + (this.index(t) + 1) * this.bucketMs);
      this.at(t).pausedMs += end - t;
      t = end;
    }
  }

  /** The timeline so far, up to `at` (the buckets that nothing happened in included). */
  timeline(at: number): RunTimeline {
    this.at(at);
    return { startedAt: this.startedAt, unit: this.unit, bucketMs: this.bucketMs, buckets: this.buckets.map((b) => ({ ...b })) };
  }

  private ended(at: number, end: { answered: boolean; failed: boolean; throttled: boolean; latencyMs: number }): void {
    // The bucket first: one that starts now starts with this one still in flight.
    const bucket = this.at(at);
    this.inFlight = Math.max(0, this.inFlight - 1);
    if (end.failed) bucket.failed += 1;
    if (!end.answered) return;
    bucket.answered += 1;
    if (end.throttled) bucket.throttled += 1;
    bucket.latencySumMs += end.latencyMs;
    bucket.latencyMaxMs = Math.max(bucket.latencyMaxMs, end.latencyMs);
  }

  private index(at: number): number {
    return Math.max(0, Math.floor((at - this.startedAt) / this.bucketMs));
  }

  /** The bucket of time `at`, made (with those before it) as it is first needed. */
  private at(at: number): TimelineBucket {
    const index = this.index(at);
    while (this.buckets.length <= index) this.buckets.push(emptyBucket(this.inFlight, this.rateLimit));
    return this.buckets[index]!;
  }
}

/**
 * The timeline in at most `maxBuckets` buckets, each the merge of as many consecutive ones as it
 * takes (a chart of a five-hour run has no room for 18,000 bars): counts and pauses add up, the
 * most in flight and the slowest answer are the most of them, and the rate held to is the lowest
 * (the wait is what a reader looks for).
 */
export function coarsenTimeline(timeline: RunTimeline, maxBuckets: number): RunTimeline {
  const per = Math.max(1, Math.ceil(timeline.buckets.length / Math.max(1, maxBuckets)));
  if (per === 1) return timeline;
  const buckets: TimelineBucket[] = [];
  for (let i = 0; i < timeline.buckets.length; i += per) buckets.push(timeline.buckets.slice(i, i + per).reduce(mergeBuckets));
  return { startedAt: timeline.startedAt, unit: timeline.unit, bucketMs: timeline.bucketMs * per, buckets };
}

function mergeBuckets(a: TimelineBucket, b: TimelineBucket): TimelineBucket {
  const limits = [a.rateLimit, b.rateLimit].filter((r): r is number => r !== null);
  return {
    sent: a.sent + b.sent,
    answered: a.answered + b.answered,
    throttled: a.throttled + b.throttled,
    failed: a.failed + b.failed,
    maxInFlight: Math.max(a.maxInFlight, b.maxInFlight),
    latencySumMs: a.latencySumMs + b.latencySumMs,
    latencyMaxMs: Math.max(a.latencyMaxMs, b.latencyMaxMs),
    rateLimit: limits.length === 0 ? null : Math.min(...limits),
    pausedMs: a.pausedMs + b.pausedMs,
  };
}
