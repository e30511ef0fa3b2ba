import { describe, expect, it } from 'vitest';
import type { RateStatus } from '../../../../src/api/rate/rate-gate.js';
import { TimelineFeed } from '../../../../src/commands/apply/views/timeline-feed.js';
import type { ApplyEvent } from '../../../../src/executor/events.js';

const T0 = 1_000_000;

/** A meter whose status the test sets as the client's would move. */
function meter(initial: Partial<RateStatus> = {}) {
  let status: RateStatus = { rps: undefined, pausedMs: 0, waiting: 0, throttled: 0, ...initial };
  return {
    gauge: { rateStatus: () => status },
    set(next: Partial<RateStatus>) {
      status = { ...status, ...next };
    },
  };
}

const start = (address: string, at: number): ApplyEvent => ({ type: 'change-start', address, organisation: address, kind: 'billing', at });
const end = (address: string, at: number, outcome: 'applied' | 'failed' | 'not-started' = 'applied', durationMs = 100): ApplyEvent => ({
  type: 'change-end',
  address,
  organisation: address,
  kind: 'billing',
  outcome,
  durationMs,
  at,
});

describe('the timeline of an apply, from the events its view is told', () => {
  it('has nothing to show before apply starts, and then counts changes from apply’s start', () => {
    const feed = new TimelineFeed(T0);
    feed.metered(meter().gauge);
    expect(feed.timeline(T0 + 5_000)).toBeUndefined();
    feed.event({ type: 'apply-start', total: 2, parallelism: 2, at: T0 + 2_000 });
    feed.event(start('a', T0 + 2_010));
    feed.event(start('b', T0 + 2_020));
    feed.event(end('a', T0 + 2_400, 'applied', 390));
    feed.event(end('b', T0 + 3_100, 'failed', 1_080));
    const timeline = feed.timeline(T0 + 3_500)!;
    expect([timeline.unit, timeline.startedAt]).toEqual(['change', T0 + 2_000]);
    expect(timeline.buckets.map((b) => [b.sent, b.answered, b.failed, b.maxInFlight, b.latencySumMs, b.latencyMaxMs])).toEqual([
      [2, 1, 0, 2, 390, 390],
      [0, 1, 1, 1, 1_080, 1_080],
    ]);
  });

  it('leaves out the changes that ended without starting (not started, skipped, done by the journal)', () => {
    const feed = new TimelineFeed(T0);
    feed.event({ type: 'apply-start', total: 3, parallelism: 1, at: T0 });
    feed.event(start('a', T0 + 10));
    feed.event(end('a', T0 + 20));
    feed.event(end('b', T0 + 30, 'not-started', 0));
    feed.event(end('c', T0 + 40, 'not-started', 0));
    expect(feed.timeline(T0 + 50)!.buckets).toMatchObject([{ sent: 1, answered: 1, latencySumMs: 100 }]);
  });

  it('counts the client’s 429 answers and follows its rate as changes start and end, a rate grown a little only once it shows', () => {
    const m = meter({ rps: 20, throttled: 3 });
    const feed = new TimelineFeed(T0);
    feed.metered(m.gauge);
    feed.event({ type: 'apply-start', total: 2, parallelism: 2, at: T0 });
    m.set({ throttled: 5, rps: 20.01 });
    feed.event(start('a', T0 + 100));
    m.set({ throttled: 6, rps: 14.5 });
    feed.event(start('b', T0 + 1_100));
    m.set({ rps: 16 });
    feed.event(end('a', T0 + 2_200));
    expect(feed.timeline(T0 + 2_500)!.buckets.map((b) => [b.throttled, b.rateLimit])).toEqual([
      [2, 20],
      [1, 14.5],
      [0, 16],
    ]);
  });

  it('counts the 429s when they came, at the client’s rate events and waits, though no change ends meanwhile', () => {
    const m = meter({ rps: 20 });
    const feed = new TimelineFeed(T0);
    feed.metered(m.gauge);
    feed.event({ type: 'apply-start', total: 1, parallelism: 1, at: T0 });
    feed.event(start('a', T0 + 10));
    m.set({ throttled: 4, rps: 10 });
    feed.event({ type: 'rate', reason: 'throttled', rps: 10, pausedMs: 1_000, waiting: 1, at: T0 + 1_200 });
    m.set({ throttled: 9 });
    feed.event({ type: 'wait', reason: 'rate-limit', what: 'the rate limit', until: T0 + 5_000, at: T0 + 3_300 } as ApplyEvent);
    feed.event(end('a', T0 + 4_500));
    expect(feed.timeline(T0 + 4_500)!.buckets.map((b) => b.throttled)).toEqual([0, 4, 0, 5, 0]);
  });

  it('takes the rate held to and every pause from the client’s rate events, a pause told again while it lasts counted once', () => {
    const feed = new TimelineFeed(T0);
    feed.event({ type: 'apply-start', total: 1, parallelism: 1, at: T0 });
    feed.event({ type: 'rate', reason: 'throttled', rps: 8, pausedMs: 1_500, waiting: 4, at: T0 + 500 });
    feed.event({ type: 'rate', reason: 'throttled', rps: 6, pausedMs: 1_500, waiting: 4, at: T0 + 1_000 });
    const buckets = feed.timeline(T0 + 2_999)!.buckets;
    expect(buckets.map((b) => [b.pausedMs, b.rateLimit])).toEqual([
      [500, 8],
      [1_000, 6],
      [500, 6],
    ]);
    expect(buckets.reduce((n, b) => n + b.pausedMs, 0)).toBe(2_000);
  });

  it('counts request attempts from the run’s start once the transport tells them, the plan’s reads included', () => {
    const feed = new TimelineFeed(T0);
    feed.event({ type: 'attempt-sent', at: T0 + 100 });
    feed.event({ type: 'attempt-ended', sentAt: T0 + 100, status: 200, at: T0 + 180 });
    feed.event({ type: 'apply-start', total: 1, parallelism: 1, at: T0 + 1_000 });
    feed.event(start('a', T0 + 1_010));
    feed.event({ type: 'attempt-sent', at: T0 + 1_020 });
    feed.event({ type: 'attempt-ended', sentAt: T0 + 1_020, status: 429, at: T0 + 1_050 });
    feed.event({ type: 'attempt-sent', at: T0 + 1_300 });
    feed.event({ type: 'attempt-ended', sentAt: T0 + 1_300, at: T0 + 1_400 });
    feed.event(end('a', T0 + 1_500));
    const timeline = feed.timeline(T0 + 1_600)!;
    expect([timeline.unit, timeline.startedAt]).toEqual(['request', T0]);
    expect(timeline.buckets.map((b) => [b.sent, b.answered, b.throttled, b.failed, b.latencySumMs])).toEqual([
      [1, 1, 0, 0, 80],
      [2, 1, 1, 1, 30],
    ]);
  });
});
