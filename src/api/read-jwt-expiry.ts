/**
 * When a JWT expires, read from its payload without checking its signature: orgform only needs to
 * know when to fetch a fresh one (or to warn that it will run out), never whether to trust it.
 */

export interface JwtExpiry {
  /** Epoch milliseconds of `exp`. */
  expiresAt: number;
  /** Epoch milliseconds of `iat`, when present. */
  issuedAt?: number;
}

/** Longer than any sane JWT: not worth decoding. */
const MAX_TOKEN_LENGTH = 64 * 1024;

/** The `exp` (and `iat`) of a JWS-compact JWT, or undefined for anything else (an API key, an encrypted JWT). */
export function readJwtExpiry(token: string): JwtExpiry | undefined {
  if (token.length > MAX_TOKEN_LENGTH) return undefined;
  const parts = token.split('.');
  if (parts.length !== 3) return undefined;
  const payload = parts[1]!;
  if (!/^[A-Za-z0-9_-]+={0,2}$/.test(payload)) return undefined;
  let claims: unknown;
  try {
    claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  if (typeof claims !== 'object' || claims === null || Array.isArray(claims)) return undefined;
  const { exp, iat } = claims as { exp?: unknown; iat?: unknown };
  // NumericDate: seconds since the epoch, possibly fractional (RFC 7519 §2).
  if (typeof exp !== 'number' || !Number.isFinite(exp) || exp <= 0) return undefined;
  const expiry: JwtExpiry = { expiresAt: exp * 1000 };
  if (typeof iat === 'number' && Number.isFinite(iat) && iat > 0 && iat <= exp) expiry.issuedAt = iat * 1000;
  return expiry;
}
