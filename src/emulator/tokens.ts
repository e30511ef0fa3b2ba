/**
 * Which user a presented token stands for, and whether it has expired. The seed users' tokens
 * are the store's; more tokens for the same users are issued here (POST /__emulator/tokens),
 * shaped as unsigned JWTs. With a lifetime, every token expires after so many service requests
 * or seconds (seed tokens count from the start); without one, tokens never expire.
 */
import { randomBytes } from 'node:crypto';
import type { EmulatorStore } from './store.js';

export interface TokenLifetime {
  /** Service requests a token may authenticate; the next one answers 401 token_expired. */
  requests?: number;
  /** Seconds from issue (seed tokens: from the start) after which a token answers 401 token_expired. */
  seconds?: number;
}

export type TokenCheck = { kind: 'valid'; userToken: string } | { kind: 'unknown' } | { kind: 'expired' };

interface TokenRecord {
  /** The store's token of the user this token stands for. */
  userToken: string;
  issuedAt: number;
  uses: number;
}

/** Undefined when the lifetime is well-formed, else what is wrong. */
export function checkTokenLifetime(lifetime: TokenLifetime): string | undefined {
  for (const key of ['requests', 'seconds'] as const) {
    const value = lifetime[key];
    if (value !== undefined && !(typeof value === 'number' && Number.isSafeInteger(value) && value >= 1)) {
      return `tokenLifetime.${key} must be a whole number of at least 1 (got ${JSON.stringify(value)})`;
    }
  }
  return undefined;
}

export class TokenBook {
  private readonly records = new Map<string, TokenRecord>();
  private readonly startedAt: number;
  private readonly lifetime: TokenLifetime | undefined;

  constructor(
    private readonly store: EmulatorStore,
    lifetime: TokenLifetime | undefined,
    private readonly clock: () => number,
  ) {
    if (lifetime) {
      const problem = checkTokenLifetime(lifetime);
      if (problem) throw new TypeError(`Invalid token lifetime: ${problem}.`);
    }
    this.lifetime = lifetime && (lifetime.requests !== undefined || lifetime.seconds !== undefined) ? lifetime : undefined;
    this.startedAt = clock();
  }

  /** Checks a presented token and, when valid, counts one use of it. */
  check(token: string | undefined): TokenCheck {
    if (token === undefined) return { kind: 'unknown' };
    let record = this.records.get(token);
    if (record === undefined) {
      if (!this.store.users.has(token)) return { kind: 'unknown' };
      if (this.lifetime === undefined) return { kind: 'valid', userToken: token };
      record = { userToken: token, issuedAt: this.startedAt, uses: 0 };
      this.records.set(token, record);
    }
    if (!this.store.users.has(record.userToken)) return { kind: 'unknown' };
    if (this.lifetime !== undefined) {
      const { requests, seconds } = this.lifetime;
      if (requests !== undefined && record.uses >= requests) return { kind: 'expired' };
      if (seconds !== undefined && this.clock() - record.issuedAt >= seconds * 1000) return { kind: 'expired' };
      record.uses += 1;
    }
    return { kind: 'valid', userToken: record.userToken };
  }

  /**
   * A fresh token for the user named by `user` (a token of theirs, or their e-mail address,
   * case-insensitively; default the first user), or undefined when there is no such user.
   */
  issue(user?: string): string | undefined {
    const userToken = this.findUser(user);
    if (userToken === undefined) return undefined;
    const email = this.store.users.get(userToken)?.email ?? '';
    const now = this.clock();
    const iat = Math.floor(now / 1000);
    const payload: Record<string, unknown> = { sub: email, iat };
    if (this.lifetime?.seconds !== undefined) payload.exp = iat + this.lifetime.seconds;
    payload.jti = randomBytes(6).toString('hex');
    const token = [
      encode({ alg: 'none', typ: 'JWT' }),
      encode(payload),
      randomBytes(9).toString('base64url'),
    ].join('.');
    this.records.set(token, { userToken, issuedAt: now, uses: 0 });
    return token;
  }

  private findUser(user: string | undefined): string | undefined {
    if (user === undefined) return this.store.users.keys().next().value;
    const issued = this.records.get(user);
    if (issued) return this.store.users.has(issued.userToken) ? issued.userToken : undefined;
    if (this.store.users.has(user)) return user;
    const email = user.toLowerCase();
    for (const record of this.store.users.values()) if (record.email.toLowerCase() === email) return record.token;
    return undefined;
  }
}

function encode(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}
