import { describe, expect, it } from 'vitest';
import { DEFAULT_RETRY_POLICY, decideRetry, parseRetryAfter, type AttemptOutcome } from '../../src/transport/retry-policy.js';

const policy = { ...DEFAULT_RETRY_POLICY, maxAttempts: 4, baseDelayMs: 100, maxDelayMs: 1_000, budgetMs: 10_000 };
const outcome = (o: Partial<AttemptOutcome>): AttemptOutcome => ({ attempt: 1, elapsedMs: 0, nowMs: 1_700_000_000_000, random: 0.5, ...o });

describe('decideRetry', () => {
  it.each([
    ['503 on the first attempt', { status: 503 }, { retry: true, delayMs: 75 }],
    ['429 without Retry-After (backpressure: the limiter does the waiting)', { status: 429 }, { retry: true, delayMs: 0, backpressure: true }],
    ['429 after the attempts and the budget are spent', { status: 429, attempt: 9, elapsedMs: 50_000 }, { retry: true, delayMs: 0, backpressure: true }],
    ['500', { status: 500 }, { retry: true, delayMs: 75 }],
    ['502 on the third attempt', { status: 502, attempt: 3 }, { retry: true, delayMs: 300 }],
    ['a connection reset', { errorCode: 'ECONNRESET' }, { retry: true, delayMs: 75 }],
    ['a headers timeout', { errorCode: 'UND_ERR_HEADERS_TIMEOUT' }, { retry: true, delayMs: 75 }],
    ['400', { status: 400 }, { retry: false, reason: 'not-retryable' }],
    ['401', { status: 401 }, { retry: false, reason: 'not-retryable' }],
    ['403', { status: 403 }, { retry: false, reason: 'not-retryable' }],
    ['404', { status: 404 }, { retry: false, reason: 'not-retryable' }],
    ['422', { status: 422 }, { retry: false, reason: 'not-retryable' }],
    ['a redirect', { status: 302 }, { retry: false, reason: 'not-retryable' }],
    ['an unknown error code', { errorCode: 'EWHATEVER' }, { retry: false, reason: 'not-retryable' }],
    ['503 on the last attempt', { status: 503, attempt: 4 }, { retry: false, reason: 'attempts-exhausted' }],
    ['503 with the budget nearly spent', { status: 503, elapsedMs: 9_950 }, { retry: false, reason: 'budget-exhausted' }],
  ] as const)('answers %s', (_name, input, expected) => {
    expect(decideRetry(policy, outcome(input))).toEqual(expected);
  });

  it('waits at least as long as Retry-After asks', () => {
    expect(decideRetry(policy, outcome({ status: 503, retryAfter: '2' }))).toEqual({ retry: true, delayMs: 2_000 });
    expect(decideRetry(policy, outcome({ status: 429, retryAfter: '2' }))).toEqual({ retry: true, delayMs: 2_000, backpressure: true });
  });

  it('refuses a Retry-After beyond the remaining budget instead of sleeping', () => {
    expect(decideRetry(policy, outcome({ status: 503, retryAfter: '3600' }))).toEqual({
      retry: false,
      reason: 'retry-after-beyond-budget',
      retryAfterMs: 3_600_000,
      limitMs: 10_000,
    });
  });

  it('waits out a 429 longer than the budget, but not longer than maxRetryAfterMs', () => {
    expect(decideRetry(policy, outcome({ status: 429, retryAfter: '120' }))).toEqual({ retry: true, delayMs: 120_000, backpressure: true });
    expect(decideRetry(policy, outcome({ status: 429, retryAfter: '3600' }))).toEqual({
      retry: false,
      reason: 'retry-after-beyond-budget',
      retryAfterMs: 3_600_000,
      limitMs: 600_000,
    });
  });

  it('refuses a far Retry-After even on the last attempt, so the message says why', () => {
    expect(decideRetry(policy, outcome({ status: 503, retryAfter: '60', attempt: 4 }))).toMatchObject({ reason: 'retry-after-beyond-budget' });
  });

  it('spreads retries with jitter between half and all of the step', () => {
    const low = decideRetry(policy, outcome({ status: 503, attempt: 2, random: 0 }));
    const high = decideRetry(policy, outcome({ status: 503, attempt: 2, random: 0.999 }));
    expect(low).toEqual({ retry: true, delayMs: 100 });
    expect(high).toEqual({ retry: true, delayMs: 200 });
  });

  it('caps the backoff step at maxDelayMs', () => {
    expect(decideRetry({ ...policy, maxAttempts: 20 }, outcome({ status: 503, attempt: 12, random: 0.999 }))).toEqual({ retry: true, delayMs: 1_000 });
  });
});

describe('parseRetryAfter', () => {
  it('reads delta-seconds', () => expect(parseRetryAfter('2', 0)).toBe(2_000));
  it('reads an HTTP-date relative to now', () => {
    const now = Date.parse('Sat, 21 Nov 2026 10:00:00 GMT');
    expect(parseRetryAfter('Sat, 21 Nov 2026 10:00:05 GMT', now)).toBe(5_000);
  });
  it('treats a date in the past as no wait', () => expect(parseRetryAfter('Sat, 21 Nov 2020 10:00:05 GMT', Date.now())).toBe(0));
  it('ignores what it cannot read', () => expect(parseRetryAfter('soon', 0)).toBeUndefined());
  it('ignores an absent header', () => expect(parseRetryAfter(undefined, 0)).toBeUndefined());
});
