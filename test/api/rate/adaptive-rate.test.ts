import { describe, expect, it } from 'vitest';
import {
  cubicRate,
  DEFAULT_RATE_SETTINGS,
  initialRateState,
  recordAnswer,
  recordSend,
  type AnswerFacts,
  type RateSettings,
  type RateState,
} from '../../../src/api/rate/adaptive-rate.js';

const S: RateSettings = DEFAULT_RATE_SETTINGS;

/** Sends `n` requests evenly over [from, to) and has each admitted `latency` ms later. */
function steady(state: RateState, from: number, to: number, rps: number, settings = S, latency = 10): RateState {
  let s = state;
  for (let t = from; t < to; t += 1000 / rps) {
    s = recordSend(s, settings, t);
    s = recordAnswer(s, settings, { now: t + latency, sentAt: t, throttled: false }).state;
  }
  return s;
}

/** A client that sends as fast as it is allowed, each request admitted `latency` ms later. */
function saturated(state: RateState, from: number, to: number, settings = S, latency = 10): RateState {
  let s = state;
  for (let t = from; t < to; t += 1000 / s.rps) {
    s = recordSend(s, settings, t);
    s = recordAnswer(s, settings, { now: t + latency, sentAt: t, throttled: false }).state;
  }
  return s;
}

const answer = (state: RateState, facts: AnswerFacts, settings = S) => recordAnswer(state, settings, facts);

describe('the adaptive rate controller', () => {
  it('limits nothing until a throttle or a header, unless --max-rps caps it from the start', () => {
    const free = steady(initialRateState(S, 0), 0, 2000, 200);
    expect(free.rps).toBe(Infinity);
    const capped = initialRateState({ ...S, maxRps: 25 }, 0);
    expect(capped.rps).toBe(25);
    expect(steady(capped, 0, 2000, 20, { ...S, maxRps: 25 }).rps).toBe(25);
  });

  it('pauses everyone until Retry-After on a 429, and a burst it could not measure starts slow and doubles every second', () => {
    let s = initialRateState(S, 0);
    for (let i = 0; i < 32; i += 1) s = recordSend(s, S, 0);
    const { state, change } = answer(s, { now: 20, sentAt: 0, throttled: true, retryAfterMs: 1000 });
    expect(change).toBe('throttled');
    expect(state.pauseUntil).toBe(1020);
    // 32 sent at once, nothing measured yet: 0.7 × 32.
    expect(state.rps).toBeCloseTo(22.4, 5);
    const later = saturated(state, 1020, 3020);
    // Two seconds after the pause, sending all it may: doubled twice.
    expect(later.rps).toBeGreaterThan(22.4 * 3.5);
    expect(later.rps).toBeLessThanOrEqual(22.4 * 4);
  });

  it('starts a slow start at 5 a second at least, whatever little was sent', () => {
    let s = recordSend(initialRateState(S, 0), S, 0);
    s = answer(s, { now: 5, sentAt: 0, throttled: true }).state;
    expect(s.rps).toBe(5);
  });

  it('takes the 429s of requests sent before the cut as the same event: one cut, the pause extended', () => {
    let s = initialRateState(S, 0);
    for (let i = 0; i < 8; i += 1) s = recordSend(s, S, 0);
    s = answer(s, { now: 10, sentAt: 0, throttled: true, retryAfterMs: 1000 }).state;
    const first = s.rps;
    const again = answer(s, { now: 15, sentAt: 0, throttled: true, retryAfterMs: 2000 });
    expect(again.change).toBe('none');
    expect(again.state.rps).toBe(first);
    expect(again.state.pauseUntil).toBe(2015);
  });

  it('cuts a paced rate to 0.7 × the rate it was throttled at, then climbs back to 0.95 × that and probes above it slowly', () => {
    let s = initialRateState({ ...S, maxRps: 60 }, 0);
    const settings = { ...S, maxRps: 60 };
    s = steady(s, 0, 5000, 60, settings);
    const cut = answer(s, { now: 5000, sentAt: 4990, throttled: true, retryAfterMs: 1000 }, settings);
    expect(cut.change).toBe('throttled');
    expect(cut.state.wMax).toBeCloseTo(60, 0);
    expect(cut.state.rps).toBeCloseTo(0.7 * cut.state.wMax, 5);
    const k = cut.state.k;
    // Back at the plateau K seconds after the pause…
    const back = steady(cut.state, 6000, 6000 + k * 1000 + 50, 50, settings);
    expect(back.rps).toBeCloseTo(0.95 * cut.state.wMax, 0);
    // …5 s later still within 2 % of it: the probe above is gentle at first…
    const probing = steady(back, 6000 + k * 1000 + 50, 6000 + k * 1000 + 5_050, 57, settings);
    expect(probing.rps).toBeGreaterThan(back.rps);
    expect(probing.rps).toBeLessThan(back.rps * 1.02);
    // …and 15 s above it, 20 % higher: a share other clients gave up is taken back within seconds.
    expect(cubicRate(cut.state, settings, 6000 + k * 1000 + 15_000)).toBeGreaterThan(back.rps * 1.2);
  });

  it('takes a throttle soon after the last one for contention with other clients, and does not slow the next probe for it', () => {
    const settings = { ...S, maxRps: 60 };
    let s = steady(initialRateState(settings, 0), 0, 5000, 60, settings);
    s = answer(s, { now: 5000, sentAt: 4990, throttled: true, retryAfterMs: 1000 }, settings).state;
    // Met again at the same level, 4 s later: shards sharing the limit, each probing.
    s = steady(s, 6000, 9_000, 57, settings);
    s = answer(s, { now: 9_000, sentAt: 8_990, throttled: true, retryAfterMs: 1000 }, settings).state;
    expect(s.probeSlowdown).toBe(S.probeSlowdown);
  });

  it('gives up share when throttled well below the last limit: aims at (1 + β) / 2 of the rate met, not at all of it', () => {
    const settings = { ...S, maxRps: 60 };
    let s = steady(initialRateState(settings, 0), 0, 5000, 60, settings);
    s = answer(s, { now: 5000, sentAt: 4990, throttled: true, retryAfterMs: 1000 }, settings).state;
    const first = s.wMax;
    // Another client came: met again 0.8 s after the pause, sending all it was allowed, while
    // still climbing back (about 0.7 × 60).
    s = saturated(s, 6000, 6_800, settings);
    const cut = answer(s, { now: 6_800, sentAt: 6_790, throttled: true, retryAfterMs: 1000 }, settings).state;
    // The cut is the usual one, β × the rate it was met at; that rate is well below the last.
    const metAt = cut.rps / S.beta;
    expect(metAt).toBeLessThan(first * 0.9);
    // The plateau aims below it: at (1 + β) / 2 × that rate, not all of it.
    expect(cut.wMax).toBeCloseTo(((1 + S.beta) / 2) * metAt, 5);
    expect(cut.wMax * S.headroom).toBeLessThan(metAt * 0.85);
  });

  it('probes less often each time the limit is met at the same level again', () => {
    const settings = { ...S, maxRps: 60 };
    let s = steady(initialRateState(settings, 0), 0, 5000, 60, settings);
    s = answer(s, { now: 5000, sentAt: 4990, throttled: true, retryAfterMs: 1000 }, settings).state;
    expect(s.probeSlowdown).toBe(S.probeSlowdown);
    // Met again at the same level after a steady spell (10 s): the limit is steady.
    s = steady(s, 6000, 15_000, 57, settings);
    s = answer(s, { now: 15_000, sentAt: 14_990, throttled: true, retryAfterMs: 1000 }, settings).state;
    expect(s.probeSlowdown).toBe(S.probeSlowdown * S.probeBackoff);
    // A throttle at a very different level: the limit moved, probe at the first speed again.
    s = steady(s, 16_000, 23_000, 20, settings);
    s = answer(s, { now: 23_000, sentAt: 22_990, throttled: true, retryAfterMs: 1000 }, settings).state;
    expect(s.probeSlowdown).toBe(S.probeSlowdown);
  });

  it('never grows past twice the rate actually sent', () => {
    const settings = { ...S, maxRps: 100 };
    let s = steady(initialRateState(settings, 0), 0, 3000, 100, settings);
    s = answer(s, { now: 3000, sentAt: 2990, throttled: true }, settings).state;
    // Then the client sends only 5 a second (held back by its own parallelism) for a minute: the
    // rate may move while the meter still remembers 100 a second, but it banks nothing after.
    const half = steady(s, 3000, 33_000, 5, settings);
    const whole = steady(half, 33_000, 63_000, 5, settings);
    expect(whole.rps).toBe(half.rps);
    expect(whole.rps).toBeLessThan(0.95 * s.wMax);
  });

  it('leaves the time paused out of what the meters measure', () => {
    const settings = { ...S, maxRps: 40 };
    let s = steady(initialRateState(settings, 0), 0, 3000, 40, settings);
    // A 10 s pause, then the same 40 a second: the meter must still read about 40, not 40 × 3/13.
    s = answer(s, { now: 3000, sentAt: 2995, throttled: true, retryAfterMs: 10_000 }, settings).state;
    s = steady(s, 13_000, 14_000, 40, settings);
    expect(s.sent.rate).toBeGreaterThan(30);
  });

  it('paces at 0.98 of a rate the service announces, from the first answer, before any 429', () => {
    const r = answer(initialRateState(S, 0), { now: 5, sentAt: 0, throttled: false, hint: { rps: 50, remaining: 12, resetMs: 1000 } });
    expect(r.change).toBe('announced');
    expect(r.state.rps).toBeCloseTo(49, 5);
    // The same announcement again changes nothing.
    expect(answer(r.state, { now: 6, sentAt: 1, throttled: false, hint: { rps: 50 } }).change).toBe('none');
    // --max-rps below it wins.
    expect(answer(initialRateState({ ...S, maxRps: 10 }, 0), { now: 5, sentAt: 0, throttled: false, hint: { rps: 50 } }, { ...S, maxRps: 10 }).state.rps).toBe(10);
  });

  it('never paces an announced long-window quota slower than minRps: 2 a day would space requests 12 hours apart', () => {
    const r = answer(initialRateState(S, 0), { now: 5, sentAt: 0, throttled: false, hint: { rps: 2 / 86_400, remaining: 1, resetMs: 86_400_000 } });
    expect(r.state.rps).toBe(S.minRps);
    expect(r.state.pauseUntil).toBe(-Infinity);
  });

  it('after a burst throttled before the announced rate was known, goes back to the announced rate', () => {
    let s = initialRateState(S, 0);
    for (let i = 0; i < 32; i += 1) s = recordSend(s, S, 0);
    s = answer(s, { now: 5, sentAt: 0, throttled: false, hint: { rps: 50, remaining: 1 } }).state;
    const r = answer(s, { now: 6, sentAt: 0, throttled: true, retryAfterMs: 1000, hint: { rps: 50, remaining: 0 } });
    expect(r.change).toBe('throttled');
    expect(r.state.rps).toBeCloseTo(49, 5);
    expect(r.state.pauseUntil).toBe(1006);
  });

  it('pauses for an empty quota that resets well ahead (a fixed window), not for one that refills within a second', () => {
    const s = initialRateState(S, 0);
    const long = answer(s, { now: 0, sentAt: 0, throttled: false, hint: { remaining: 0, resetMs: 30_000 } });
    expect(long.change).toBe('quota-empty');
    expect(long.state.pauseUntil).toBe(30_000);
    const short = answer(s, { now: 0, sentAt: 0, throttled: false, hint: { remaining: 0, resetMs: 1000 } });
    expect(short.change).toBe('none');
    expect(short.state.pauseUntil).toBe(-Infinity);
  });
});
