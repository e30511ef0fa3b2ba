import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { NotSentError } from '../../../src/api/api-error.js';
import { RateGate, RateLimitResetTooFarError, RateLimitStalledError, type RateEvent } from '../../../src/api/rate/rate-gate.js';
import { MAX_TIMER_MS } from '../../../src/api/rate/timer-delay.js';
import type { OrgformError } from '../../../src/errors.js';
import { FakeClock } from '../../support/fake-clock.js';
import { TokenBucket } from '../../../src/emulator/rate-limit.js';

/** Takes a turn, recording when it was granted. */
function turn(limiter: RateGate, clock: FakeClock, log: number[]): Promise<void> {
  const wait = limiter.acquire();
  if (wait === undefined) {
    log.push(clock.time);
    return Promise.resolve();
  }
  return wait.then(() => {
    log.push(clock.time);
  });
}

describe('the shared rate limiter', () => {
  it('holds every waiting attempt until the Retry-After of a 429, then lets them go', async () => {
    const clock = new FakeClock();
    const events: RateEvent[] = [];
    const limiter = new RateGate({ clock, onRate: (e) => events.push(e) });
    limiter.begin();
    const sentAt = limiter.recordSend();
    clock.time = 20;
    limiter.recordAnswer({ sentAt, status: 429, retryAfterMs: 1000 });
    expect(events).toMatchObject([{ reason: 'throttled', pausedMs: 1000 }]);
    const granted: number[] = [];
    const all = Array.from({ length: 8 }, () => turn(limiter, clock, granted));
    await clock.runUntil(1019);
    expect(granted).toEqual([]);
    expect(limiter.status()).toMatchObject({ waiting: 8, pausedMs: 1, throttled: 1 });
    await clock.runWhile(() => granted.length < 8);
    await Promise.all(all);
    expect(Math.min(...granted)).toBeGreaterThanOrEqual(1020);
  });

  it('gives no turn to an attempt let go while it waited: the one behind it goes in its place', async () => {
    const clock = new FakeClock();
    const limiter = new RateGate({ clock, settings: { maxRps: 10 } });
    expect(limiter.acquire()).toBeUndefined();
    const letGo = new AbortController();
    const dropped = limiter.acquire(letGo.signal)!;
    const granted: number[] = [];
    const behind = turn(limiter, clock, granted);
    letGo.abort(new Error('not needed'));
    await expect(dropped).rejects.toThrow('not needed');
    await clock.runWhile(() => granted.length < 1);
    await behind;
    // The second turn (100 ms on), not the third (200 ms).
    expect(granted).toEqual([100]);
    expect(limiter.status().waiting).toBe(0);
  });

  it('keeps no listener on an attempt\'s signal once its turn came: a request held at each of many attempts adds none', async () => {
    const clock = new FakeClock();
    const limiter = new RateGate({ clock, settings: { maxRps: 10 } });
    const signal = new AbortController().signal;
    expect(limiter.acquire()).toBeUndefined();
    for (let attempt = 0; attempt < 12; attempt += 1) {
      const wait = limiter.acquire(signal)!;
      await clock.runUntil(clock.time + 100);
      await wait;
    }
    expect(getEventListeners(signal, 'abort')).toEqual([]);
  });

  it('releases waiters one by one at the rate, first come first served', async () => {
    const clock = new FakeClock();
    const limiter = new RateGate({ clock, settings: { maxRps: 10 } });
    const order: number[] = [];
    const times: number[] = [];
    const all = Array.from({ length: 6 }, (_, i) =>
      Promise.resolve(limiter.acquire()).then(() => {
        order.push(i);
        times.push(clock.time);
      }),
    );
    await clock.runWhile(() => order.length < 6);
    await Promise.all(all);
    expect(order).toEqual([0, 1, 2, 3, 4, 5]);
    // The first at once, then one every 100 ms (10 a second).
    expect(times[0]).toBe(0);
    for (let i = 1; i < times.length; i += 1) expect(times[i]! - times[i - 1]!).toBeGreaterThanOrEqual(99);
    expect(times[5]).toBeLessThanOrEqual(520);
  });

  it('gives up when nothing but 429s came back for noProgressMs: waiting and later attempts fail, once told', async () => {
    const clock = new FakeClock();
    const stalls: OrgformError[] = [];
    const limiter = new RateGate({ clock, noProgressMs: 5000, onStall: (e) => stalls.push(e) });
    limiter.begin();
    for (let t = 0; t < 4000; t += 1000) {
      clock.time = t;
      limiter.recordAnswer({ sentAt: limiter.recordSend(), status: 429, retryAfterMs: 3000 });
    }
    // Paused until 6 s: the watchdog does not wait for that, it fails the waiter at 5 s.
    const waiting = Promise.resolve(limiter.acquire()).catch((e: unknown) => e);
    await clock.runUntil(5000);
    const err = await waiting;
    expect(err).toBeInstanceOf(RateLimitStalledError);
    expect((err as Error).message).toMatch(/^No request succeeded for 5 s: the service kept answering 429/);
    expect(() => limiter.acquire()).toThrow(RateLimitStalledError);
    expect(stalls).toHaveLength(1);
  });

  it('does not count time with nothing outstanding, and any answer but 429 is progress', async () => {
    const clock = new FakeClock();
    const limiter = new RateGate({ clock, noProgressMs: 5000 });
    limiter.begin();
    limiter.recordAnswer({ sentAt: limiter.recordSend(), status: 429 });
    limiter.end();
    // An hour idle (a prompt, say), then a request: not a stall.
    clock.time = 3_600_000;
    limiter.begin();
    expect(limiter.acquire()).toBeUndefined();
    limiter.recordAnswer({ sentAt: limiter.recordSend(), status: 429 });
    clock.time += 4000;
    limiter.recordAnswer({ sentAt: limiter.recordSend(), status: 404 });
    clock.time += 4000;
    limiter.recordAnswer({ sentAt: limiter.recordSend(), status: 429 });
    expect(limiter.stoppedBy).toBeUndefined();
  });

  it('stops at once, saying until when, when an answer that succeeded announces an empty quota resetting beyond noProgressMs', async () => {
    const clock = new FakeClock();
    clock.time = Date.parse('2026-03-01T12:00:00Z');
    const stops: OrgformError[] = [];
    const limiter = new RateGate({ clock, noProgressMs: 600_000, onStall: (e) => stops.push(e) });
    limiter.begin();
    // `RateLimit: "quota";r=0;t=86400` on a 200: before, every later request waited a day, in silence.
    limiter.recordAnswer({ sentAt: limiter.recordSend(), status: 200, hint: { remaining: 0, resetMs: 86_400_000 } });
    const waiting = Promise.resolve()
      .then(() => limiter.acquire())
      .catch((e: unknown) => e);
    await clock.runUntil(clock.time + 1);
    const err = await waiting;
    expect(err).toBeInstanceOf(RateLimitResetTooFarError);
    expect((err as Error).message).toBe(
      "The service's request quota is used up until 2026-03-02T12:00:00Z, in 24 hours: longer than the 10 minutes orgform waits out a rate limit (ORGFORM_NO_PROGRESS_TIMEOUT_MS). Run again after 2026-03-02T12:00:00Z; what was done is recorded, and apply picks up from there.",
    );
    expect(stops).toEqual([err]);
    expect(limiter.status().pausedMs).toBe(0);
    expect(clock.pending).toBe(0);
  });

  it('stops the same way for a 429 whose Retry-After is beyond noProgressMs, and waits out one within it', async () => {
    const clock = new FakeClock();
    const limiter = new RateGate({ clock, noProgressMs: 600_000 });
    limiter.begin();
    limiter.recordAnswer({ sentAt: limiter.recordSend(), status: 429, retryAfterMs: 600_000 });
    expect(limiter.status().pausedMs).toBe(600_000);
    expect(limiter.stoppedBy).toBeUndefined();
    limiter.recordAnswer({ sentAt: limiter.recordSend(), status: 429, retryAfterMs: 600_001 });
    expect(limiter.stoppedBy).toBeInstanceOf(RateLimitResetTooFarError);
    expect(limiter.stoppedBy!.message).toMatch(/^The service asked every request to wait \(Retry-After\) until 1970-01-01T00:10:00Z, in 10 minutes: longer than the 10 minutes/);
  });

  it('names no date for a reset beyond what a Date holds (Retry-After: 99999999999999999999), and still stops', () => {
    const clock = new FakeClock();
    const limiter = new RateGate({ clock });
    limiter.begin();
    limiter.recordAnswer({ sentAt: limiter.recordSend(), status: 429, retryAfterMs: 99999999999999999999 * 1000 });
    expect(limiter.stoppedBy).toBeInstanceOf(RateLimitResetTooFarError);
    expect(limiter.stoppedBy!.message).toMatch(/^The service asked every request to wait \(Retry-After\), in [\d.e+]+ days: longer than the 10 minutes orgform waits out a rate limit \(ORGFORM_NO_PROGRESS_TIMEOUT_MS\)\. Run again much later;/);
  });

  it('holds a 429 that gave no Retry-After until the reset of its empty quota, instead of retrying it at once', () => {
    const clock = new FakeClock();
    const limiter = new RateGate({ clock });
    limiter.begin();
    limiter.recordAnswer({ sentAt: limiter.recordSend(), status: 429, hint: { remaining: 0, resetMs: 30_000 } });
    expect(limiter.status().pausedMs).toBe(30_000);
  });

  it('never asks for a timer beyond 2^31 - 1 ms, which Node would fire at once, in a loop', async () => {
    const clock = new FakeClock();
    // One request every 10^10 ms: the wait for the second one is beyond what a timer can hold.
    const limiter = new RateGate({ clock, settings: { maxRps: 1e-7 } });
    limiter.begin();
    expect(limiter.acquire()).toBeUndefined();
    const second = limiter.acquire();
    expect(second).toBeInstanceOf(Promise);
    expect(clock.delays.length).toBeGreaterThan(0);
    expect(Math.max(...clock.delays)).toBeLessThanOrEqual(MAX_TIMER_MS);
    // It wakes early and sleeps again, and lets the request go when its time has come.
    let granted = false;
    void second!.then(() => (granted = true));
    await clock.runUntil(MAX_TIMER_MS + 1);
    expect(granted).toBe(false);
    await clock.runUntil(1e10);
    expect(granted).toBe(true);
    expect(Math.max(...clock.delays)).toBeLessThanOrEqual(MAX_TIMER_MS);
  });

  it('once stopped, fails every waiting attempt with the stop, ends every backoff at once, and lets nothing more through', async () => {
    const clock = new FakeClock();
    const limiter = new RateGate({ clock });
    limiter.begin();
    limiter.recordAnswer({ sentAt: limiter.recordSend(), status: 429, retryAfterMs: 300_000 });
    const waiting = Array.from({ length: 3 }, () => Promise.resolve(limiter.acquire()).catch((e: unknown) => e));
    let backedOff = false;
    void limiter.backoff(8000).then(() => (backedOff = true));
    await clock.runUntil(1000);
    expect(backedOff).toBe(false);
    const interrupted = new NotSentError({ why: 'interrupted' });
    limiter.stop(interrupted);
    // Not a minute later, nor five: now, with nothing left to wake for.
    expect(await Promise.all(waiting)).toEqual([interrupted, interrupted, interrupted]);
    await clock.runUntil(1000);
    expect(backedOff).toBe(true);
    expect(() => limiter.acquire()).toThrow(interrupted);
    expect(clock.pending).toBe(0);
    // The first stop stands.
    limiter.stop(new NotSentError({ why: 'something else' }));
    expect(limiter.stoppedBy).toBe(interrupted);
  });

  it('against a 50 a second token bucket (burst 13, Retry-After: 1), 32 workers get 2,000 requests through with under 2 % answered 429 within 1.1 × the ideal time', async () => {
    // The emulator's bucket (src/emulator/rate-limit.ts), on the fake clock, 5 ms from send to answer.
    const clock = new FakeClock();
    const limiter = new RateGate({ clock });
    const bucket = new TokenBucket({ rps: 50, burst: 13 }, () => clock.time);
    const take = (): boolean => bucket.take().allowed;
    let left = 2000;
    let requests = 0;
    let throttled = 0;
    const one = async () => {
      limiter.begin();
      for (;;) {
        const wait = limiter.acquire();
        if (wait) await wait;
        const sentAt = limiter.recordSend();
        requests += 1;
        const ok = take();
        await new Promise<void>((resolve) => clock.setTimeout(resolve, 5));
        limiter.recordAnswer({ sentAt, status: ok ? 200 : 429, ...(ok ? {} : { retryAfterMs: 1000 }) });
        if (ok) break;
        throttled += 1;
      }
      limiter.end();
    };
    let finished = false;
    const workers = Promise.all(
      Array.from({ length: 32 }, async () => {
        while (left > 0) {
          left -= 1;
          await one();
        }
      }),
    ).then(() => {
      finished = true;
    });
    await clock.runWhile(() => !finished);
    await workers;
    const idealMs = (requests / bucket.rps) * 1000;
    expect(throttled / requests).toBeLessThan(0.02);
    expect(clock.time / idealMs).toBeLessThan(1.1);
  });
});
