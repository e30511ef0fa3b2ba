/**
 * Removes secrets from text before it goes into an error. Errors are redacted where they are
 * made (see http.ts), so that nothing later can leak what was never stored.
 *
 * Secrets, not words: every token handed out is removed wherever it stands, and beyond those only
 * what has the shape of a credential: a JWT, the value of an Authorization header or a
 * `bearerToken` cookie, a credential after `Bearer`, a secret in a URL. "A valid bearer token is
 * required." comes out as it went in.
 */

/** A value after `Bearer ` (or in an Authorization header): the token68 alphabet of RFC 7235. */
const TOKEN68 = '[A-Za-z0-9._~+/=-]+';

/**
 * Whether a word after `Bearer` or `Authorization:` is a credential rather than a word of a sentence:
 * a digit, a character words do not have (`_~+/=`, a dot inside), or 16 characters and more.
 */
function looksLikeCredential(value: string): boolean {
  const bare = value.replace(/[.,;:]+$/, '');
  // `realm=`, `error=invalid_token`: auth parameters (token68 has `=` only as trailing padding).
  if (/=[^=]/.test(bare) || /^[A-Za-z]+=$/.test(bare)) return false;
  return /\d/.test(bare) || /[_~+/=]/.test(bare) || /\.\w/.test(bare) || bare.length >= 16;
}

/** The credential part of `value` replaced, keeping a full stop or comma that ended a sentence. */
function redactValue(value: string): string {
  const trailing = /[.,;:]+$/.exec(value)?.[0] ?? '';
  return `[REDACTED]${trailing}`;
}

/** Query parameters that carry a credential in a URL. */
const URL_SECRET_PARAMS = 'access_token|id_token|refresh_token|token|api_key|apikey|key|password|passwd|secret|client_secret|signature|sig|auth|code';

export function redactSecrets(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) {
    if (secret.length < 4) continue;
    out = out.split(secret).join('[REDACTED]');
    const encoded = encodeURIComponent(secret);
    if (encoded !== secret) out = out.split(encoded).join('[REDACTED]');
  }
  return (
    out
      // A JWT wherever it stands: three base64url parts, the first two JSON objects (`eyJ`).
      .replace(/\beyJ[A-Za-z0-9_-]{4,}\.eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*/g, '[REDACTED]')
      // An Authorization header quoted as a value (a JSON dump of headers): whatever it holds.
      .replace(/(["']authorization["']\s*:\s*["'])[^"']*/gi, '$1[REDACTED]')
      // `Authorization: Basic X` as text: X, whatever it looks like; `Authorization: X`: X when it is a credential.
      .replace(new RegExp(`(authorization\\s*[:=]\\s*)((?:bearer|basic|token)\\s+)?(${TOKEN68})`, 'gi'), (all, head: string, scheme: string | undefined, value: string) =>
        scheme !== undefined || looksLikeCredential(value) ? `${head}${scheme ?? ''}${redactValue(value)}` : all,
      )
      .replace(new RegExp(`(\\bbearer\\s+)(${TOKEN68})`, 'gi'), (all, head: string, value: string) => (looksLikeCredential(value) ? `${head}${redactValue(value)}` : all))
      // The v2 endpoint's cookie.
      .replace(/(bearerToken=)[^;\s"']+/g, '$1[REDACTED]')
      // Secrets in URLs: user:password@ and credential query parameters.
      .replace(/(\b[a-z][a-z0-9+.-]*:\/\/)[^/\s:@]+:[^/\s@]+@/gi, '$1[REDACTED]@')
      .replace(new RegExp(`([?&;](?:${URL_SECRET_PARAMS})=)[^&#\\s"']+`, 'gi'), '$1[REDACTED]')
  );
}

/**
 * A copy of an underlying error that is safe to keep as a `cause`: its name, code and redacted
 * message only. The original may hold request options, headers or sockets.
 */
export function sanitizeCause(err: unknown, secrets: readonly string[]): Error | undefined {
  if (err === undefined || err === null) return undefined;
  const source = err as { name?: unknown; message?: unknown; code?: unknown; cause?: unknown };
  const message = typeof source.message === 'string' ? source.message : String(err);
  const safe = new Error(redactSecrets(message, secrets));
  safe.name = typeof source.name === 'string' ? source.name : 'Error';
  if (typeof source.code === 'string') (safe as Error & { code?: string }).code = source.code;
  // One level of cause is enough to explain "fetch failed"; deeper chains only add noise.
  if (source.cause !== undefined && source.cause !== err) {
    const inner = source.cause as { name?: unknown; message?: unknown; code?: unknown };
    const innerSafe = new Error(redactSecrets(typeof inner.message === 'string' ? inner.message : String(inner), secrets));
    innerSafe.name = typeof inner.name === 'string' ? inner.name : 'Error';
    if (typeof inner.code === 'string') (innerSafe as Error & { code?: string }).code = inner.code;
    (safe as Error & { cause?: unknown }).cause = innerSafe;
  }
  safe.stack = `${safe.name}: ${safe.message}`;
  return safe;
}
