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
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  maxAttempts: 5,
  baseDelayMs: 250,
  maxDelayMs: 8_000,
  budgetMs: 60_000,
  retryableStatuses: [429, 500, 502, 503, 504],
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
  /** Attempts made so far (1 after the first). */
  attempt: number;
  /** HTTP status when the service answered. */
  status?: number;
  /** Error code when no answer came (ECONNRESET, UND_ERR_HEADERS_TIMEOUT, ...). */
  errorCode?: string;
  /** The Retry-After header as received, if any. */
  retryAfter?: string;
  /** Milliseconds since the first attempt started. */
  elapsedMs: number;
  /** Epoch milliseconds now, to read an HTTP-date Retry-After. */
  nowMs: number;
  /** A number in [0, 1) for the jitter. */
  random: number;
}

export type RetryDecision =
  | { retry: true; delayMs: number }
  | { retry: false; reason: 'not-retryable' | 'attempts-exhausted' | 'budget-exhausted' | 'retry-after-beyond-budget'; retryAfterMs?: number };

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
  const remainingMs = policy.budgetMs - outcome.elapsedMs;
  // A server that asks for more time than we have left gets a clear failure now, not a long sleep.
  if (retryAfterMs !== undefined && retryAfterMs > remainingMs) {
    return { retry: false, reason: 'retry-after-beyond-budget', retryAfterMs };
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
