import { describe, expect, it } from 'vitest';
import { readJwtExpiry } from '../../src/api/read-jwt-expiry.js';
import { redactSecrets } from '../../src/redact.js';
import { commandTokenSource, fixedTokenSource } from '../../src/api/token-source.js';
import { TokenCommandError } from '../../src/errors.js';

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
const jwt = (claims: Record<string, unknown>) => `${b64({ alg: 'RS256', typ: 'JWT' })}.${b64(claims)}.c2lnbmF0dXJl`;

/** A command stand-in: hands out tok-1, tok-2… after a turn of the event loop, counting its runs. */
function counter(make: (n: number) => string = (n) => `tok-${n}-abcdef`) {
  const state = { runs: 0 };
  const obtain = async () => {
    state.runs += 1;
    const n = state.runs;
    await new Promise((resolve) => setTimeout(resolve, 5));
    return make(n);
  };
  return { state, obtain };
}

describe('readJwtExpiry', () => {
  it.each([
    ['a JWT with exp and iat', jwt({ sub: 'ada', iat: 1_700_000_000, exp: 1_700_003_600 }), { expiresAt: 1_700_003_600_000, issuedAt: 1_700_000_000_000 }],
    ['a JWT with a fractional exp', jwt({ exp: 1_700_000_000.5 }), { expiresAt: 1_700_000_000_500 }],
    ['an unsigned JWT (alg none, as the emulator issues)', `${b64({ alg: 'none' })}.${b64({ exp: 2_000_000_000 })}.`, { expiresAt: 2_000_000_000_000 }],
    ['a JWT without exp', jwt({ sub: 'ada' }), undefined],
    ['a JWT whose exp is a string', jwt({ exp: '1700000000' }), undefined],
    ['an API key', 'demo-token', undefined],
    ['three parts that are not base64url JSON', 'a.b!c.d', undefined],
    ['an encrypted JWT (five parts)', 'a.b.c.d.e', undefined],
    ['a payload that is JSON but not an object', `x.${b64([1, 2])}.y`, undefined],
  ])('reads %s', (_name, token, expected) => {
    expect(readJwtExpiry(token)).toEqual(expected);
  });
});

describe('token sources', () => {
  it('a fixed token is never refreshed', async () => {
    const source = fixedTokenSource('fixed-token-1234');
    expect(await source.current()).toBe('fixed-token-1234');
    expect(await source.refresh('fixed-token-1234')).toBeUndefined();
    expect(source.secrets).toEqual(['fixed-token-1234']);
  });

  it('runs the command once for many requests refused at once with the same token', async () => {
    const { state, obtain } = counter();
    const source = commandTokenSource({ obtain });
    const first = await source.current();
    expect(first).toBe('tok-1-abcdef');
    const fresh = await Promise.all(Array.from({ length: 16 }, () => source.refresh(first)));
    expect(new Set(fresh)).toEqual(new Set(['tok-2-abcdef']));
    expect(state.runs).toBe(2);
    // A 401 that arrives after the refresh, for the old token, gets the new one without a run.
    expect(await source.refresh(first)).toBe('tok-2-abcdef');
    expect(state.runs).toBe(2);
    // Refused again with the new token: one more run.
    expect(await source.refresh('tok-2-abcdef')).toBe('tok-3-abcdef');
    expect(state.runs).toBe(3);
  });

  it('replaces a JWT shortly before it expires, without waiting for a 401', async () => {
    let now = 1_700_000_000_000;
    const { state, obtain } = counter((n) => jwt({ n, iat: now / 1000, exp: now / 1000 + 3600 }));
    const source = commandTokenSource({ obtain, now: () => now });
    const first = await source.current();
    now += 3540_000 - 1;
    expect(await source.current()).toBe(first);
    now += 1;
    // 60 s before exp: replaced.
    const second = await source.current();
    expect(second).not.toBe(first);
    expect(state.runs).toBe(2);
  });

  it('replaces a short-lived JWT a quarter of its lifetime early, and a command that hands back the same one is not run again for it', async () => {
    let now = 1_700_000_000_000;
    const token = jwt({ iat: now / 1000, exp: now / 1000 + 20 });
    const { state, obtain } = counter(() => token);
    const source = commandTokenSource({ obtain, now: () => now });
    await source.current();
    now += 14_999;
    await source.current();
    expect(state.runs).toBe(1);
    now += 1;
    await source.current();
    await source.current();
    expect(state.runs).toBe(2);
  });

  it('fails every later call the same way once the command failed, without running it again', async () => {
    let runs = 0;
    const source = commandTokenSource({
      obtain: async () => {
        runs += 1;
        if (runs === 1) return 'good-token-1';
        throw new TokenCommandError('The token command failed with exit status 3.', { exitStatus: 3 });
      },
    });
    await source.current();
    await expect(source.refresh('good-token-1')).rejects.toMatchObject({ code: 'TOKEN_COMMAND_FAILED', exitStatus: 3 });
    await expect(source.refresh('good-token-1')).rejects.toBeInstanceOf(TokenCommandError);
    await expect(source.current()).rejects.toBeInstanceOf(TokenCommandError);
    expect(runs).toBe(2);
  });

  it('keeps every token it handed out among the secrets, so that errors redact old and new tokens alike', async () => {
    const { obtain } = counter();
    const source = commandTokenSource({ obtain });
    const secrets = source.secrets;
    const one = await source.current();
    const two = await source.refresh(one);
    // The same array, grown: whoever holds it redacts tokens handed out after they took it.
    expect(source.secrets).toBe(secrets);
    expect(redactSecrets(`refused ${one}, then ${two}`, secrets)).toBe('refused [REDACTED], then [REDACTED]');
  });
});
