/**
 * The fixed-window quota over service requests, driven by an injected clock: what is left and the
 * reset on every answer (a day ahead for a daily quota), 429 with Retry-After until the reset
 * beyond it, a fresh window after it, both header styles, and the options checked.
 */
import { describe, expect, it } from 'vitest';
import { parseQuotaSpec } from '../../src/emulator/quota.js';
import { startEmulator, type EmulatorOptions } from '../../src/emulator/server.js';
import { call, callJson, ORG_API, useEmulator } from './emulator-test-kit.js';

const LIST = `${ORG_API}/organisations`;
const T0 = Date.UTC(2026, 0, 2, 3, 4, 5, 0);

async function withQuota(quota: NonNullable<EmulatorOptions['quota']>, options: EmulatorOptions = {}) {
  let now = T0;
  const emulator = await useEmulator({ ...options, quota, clock: () => now });
  return { emulator, advance: (ms: number) => (now += ms) };
}

const seen = (r: Response, names: string[]) => names.map((n) => r.headers.get(n));

describe('quota', () => {
  it('announces a daily quota on every answer, then answers 429 rate_limited with Retry-After until the reset, counted', async () => {
    const { emulator, advance } = await withQuota({ requests: 2, windowSeconds: 86_400 });
    const names = ['ratelimit-policy', 'ratelimit', 'retry-after'];
    expect(seen(await call(emulator, LIST), names)).toEqual(['"quota";q=2;w=86400', '"quota";r=1;t=86400', null]);
    advance(1000);
    // The last request the quota allows already says it is used up, and for how long: a day, less a second.
    const last = await call(emulator, LIST);
    expect([last.status, ...seen(last, names)]).toEqual([200, '"quota";q=2;w=86400', '"quota";r=0;t=86399', null]);
    advance(60_000);
    const refused = await callJson(emulator, LIST);
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({ code: 'rate_limited', message: 'The request quota is used up: wait as long as Retry-After says, then retry.' });
    expect(seen(refused.response, names)).toEqual(['"quota";q=2;w=86400', '"quota";r=0;t=86339', '86339']);
    expect(emulator.counters).toMatchObject({ total: 3, rateLimited: 1 });
    // A new window after the reset.
    advance(86_339_000);
    expect(seen(await call(emulator, LIST), names)).toEqual(['"quota";q=2;w=86400', '"quota";r=1;t=86400', null]);
  });

  it('x-ratelimit: X-RateLimit-Limit and -Remaining, and -Reset as the epoch second of the reset (as GitHub sends it)', async () => {
    const { emulator, advance } = await withQuota({ requests: 1, windowSeconds: 3_000_000, headers: 'x-ratelimit' });
    const names = ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'ratelimit'];
    const reset = String(T0 / 1000 + 3_000_000);
    expect(seen(await call(emulator, LIST), names)).toEqual(['1', '0', reset, null]);
    advance(5000);
    const refused = await call(emulator, LIST);
    expect([refused.status, ...seen(refused, names), refused.headers.get('retry-after')]).toEqual([429, '1', '0', reset, null, '2999995']);
  });

  it('writes Retry-After as an HTTP date with retry-after http-date', async () => {
    const { emulator } = await withQuota({ requests: 1, windowSeconds: 86_400 }, { behaviour: { 'retry-after': 'http-date' } });
    await call(emulator, LIST);
    const refused = await call(emulator, LIST);
    expect([refused.status, refused.headers.get('retry-after')]).toEqual([429, 'Sat, 03 Jan 2026 03:04:05 GMT']);
  });

  it('refuses bad options, and is not applied without them', async () => {
    await expect(startEmulator({ quota: { requests: 0, windowSeconds: 60 } })).rejects.toThrow('Invalid quota: quota.requests must be a whole number of at least 1 (got 0).');
    await expect(startEmulator({ quota: { requests: 1, windowSeconds: 1.5 } })).rejects.toThrow('quota.windowSeconds must be a whole number of at least 1 (got 1.5)');
    await expect(startEmulator({ quota: { requests: 1, windowSeconds: 60, headers: 'none' as never } })).rejects.toThrow(/quota.headers must be one of ratelimit, x-ratelimit/);
    const plain = await useEmulator();
    const answer = await call(plain, LIST);
    expect([...answer.headers.keys()].filter((k) => k.includes('ratelimit'))).toEqual([]);
  });
});

describe('parseQuotaSpec', () => {
  it('reads REQUESTS:SECONDS and refuses anything else', () => {
    expect(parseQuotaSpec('5000:86400')).toEqual({ requests: 5000, windowSeconds: 86_400 });
    for (const bad of ['0:60', '5:0', '5', '5:1.5', 'a:b', ':60', '']) {
      expect(() => parseQuotaSpec(bad), bad).toThrow('--quota takes REQUESTS:SECONDS, whole numbers of at least 1');
    }
  });
});
