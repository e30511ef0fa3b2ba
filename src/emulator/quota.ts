/**
 * A fixed-window quota over all service requests (admin endpoints are exempt): `requests` per
 * window of `windowSeconds`, the window starting at the first service request. Every answer
 * carries what is left and when the window resets, so that a client learns of a far reset (a
 * daily quota used up) from an answer that succeeded, before any 429; beyond the quota the answer
 * is 429 with Retry-After until the reset. Headers: the IETF draft's `RateLimit-Policy` and
 * `RateLimit` (reset in seconds from now), or GitHub's `X-RateLimit-*` (reset as an epoch time,
 * the mark of a long fixed window). Time comes from an injectable clock (milliseconds).
 */

export type QuotaHeaderStyle = 'ratelimit' | 'x-ratelimit';

export interface QuotaOptions {
  /** Requests allowed per window, a whole number of at least 1. */
  requests: number;
  /** The window, in whole seconds of at least 1 (86400: a daily quota). */
  windowSeconds: number;
  /** Default ratelimit. */
  headers?: QuotaHeaderStyle;
}

export interface QuotaDecision {
  allowed: boolean;
  /** Requests left in the window after this one. */
  remaining: number;
  /** Seconds until the window resets, rounded up (at least 1): also how long a refused request is told to wait. */
  retryAfterSeconds: number;
}

const HEADER_STYLES: readonly QuotaHeaderStyle[] = ['ratelimit', 'x-ratelimit'];

/** Undefined when the options are well-formed, else what is wrong. */
export function checkQuotaOptions(options: QuotaOptions): string | undefined {
  const isWhole = (v: unknown) => typeof v === 'number' && Number.isSafeInteger(v) && v >= 1;
  if (!isWhole(options.requests)) return `quota.requests must be a whole number of at least 1 (got ${JSON.stringify(options.requests)})`;
  if (!isWhole(options.windowSeconds)) return `quota.windowSeconds must be a whole number of at least 1 (got ${JSON.stringify(options.windowSeconds)})`;
  if (options.headers !== undefined && !HEADER_STYLES.includes(options.headers)) {
    return `quota.headers must be one of ${HEADER_STYLES.join(', ')} (got ${JSON.stringify(options.headers)})`;
  }
  return undefined;
}

/** `REQUESTS:SECONDS` as given to --quota; throws a TypeError saying the form. */
export function parseQuotaSpec(text: string): { requests: number; windowSeconds: number } {
  const match = /^(\d{1,9}):(\d{1,10})$/.exec(text.trim());
  const requests = Number(match?.[1]);
  const windowSeconds = Number(match?.[2]);
  if (!match || requests < 1 || windowSeconds < 1) {
    throw new TypeError(`--quota takes REQUESTS:SECONDS, whole numbers of at least 1, such as 5000:86400 (got "${text}").`);
  }
  return { requests, windowSeconds };
}

export class Quota {
  readonly requests: number;
  readonly windowSeconds: number;
  readonly headerStyle: QuotaHeaderStyle;
  /** The 429's message. */
  readonly refusal = 'The request quota is used up: wait as long as Retry-After says, then retry.';
  private windowStart: number | undefined;
  private used = 0;

  constructor(
    options: QuotaOptions,
    private readonly clock: () => number,
  ) {
    const problem = checkQuotaOptions(options);
    if (problem) throw new TypeError(`Invalid quota: ${problem}.`);
    this.requests = options.requests;
    this.windowSeconds = options.windowSeconds;
    this.headerStyle = options.headers ?? 'ratelimit';
  }

  /** Counts one request against the window, when any is left. */
  take(): QuotaDecision {
    const now = this.clock();
    const windowMs = this.windowSeconds * 1000;
    if (this.windowStart === undefined || now >= this.windowStart + windowMs) {
      this.windowStart = now;
      this.used = 0;
    }
    const allowed = this.used < this.requests;
    if (allowed) this.used += 1;
    return {
      allowed,
      remaining: this.requests - this.used,
      retryAfterSeconds: Math.max(1, Math.ceil((this.windowStart + windowMs - now) / 1000)),
    };
  }

  headers(decision: QuotaDecision): Record<string, string> {
    switch (this.headerStyle) {
      case 'ratelimit':
        return {
          'ratelimit-policy': `"quota";q=${this.requests};w=${this.windowSeconds}`,
          ratelimit: `"quota";r=${decision.remaining};t=${decision.retryAfterSeconds}`,
        };
      case 'x-ratelimit':
        return {
          'x-ratelimit-limit': String(this.requests),
          'x-ratelimit-remaining': String(decision.remaining),
          'x-ratelimit-reset': String(Math.ceil(this.clock() / 1000) + decision.retryAfterSeconds),
        };
    }
  }
}
