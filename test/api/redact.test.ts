import { describe, expect, it } from 'vitest';
import { redactSecrets, sanitizeCause } from '../../src/api/redact.js';

const token = 'canary-7f3a9c-token';

describe('redactSecrets', () => {
  it('removes the token wherever it stands', () => {
    expect(redactSecrets(`failed with ${token} inside`, [token])).toBe('failed with [REDACTED] inside');
  });
  it('removes a URL-encoded token', () => {
    expect(redactSecrets(`?t=${encodeURIComponent('a b/c+d==')}`, ['a b/c+d=='])).not.toContain('a%20b');
  });
  it('removes any Authorization header value and bearer string', () => {
    expect(redactSecrets('{"authorization":"Bearer abcdef123"}', [])).not.toContain('abcdef123');
    expect(redactSecrets('sent Bearer zzzz9999', [])).toBe('sent Bearer [REDACTED]');
    expect(redactSecrets('cookie: bearerToken=zzzz9999; x=1', [])).toBe('cookie: bearerToken=[REDACTED]; x=1');
  });
  it.each([
    'A valid bearer token is required.',
    'The bearer token has expired: get a fresh one.',
    'Send a Bearer credential in the Authorization header.',
    'Missing authorization: please sign in.',
    'Authorization: required, as Bearer token-based access.',
    'WWW-Authenticate: Bearer realm="api", error="invalid_token"',
  ])('leaves words alone: %j comes out unchanged', (text) => {
    expect(redactSecrets(text, [token])).toBe(text);
  });
  it('removes what has the shape of a credential, keeping the sentence around it', () => {
    const jwt = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhZGEifQ.c2lnbmF0dXJl';
    expect(redactSecrets(`refused ${jwt} at once`, [])).toBe('refused [REDACTED] at once');
    expect(redactSecrets('Bearer sk_live_abc is revoked.', [])).toBe('Bearer [REDACTED] is revoked.');
    expect(redactSecrets('token was bearer abcdefghijklmnopqrstuvwxyz.', [])).toBe('token was bearer [REDACTED].');
    expect(redactSecrets('Authorization: Basic dXNlcjpwYXNz', [])).toBe('Authorization: Basic [REDACTED]');
    expect(redactSecrets("{'Authorization': 'Bearer plainwords'}", [])).toBe("{'Authorization': '[REDACTED]'}");
    expect(redactSecrets('see https://ada:hunter2@example.com/x?access_token=abc&page=2', [])).toBe('see https://[REDACTED]@example.com/x?access_token=[REDACTED]&page=2');
  });
});

describe('sanitizeCause', () => {
  it('keeps the name, code and a redacted message, and drops everything else', () => {
    const original = Object.assign(new Error(`boom ${token}`), { code: 'ECONNRESET', headers: { authorization: `Bearer ${token}` } });
    const safe = sanitizeCause(original, [token])!;
    expect(safe.message).toBe('boom [REDACTED]');
    expect((safe as Error & { code?: string }).code).toBe('ECONNRESET');
    expect(JSON.stringify(Object.entries(safe))).not.toContain(token);
    expect(safe.stack).not.toContain(token);
  });
});
