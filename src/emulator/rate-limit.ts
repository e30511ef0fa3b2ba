/**
 * A token bucket over all service requests (admin endpoints are exempt): `rps` tokens a second up
 * to `burst`; a request without a token answers 429. Optionally every answer carries the
 * remaining quota, as the IETF draft headers (draft-ietf-httpapi-ratelimit-headers-09) or the
 * common X-RateLimit-* ones. Time comes from an injectable clock (milliseconds).
 */

export type RateLimitHeaderStyle = 'none' | 'ratelimit' | 'x-ratelimit';

export interface RateLimitOptions {
  /** Tokens added per second, a whole number of at least 1. */
  rps: number;
  /** Bucket size; default max(1, ceil(rps / 4)). */
  burst?: number;
  /** Headers on every answer; default none. */
  headers?: RateLimitHeaderStyle;
}

export interface RateLimitDecision {
  allowed: boolean;
  /** Whole tokens left after this request. */
  remaining: number;
  /** Seconds until a token is available, exactly (above 0); only meaningful when not allowed. Written rounded up. */
  retryAfterSeconds: number;
  /** Seconds until the bucket is full again, rounded up. */
  resetSeconds: number;
}

const HEADER_STYLES: readonly RateLimitHeaderStyle[] = ['none', 'ratelimit', 'x-ratelimit'];
// Float slack, so that 4 rps over 250 ms gives a whole token.
const EPSILON = 1e-9;

/** Undefined when the options are well-formed, else what is wrong. */
export function checkRateLimitOptions(options: RateLimitOptions): string | undefined {
  const isWhole = (v: unknown) => typeof v === 'number' && Number.isSafeInteger(v) && v >= 1;
  if (!isWhole(options.rps)) return `rateLimit.rps must be a whole number of at least 1 (got ${JSON.stringify(options.rps)})`;
  if (options.burst !== undefined && !isWhole(options.burst)) {
    return `rateLimit.burst must be a whole number of at least 1 (got ${JSON.stringify(options.burst)})`;
  }
  if (options.headers !== undefined && !HEADER_STYLES.includes(options.headers)) {
    return `rateLimit.headers must be one of ${HEADER_STYLES.join(', ')} (got ${JSON.stringify(options.headers)})`;
  }
  return undefined;
}

/** `RPS[:BURST]` as given to --rate-limit; throws a TypeError saying the form. */
export function parseRateLimitSpec(text: string): { rps: number; burst?: number } {
  const match = /^(\d{1,9})(?::(\d{1,9}))?$/.exec(text.trim());
  const rps = Number(match?.[1]);
  const burst = match?.[2] === undefined ? undefined : Number(match[2]);
  if (!match || rps < 1 || (burst !== undefined && burst < 1)) {
    throw new TypeError(`--rate-limit takes RPS or RPS:BURST, whole numbers of at least 1 (got "${text}").`);
  }
  return burst === undefined ? { rps } : { rps, burst };
}

export class TokenBucket {
  readonly rps: number;
  readonly burst: number;
  readonly headerStyle: RateLimitHeaderStyle;
  /** The 429's message. */
  readonly refusal = 'Too many requests: wait as long as Retry-After says, then retry.';
  private tokens: number;
  private last: number;

  constructor(
    options: RateLimitOptions,
    private readonly clock: () => number,
  ) {
    const problem = checkRateLimitOptions(options);
    if (problem) throw new TypeError(`Invalid rate limit: ${problem}.`);
    this.rps = options.rps;
    this.burst = options.burst ?? Math.max(1, Math.ceil(options.rps / 4));
    this.headerStyle = options.headers ?? 'none';
    this.tokens = this.burst;
    this.last = clock();
  }

  /** Takes a token for one request, when there is one. */
  take(): RateLimitDecision {
    const now = this.clock();
    if (now > this.last) {
      this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) * this.rps) / 1000);
      this.last = now;
    }
    const allowed = this.tokens >= 1 - EPSILON;
    if (allowed) this.tokens = Math.max(0, this.tokens - 1);
    const remaining = Math.floor(this.tokens + EPSILON);
    return {
      allowed,
      remaining,
      retryAfterSeconds: Math.max(0.001, (1 - this.tokens) / this.rps),
      resetSeconds: Math.max(0, Math.ceil((this.burst - this.tokens) / this.rps - EPSILON)),
    };
  }

  /** The headers every answer carries in the configured style (none: no headers). */
  headers(decision: RateLimitDecision): Record<string, string> {
    switch (this.headerStyle) {
      case 'ratelimit':
        return {
          'ratelimit-policy': `"default";q=${this.rps};w=1`,
          ratelimit: `"default";r=${decision.remaining};t=${decision.resetSeconds}`,
        };
      case 'x-ratelimit':
        return {
          'x-ratelimit-limit': String(this.rps),
          'x-ratelimit-remaining': String(decision.remaining),
          'x-ratelimit-reset': String(decision.resetSeconds),
        };
      case 'none':
        return {};
    }
  }
}
