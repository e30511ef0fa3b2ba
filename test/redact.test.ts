import { describe, expect, it } from 'vitest';
import { redactAddress, redactSecrets, sanitizeCause } from '../src/redact.js';

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
    expect(redactSecrets('see https://ada:hunter2@example.com/x?access_token=abc&page=2', [])).toBe('see https://[REDACTED]@example.com/x?access_token=[REDACTED]&page=[REDACTED]');
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

describe('redactAddress', () => {
  it('hides user information and every query value but state, schema and sslmode, and drops the fragment', () => {
    expect(redactAddress('postgres://ada:p%40ss@db/ops?password=x&sslpassword=y&state=s&sslmode=verify-full&schema=o')).toBe('postgres://[REDACTED]@db/ops?password=[REDACTED]&sslpassword=[REDACTED]&state=s&sslmode=verify-full&schema=o');
    expect(redactAddress('https://host/state?sig=S3cret&sv=1')).toBe('https://host/state?sig=[REDACTED]&sv=[REDACTED]');
    expect(redactAddress('https://ghs_token@github.example/x?flag')).toBe('https://[REDACTED]@github.example/x?[REDACTED]');
    expect(redactAddress('s3://ada:pw@bucket/x#the-rest-of-it')).toBe('s3://[REDACTED]@bucket/x');
  });

  it('keeps a path without a query as it is, and redacts the query of one that has it (a relative redirect)', () => {
    expect(redactAddress('relative/path')).toBe('relative/path');
    expect(redactAddress('/api/v4/state?private_token=glpat-abc&state=x#frag')).toBe('/api/v4/state?private_token=[REDACTED]&state=x');
  });

  it('shows only the scheme of an address it cannot parse (a password with an unescaped "#" splits it)', () => {
    expect(redactAddress('postgres://ada:12#Secret@db.example/ops')).toBe('postgres://…');
  });

  it('does the same to addresses in free text, leaving the text around them as it was', () => {
    expect(redactSecrets('moved to https://evil.example/steal?code=abc&state=ok#access_token=zz. Sorry', [])).toBe('moved to https://evil.example/steal?code=[REDACTED]&state=ok#access_token=[REDACTED] Sorry');
    expect(redactSecrets('connect postgres://ada:12#Secret@db.example/ops failed', [])).toBe('connect postgres://[REDACTED]@db.example/ops failed');
    expect(redactSecrets('see https://example.com. or /x?private_token=glpat-1&x-amz-signature=s', [])).toBe('see https://example.com. or /x?private_token=[REDACTED]&x-amz-signature=[REDACTED]');
  });
});
