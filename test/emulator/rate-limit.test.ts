/**
 * The token-bucket rate limit over service requests, driven by an injected clock: burst, 429 with
 * Retry-After, refill over time, the header styles, counters, and the admin endpoints' exemption.
 */
import { describe, expect, it } from 'vitest';
import { parseRateLimitSpec, TokenBucket } from '../../src/emulator/rate-limit.js';
import { startEmulator, type EmulatorOptions } from '../../src/emulator/server.js';
import { call, callJson, ORG_API, orgPath, useEmulator } from './emulator-test-kit.js';

const LIST = `${ORG_API}/organisations`;
const T0 = Date.UTC(2026, 0, 2, 3, 4, 5, 0);

/** An emulator whose clock only moves when the test says so. */
async function limited(rateLimit: NonNullable<EmulatorOptions['rateLimit']>, options: EmulatorOptions = {}) {
  let now = T0;
  const emulator = await useEmulator({ ...options, rateLimit, clock: () => now });
  return { emulator, advance: (ms: number) => (now += ms) };
}

const statuses = async (emulator: Awaited<ReturnType<typeof useEmulator>>, n: number) => {
  const out: number[] = [];
  for (let i = 0; i < n; i += 1) out.push((await call(emulator, LIST)).status);
  return out;
};

describe('rate limit', () => {
  it('lets a burst through, then answers 429 rate_limited with Retry-After in seconds, counted', async () => {
    const { emulator } = await limited({ rps: 4, burst: 3 });
    expect(await statuses(emulator, 3)).toEqual([200, 200, 200]);
    const refused = await callJson(emulator, LIST);
    expect(refused.status).toBe(429);
    expect(refused.response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(refused.body).toEqual({ code: 'rate_limited', message: 'Too many requests: wait as long as Retry-After says, then retry.' });
    expect(refused.response.headers.get('retry-after')).toBe('1');
    expect(emulator.counters).toMatchObject({ total: 4, rateLimited: 1 });
    expect(emulator.requestLog.map((e) => e.status)).toEqual([200, 200, 200, 429]);
  });

  it('refills at rps tokens a second, up to the burst', async () => {
    const { emulator, advance } = await limited({ rps: 4, burst: 2 });
    expect(await statuses(emulator, 3)).toEqual([200, 200, 429]);
    advance(200);
    expect(await statuses(emulator, 1)).toEqual([429]);
    advance(50);
    expect(await statuses(emulator, 2)).toEqual([200, 429]);
    advance(10_000);
    expect(await statuses(emulator, 3)).toEqual([200, 200, 429]);
    expect(emulator.counters.rateLimited).toBe(4);
  });

  it('defaults the burst to max(1, ceil(rps / 4))', async () => {
    expect(await statuses((await limited({ rps: 10 })).emulator, 4)).toEqual([200, 200, 200, 429]);
    expect(await statuses((await limited({ rps: 1 })).emulator, 2)).toEqual([200, 429]);
    expect(new TokenBucket({ rps: 100 }, () => 0).burst).toBe(25);
  });

  it('takes a token for every service request, whatever it answers, but none for the admin endpoints', async () => {
    const { emulator } = await limited({ rps: 1, burst: 2 });
    expect((await call(emulator, '/nowhere')).status).toBe(404);
    expect((await call(emulator, orgPath('org_acme'), { token: 'nobody' })).status).toBe(401);
    expect((await call(emulator, LIST)).status).toBe(429);
    for (let i = 0; i < 5; i += 1) expect((await call(emulator, '/__emulator/counters', { token: null })).status).toBe(200);
    expect((await callJson(emulator, '/__emulator/counters', { token: null })).body.rateLimited).toBe(1);
  });

  it('writes Retry-After as an HTTP date with retry-after http-date', async () => {
    const { emulator, advance } = await limited({ rps: 2, burst: 1 }, { behaviour: { 'retry-after': 'http-date' } });
    advance(300);
    await call(emulator, LIST);
    const refused = await call(emulator, LIST);
    expect([refused.status, refused.headers.get('retry-after')]).toEqual([429, 'Fri, 02 Jan 2026 03:04:06 GMT']);
  });

  it('is not applied at all without the option (and refuses a bad one)', async () => {
    const emulator = await useEmulator();
    expect(await statuses(emulator, 30)).toEqual(Array(30).fill(200));
    expect(emulator.counters.rateLimited).toBe(0);
    await expect(startEmulator({ rateLimit: { rps: 0 } })).rejects.toThrow('Invalid rate limit: rateLimit.rps must be a whole number of at least 1 (got 0).');
    await expect(startEmulator({ rateLimit: { rps: 5, headers: 'both' as never } })).rejects.toThrow(/rateLimit.headers must be one of none, ratelimit, x-ratelimit/);
  });

  it('resetCounters() zeroes rateLimited', async () => {
    const { emulator } = await limited({ rps: 1 });
    await statuses(emulator, 2);
    expect(emulator.counters.rateLimited).toBe(1);
    emulator.resetCounters();
    expect(emulator.counters.rateLimited).toBe(0);
  });
});

describe('rate-limit headers', () => {
  const seen = (r: Response, names: string[]) => names.map((n) => r.headers.get(n));

  it('ratelimit: every answer carries RateLimit-Policy and RateLimit (draft-09 structured form)', async () => {
    const { emulator, advance } = await limited({ rps: 5, burst: 3, headers: 'ratelimit' });
    const names = ['ratelimit-policy', 'ratelimit', 'x-ratelimit-limit'];
    expect(seen(await call(emulator, LIST), names)).toEqual(['"default";q=5;w=1', '"default";r=2;t=1', null]);
    expect(seen(await call(emulator, '/nowhere'), names)).toEqual(['"default";q=5;w=1', '"default";r=1;t=1', null]);
    emulator.faults.add({ fault: { kind: 'status', status: 503 } });
    const fault = await call(emulator, LIST);
    expect([fault.status, ...seen(fault, names)]).toEqual([503, '"default";q=5;w=1', '"default";r=0;t=1', null]);
    const refused = await call(emulator, LIST);
    expect([refused.status, ...seen(refused, names)]).toEqual([429, '"default";q=5;w=1', '"default";r=0;t=1', null]);
    advance(1000);
    expect(seen(await call(emulator, LIST), names)).toEqual(['"default";q=5;w=1', '"default";r=2;t=1', null]);
  });

  it('ratelimit: t is the seconds until the bucket is full again', async () => {
    const { emulator } = await limited({ rps: 1, burst: 5, headers: 'ratelimit' });
    const last = (await Promise.all([0, 1, 2, 3].map(() => call(emulator, LIST)))).map((r) => r.headers.get('ratelimit'));
    expect(last.sort()).toEqual(['"default";r=1;t=4', '"default";r=2;t=3', '"default";r=3;t=2', '"default";r=4;t=1']);
  });

  it('x-ratelimit: X-RateLimit-Limit, -Remaining and -Reset', async () => {
    const { emulator } = await limited({ rps: 5, burst: 3, headers: 'x-ratelimit' });
    const names = ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'ratelimit'];
    expect(seen(await call(emulator, LIST), names)).toEqual(['5', '2', '1', null]);
    await call(emulator, LIST);
    await call(emulator, LIST);
    const refused = await call(emulator, LIST);
    expect([refused.status, ...seen(refused, names)]).toEqual([429, '5', '0', '1', null]);
  });

  it('none (the default): no rate-limit headers, even when limited', async () => {
    const { emulator } = await limited({ rps: 1 });
    await call(emulator, LIST);
    const refused = await call(emulator, LIST);
    expect(refused.status).toBe(429);
    expect([...refused.headers.keys()].filter((k) => k.includes('ratelimit'))).toEqual([]);
  });
});

describe('parseRateLimitSpec', () => {
  it('reads RPS and RPS:BURST and refuses anything else', () => {
    expect(parseRateLimitSpec('10')).toEqual({ rps: 10 });
    expect(parseRateLimitSpec('10:3')).toEqual({ rps: 10, burst: 3 });
    for (const bad of ['0', '10:0', '1.5', 'ten', '10:', ':3', '']) {
      expect(() => parseRateLimitSpec(bad), bad).toThrow('--rate-limit takes RPS or RPS:BURST, whole numbers of at least 1');
    }
  });
});
