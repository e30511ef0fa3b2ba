import { describe, expect, it } from 'vitest';
import { coarsenTimeline, RunTimelineRecorder } from '../../src/model/run-timeline.js';

const T0 = 1_000_000;

describe('RunTimelineRecorder', () => {
  it('counts each second’s requests, answers, 429s and failures, the most in flight and the latency', () => {
    const r = new RunTimelineRecorder(T0);
    r.requestSent(T0 + 10);
    r.requestSent(T0 + 20);
    r.requestSent(T0 + 30);
    r.requestEnded(T0 + 400, { status: 200, latencyMs: 390 });
    r.requestEnded(T0 + 1_100, { status: 429, latencyMs: 1_080 });
    r.requestEnded(T0 + 1_200, { latencyMs: 1_170 });
    const { buckets, bucketMs, startedAt } = r.timeline(T0 + 1_500);
    expect({ bucketMs, startedAt }).toEqual({ bucketMs: 1000, startedAt: T0 });
    expect(buckets).toEqual([
      { sent: 3, answered: 1, throttled: 0, failed: 0, maxInFlight: 3, latencySumMs: 390, latencyMaxMs: 390, rateLimit: null, pausedMs: 0 },
      { sent: 0, answered: 1, throttled: 1, failed: 1, maxInFlight: 2, latencySumMs: 1_080, latencyMaxMs: 1_080, rateLimit: null, pausedMs: 0 },
    ]);
  });

  it('keeps the seconds nothing happened in, with what was in flight and the rate held to', () => {
    const r = new RunTimelineRecorder(T0);
    r.rateChanged(T0, 5);
    r.requestSent(T0 + 1);
    r.paused(T0 + 500, T0 + 3_250);
    r.requestEnded(T0 + 4_000, { status: 200, latencyMs: 3_999 });
    r.rateChanged(T0 + 4_500, undefined);
    expect(r.timeline(T0 + 4_999).buckets.map((b) => [b.maxInFlight, b.rateLimit, b.pausedMs, b.answered])).toEqual([
      [1, 5, 500, 0],
      [1, 5, 1000, 0],
      [1, 5, 1000, 0],
      [1, 5, 250, 0],
      [1, null, 0, 1],
    ]);
  });

  it('gives a copy: what is recorded after does not change a timeline already taken', () => {
    const r = new RunTimelineRecorder(T0);
    r.requestSent(T0);
    const before = r.timeline(T0);
    r.requestSent(T0 + 1);
    expect(before.buckets[0]!.sent).toBe(1);
  });
});

describe('coarsenTimeline', () => {
  it('merges consecutive buckets: counts and pauses add up, in flight and slowest are the most, the rate is the lowest', () => {
    const r = new RunTimelineRecorder(T0);
    for (let s = 0; s < 10; s++) {
      r.rateChanged(T0 + s * 1000, s === 3 ? 2 : 10);
      r.requestSent(T0 + s * 1000);
      r.requestEnded(T0 + s * 1000 + 100, { status: s === 4 ? 429 : 200, latencyMs: 100 + s });
    }
    r.paused(T0 + 3_000, T0 + 3_600);
    const coarse = coarsenTimeline(r.timeline(T0 + 9_999), 4);
    expect(coarse.bucketMs).toBe(3000);
    expect(coarse.buckets.map((b) => [b.sent, b.throttled, b.rateLimit, b.pausedMs, b.latencyMaxMs])).toEqual([
      [3, 0, 10, 0, 102],
      [3, 1, 2, 600, 105],
      [3, 0, 10, 0, 108],
      [1, 0, 10, 0, 109],
    ]);
    expect(coarse.buckets.reduce((n, b) => n + b.sent, 0)).toBe(10);
  });

  it('leaves a timeline that fits as it is', () => {
    const t = new RunTimelineRecorder(T0).timeline(T0 + 2_500);
    expect(coarsenTimeline(t, 10)).toBe(t);
  });
});
