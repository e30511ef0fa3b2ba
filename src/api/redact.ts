/**
 * Removes secrets from text before it goes into an error. Errors are redacted where they are
 * made (see http.ts), so that nothing later can leak what was never stored.
 */
export function redactSecrets(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) {
    if (secret.length < 4) continue;
    out = out.split(secret).join('[REDACTED]');
    const encoded = encodeURIComponent(secret);
    if (encoded !== secret) out = out.split(encoded).join('[REDACTED]');
  }
  // Authorization headers and bearer strings, whatever the secret list holds.
  return out.replace(/(authorization["']?\s*[:=]\s*["']?)(bearer\s+)?[^\s"',}]+/gi, '$1[REDACTED]')
    .replace(/\bbearer\s+[A-Za-z0-9._~+/=-]{4,}/gi, 'Bearer [REDACTED]')
    .replace(/(bearerToken=)[^;\s"']+/g, '$1[REDACTED]');
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
