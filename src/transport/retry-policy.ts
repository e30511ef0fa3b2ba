/**
 * When to try a request again, as a pure function of what happened, so that it can be
 * table-tested. The undici retry interceptor does the waiting and re-sending; this decides.
 */

export interface RetryPolicy {
  /** Attempts in all, the first included. */
  maxAttempts: number;
  /** Backoff before the first retry; doubles each time. */
  baseDelayMs: number;
  maxDelayMs: number;
  /** Total time one logical request may take, its retries and waits included. */
  budgetMs: number;
  retryableStatuses: readonly number[];
  retryableErrorCodes: readonly string[];
  /**
   * Answers that are backpressure, not failure (429): retried whatever the attempts and budget,
   * after the shared pause the rate limiter holds everyone in, unless Retry-After is beyond
   * `maxRetryAfterMs`. The limiter's no-progress watchdog bounds them instead.
   */
  backpressureStatuses: readonly number[];
  maxRetryAfterMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  maxAttempts: 5,
  baseDelayMs: 250,
  maxDelayMs: 8_000,
  budgetMs: 60_000,
  retryableStatuses: [429, 500, 502, 503, 504],
  backpressureStatuses: [429],
  maxRetryAfterMs: 10 * 60_000,
  retryableErrorCodes: [
    'ECONNRESET',
    'ECONNREFUSED',
    'EPIPE',
    'ETIMEDOUT',
    'EAI_AGAIN',
    'ENETUNREACH',
    'EHOSTUNREACH',
    'UND_ERR_SOCKET',
    'UND_ERR_CONNECT_TIMEOUT',
    'UND_ERR_HEADERS_TIMEOUT',
  ],
};

export interface AttemptOutcome {
  /** Attempts made so far (1 after the first), backpressure answers not counted. */
  attempt: number;
  /** HTTP status when the service answered. */
  status?: number;
  /** Error code when no answer came (ECONNRESET, UND_ERR_HEADERS_TIMEOUT, ...). */
  errorCode?: string;
  /** The Retry-After header as received, if any. */
  retryAfter?: string;
  /** Milliseconds since the first attempt started, time held by the rate limiter not counted. */
  elapsedMs: number;
  /** Epoch milliseconds now, to read an HTTP-date Retry-After. */
  nowMs: number;
  /** A number in [0, 1) for the jitter. */
  random: number;
}

export type RetryDecision =
  /** `backpressure`: the wait is the rate limiter's shared pause, not this request's own delay. */
  | { retry: true; delayMs: number; backpressure?: boolean }
  | {
      retry: false;
      reason: 'not-retryable' | 'attempts-exhausted' | 'budget-exhausted' | 'retry-after-beyond-budget';
      retryAfterMs?: number;
      /** The limit Retry-After was beyond (the budget, or maxRetryAfterMs for backpressure). */
      limitMs?: number;
    };

/** Retry-After in milliseconds (delta-seconds or an HTTP-date), or undefined when absent or unreadable. */
export function parseRetryAfter(value: string | undefined, nowMs: number): number | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - nowMs);
}

export function decideRetry(policy: RetryPolicy, outcome: AttemptOutcome): RetryDecision {
  const retryable =
    (outcome.status !== undefined && policy.retryableStatuses.includes(outcome.status)) ||
    (outcome.status === undefined && outcome.errorCode !== undefined && policy.retryableErrorCodes.includes(outcome.errorCode));
  if (!retryable) return { retry: false, reason: 'not-retryable' };

  const retryAfterMs = parseRetryAfter(outcome.retryAfter, outcome.nowMs);
  if (outcome.status !== undefined && policy.backpressureStatuses.includes(outcome.status)) {
    // Not a failure of this request but the service asking everyone to slow down: no attempt is
    // used up and no budget spent; only a wait beyond what orgform will sit through fails it.
    if (retryAfterMs !== undefined && retryAfterMs > policy.maxRetryAfterMs) {
      return { retry: false, reason: 'retry-after-beyond-budget', retryAfterMs, limitMs: policy.maxRetryAfterMs };
    }
    return { retry: true, delayMs: retryAfterMs ?? 0, backpressure: true };
  }
  const remainingMs = policy.budgetMs - outcome.elapsedMs;
  // A server that asks for more time than we have left gets a clear failure now, not a long sleep.
  if (retryAfterMs !== undefined && retryAfterMs > remainingMs) {
    return { retry: false, reason: 'retry-after-beyond-budget', retryAfterMs, limitMs: policy.budgetMs };
  }
  if (outcome.attempt >= policy.maxAttempts) return { retry: false, reason: 'attempts-exhausted' };

  // "Equal jitter": half the exponential step fixed, half random, so clients spread out
  // but never retry immediately.
  const step = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (outcome.attempt - 1));
  const backoffMs = Math.round(step / 2 + (step / 2) * outcome.random);
  const delayMs = retryAfterMs !== undefined ? Math.max(retryAfterMs, backoffMs) : backoffMs;
  if (delayMs >= remainingMs) return { retry: false, reason: 'budget-exhausted' };
  return { retry: true, delayMs };
}
