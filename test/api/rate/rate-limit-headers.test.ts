import { describe, expect, it } from 'vitest';
import type { RateLimitHint } from '../../../src/api/rate/adaptive-rate.js';
import { parseRateLimitHeaders } from '../../../src/api/rate/rate-limit-headers.js';

const NOW = Date.parse('2026-11-21T10:00:00Z');
const parse = (headers: Record<string, string>) => parseRateLimitHeaders((name) => headers[name], NOW);

describe('parseRateLimitHeaders', () => {
  it.each([
    ['nothing', {}, undefined],
    ['IETF draft 08+ (the emulator)', { 'ratelimit-policy': '"default";q=50;w=1', ratelimit: '"default";r=12;t=1' }, { rps: 50, remaining: 12, resetMs: 1000 }],
    ['IETF draft 08+, quota over a window', { 'ratelimit-policy': '"burst";q=100;w=10', ratelimit: '"burst";r=0;t=4' }, { rps: 10, remaining: 0, resetMs: 4000 }],
    ['IETF draft 08+, the most restrictive of several policies and the emptiest quota', { 'ratelimit-policy': '"s";q=100;w=1, "day";q=86400;w=86400', ratelimit: '"s";r=50;t=1, "day";r=3;t=600' }, { rps: 1, remaining: 3, resetMs: 600_000 }],
    ['IETF draft 07', { 'ratelimit-policy': '100;w=10, 1000;w=3600', ratelimit: 'limit=100, remaining=7, reset=3' }, { rps: 1000 / 3600, remaining: 7, resetMs: 3000 }],
    ['IETF drafts before 07', { 'ratelimit-limit': '10', 'ratelimit-remaining': '5', 'ratelimit-reset': '2', 'ratelimit-policy': '10;w=1' }, { rps: 10, remaining: 5, resetMs: 2000 }],
    ['X-RateLimit-* with Reset in seconds (read per second)', { 'x-ratelimit-limit': '40', 'x-ratelimit-remaining': '9', 'x-ratelimit-reset': '1' }, { rps: 40, remaining: 9, resetMs: 1000 }],
    ['X-RateLimit-* with an epoch Reset (a long fixed window: no pace, only the quota)', { 'x-ratelimit-limit': '5000', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(NOW / 1000 + 1800) }, { remaining: 0, resetMs: 1_800_000 }],
    ['X-RateLimit-Remaining alone', { 'x-ratelimit-remaining': '3' }, { remaining: 3 }],
  ] as const)('reads %s', (_name, headers, expected: RateLimitHint | undefined) => {
    const got = parse(headers as Record<string, string>);
    if (expected === undefined) expect(got).toBeUndefined();
    else expect(got).toEqual({ ...expected, ...(expected.rps === undefined ? {} : { rps: expect.closeTo(expected.rps, 9) }) });
  });

  it.each([
    ['a quota that is not a number', { 'ratelimit-policy': '"default";q=lots;w=1' }],
    ['a window of 0', { 'ratelimit-policy': '"default";q=50;w=0' }],
    ['negative numbers', { 'x-ratelimit-limit': '-5', 'x-ratelimit-remaining': '-1' }],
    ['garbage', { ratelimit: ';;,,=', 'ratelimit-policy': '"unterminated;q=5' }],
  ])('ignores %s rather than failing', (_name, headers) => {
    expect(parse(headers)).toBeUndefined();
  });

  it('prefers the IETF fields to X-RateLimit-* when both are sent', () => {
    expect(
      parse({ 'ratelimit-policy': '"default";q=20;w=1', ratelimit: '"default";r=4;t=1', 'x-ratelimit-limit': '999', 'x-ratelimit-remaining': '999' }),
    ).toEqual({ rps: 20, remaining: 4, resetMs: 1000 });
  });
});
