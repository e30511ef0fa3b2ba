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
