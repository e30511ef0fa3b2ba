/**
 * Expiring tokens (by requests and by seconds, with an injected clock), fresh tokens from
 * POST /__emulator/tokens and Emulator.issueToken (the command that prints one: test/commands/emulator-token.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { startEmulator, type Emulator, type EmulatorOptions } from '../../src/emulator/server.js';
import { call, callJson, DEMO, ORG_API, orgPath, OTHER, useEmulator } from './emulator-test-kit.js';

const LIST = `${ORG_API}/organisations`;
const T0 = Date.UTC(2026, 0, 2, 3, 4, 5, 0);

async function withClock(options: EmulatorOptions) {
  let now = T0;
  const emulator = await useEmulator({ ...options, clock: () => now });
  return { emulator, advance: (ms: number) => (now += ms) };
}

async function expectExpired(emulator: Emulator, token: string, path = LIST) {
  const { status, body, response } = await callJson(emulator, path, { token });
  expect([status, body, response.headers.get('www-authenticate')]).toEqual([
    401,
    { code: 'token_expired', message: 'The bearer token has expired: get a fresh one.' },
    'Bearer error="invalid_token"',
  ]);
}

const issue = async (emulator: Emulator, body?: unknown) =>
  callJson<{ token: string; code?: string }>(emulator, '/__emulator/tokens', { method: 'POST', token: null, ...(body === undefined ? {} : { body }) });

const decode = (segment: string) => JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'));

describe('token lifetime by requests', () => {
  it('answers 401 token_expired once a token has been used for N service requests, per token', async () => {
    const emulator = await useEmulator({ tokenLifetime: { requests: 2 } });
    expect((await call(emulator, LIST)).status).toBe(200);
    expect((await call(emulator, orgPath('org_acme'))).status).toBe(200);
    await expectExpired(emulator, DEMO);
    await expectExpired(emulator, DEMO, orgPath('org_acme'));
    expect((await call(emulator, LIST, { token: OTHER })).status).toBe(200);
    const unknown = await callJson(emulator, LIST, { token: 'nobody' });
    expect([unknown.status, unknown.body.code, unknown.response.headers.get('www-authenticate')]).toEqual([401, 'unauthenticated', 'Bearer']);
  });

  it('counts only requests that reach authentication', async () => {
    const emulator = await useEmulator({ tokenLifetime: { requests: 1 } });
    expect((await call(emulator, '/nowhere')).status).toBe(404);
    emulator.faults.add({ fault: { kind: 'status', status: 503 } });
    expect((await call(emulator, LIST)).status).toBe(503);
    expect((await call(emulator, LIST)).status).toBe(200);
    await expectExpired(emulator, DEMO);
  });

  it('never expires tokens without the option', async () => {
    const emulator = await useEmulator();
    for (let i = 0; i < 20; i += 1) expect((await call(emulator, orgPath('org_acme'))).status).toBe(200);
  });
});

describe('token lifetime by seconds', () => {
  it('expires seed tokens that many seconds after the start, and an issued token that many seconds after its issue', async () => {
    const { emulator, advance } = await withClock({ tokenLifetime: { seconds: 60 } });
    advance(30_000);
    const fresh = emulator.issueToken();
    advance(29_999);
    expect((await call(emulator, LIST)).status).toBe(200);
    advance(1);
    await expectExpired(emulator, DEMO);
    await expectExpired(emulator, OTHER);
    expect((await call(emulator, LIST, { token: fresh })).status).toBe(200);
    advance(29_999);
    expect((await call(emulator, LIST, { token: fresh })).status).toBe(200);
    advance(1);
    await expectExpired(emulator, fresh);
  });

  it('refuses a lifetime that is not a whole number of at least 1', async () => {
    await expect(startEmulator({ tokenLifetime: { seconds: 0 } })).rejects.toThrow('Invalid token lifetime: tokenLifetime.seconds must be a whole number of at least 1 (got 0).');
    await expect(startEmulator({ tokenLifetime: { requests: 2.5 } })).rejects.toThrow(/tokenLifetime.requests must be a whole number/);
  });
});

describe('POST /__emulator/tokens', () => {
  it('issues a JWT-shaped token for the first user by default, with sub, iat and exp, that acts as that user', async () => {
    const { emulator } = await withClock({ tokenLifetime: { seconds: 300 } });
    const { status, body } = await issue(emulator);
    expect(status).toBe(200);
    const segments = body.token.split('.');
    expect(segments).toHaveLength(3);
    expect(decode(segments[0]!)).toEqual({ alg: 'none', typ: 'JWT' });
    expect(decode(segments[1]!)).toMatchObject({ sub: 'ada@acme.example', iat: T0 / 1000, exp: T0 / 1000 + 300 });
    expect(segments[2]).toMatch(/^[A-Za-z0-9_-]{8,}$/);
    const list = await callJson(emulator, LIST, { token: body.token });
    expect([list.status, list.body.totalCount]).toEqual([200, 5]);
    expect((await issue(emulator)).body.token).not.toBe(body.token);
  });

  it('has no exp without a lifetime in seconds', async () => {
    const { emulator } = await withClock({ tokenLifetime: { requests: 5 } });
    const payload = decode((await issue(emulator)).body.token.split('.')[1]!);
    expect(Object.keys(payload).sort()).toEqual(['iat', 'jti', 'sub']);
  });

  it('names the user by e-mail address (any case) or by a token of theirs, issued ones included', async () => {
    const emulator = await useEmulator();
    const byEmail = (await issue(emulator, { user: 'BOB@globex.example' })).body.token;
    expect((await callJson(emulator, LIST, { token: byEmail })).body.totalCount).toBe(2);
    const byToken = (await issue(emulator, { user: OTHER })).body.token;
    expect(decode(byToken.split('.')[1]!).sub).toBe('bob@globex.example');
    const byIssued = (await issue(emulator, { user: byToken })).body.token;
    expect((await callJson(emulator, orgPath('org_globex'), { token: byIssued })).status).toBe(200);
  });

  it('gives each token a fresh lifetime: an expired token names its user for a new one', async () => {
    const emulator = await useEmulator({ tokenLifetime: { requests: 1 } });
    expect((await call(emulator, LIST)).status).toBe(200);
    await expectExpired(emulator, DEMO);
    const fresh = (await issue(emulator, { user: DEMO })).body.token;
    expect((await call(emulator, LIST, { token: fresh })).status).toBe(200);
    await expectExpired(emulator, fresh);
  });

  it('answers 404 for an unknown user and 400 for a body that is not the expected JSON', async () => {
    const emulator = await useEmulator();
    const unknown = await issue(emulator, { user: 'carol@wonka.example' });
    expect([unknown.status, unknown.body.code]).toEqual([404, 'not_found']);
    expect((await issue(emulator, '{"user":')).status).toBe(400);
    expect((await issue(emulator, { user: 7 })).status).toBe(400);
    expect((await issue(emulator, [])).status).toBe(400);
    expect(() => emulator.issueToken('carol@wonka.example')).toThrow('No user with the token or e-mail address carol@wonka.example.');
  });

  it('is not a service request: not counted, not rate-limited, no token needed', async () => {
    const emulator = await useEmulator({ rateLimit: { rps: 1, burst: 1 } });
    for (let i = 0; i < 3; i += 1) expect((await issue(emulator)).status).toBe(200);
    expect(emulator.counters.total).toBe(0);
  });
});
