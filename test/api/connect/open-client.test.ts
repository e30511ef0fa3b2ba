import { describe, expect, it } from 'vitest';
import { openClient, retryBaseMs } from '../../../src/api/connect/open-client.js';
import type { CliIO } from '../../../src/cli-io.js';
import { UsageError } from '../../../src/errors.js';

const io = (env: Record<string, string>, tty = false) => ({ env, cwd: '/', now: () => Date.parse('2026-11-23T10:00:00Z'), stdout: { write: () => true, isTTY: tty } }) as unknown as CliIO;
const SERVICE = { ORGFORM_BASE_URL: 'http://127.0.0.1:9', ORGFORM_TOKEN: 'a-token' };

/** An unsigned JWT with this expiry (seconds since the epoch). */
const jwt = (exp: number) => ['{"alg":"none"}', JSON.stringify({ exp })].map((part) => Buffer.from(part).toString('base64url')).join('.') + '.';

describe('openClient', () => {
  it('opens a client for the service named, without sending anything', async () => {
    const client = await openClient({ parallelism: 2 }, io(SERVICE));
    expect(client.baseUrl.toString()).toBe('http://127.0.0.1:9/');
    await client.close();
  });

  it('tells when a fixed token is a JWT, and when it expires, never the token', async () => {
    const told: unknown[] = [];
    const client = await openClient({}, io({ ...SERVICE, ORGFORM_TOKEN: jwt(1_800_000_000) }), { onTokenExpiry: (expiry) => told.push(expiry) });
    await client.close();
    expect(told).toEqual([{ expiresAt: 1_800_000_000_000 }]);
  });

  it('refuses a request budget from the environment that is not a whole number, before anything else', async () => {
    for (const [name, value] of [
      ['ORGFORM_MAX_ATTEMPTS', '0'],
      ['ORGFORM_REQUEST_TIMEOUT_MS', '99'],
      ['ORGFORM_RETRY_BASE_MS', 'fast'],
    ]) {
      await expect(openClient({}, io({ ...SERVICE, [name!]: value! }))).rejects.toThrow(UsageError);
    }
  });
});

describe('retryBaseMs', () => {
  it('reads ORGFORM_RETRY_BASE_MS, unset when empty', () => {
    expect(retryBaseMs(io({ ORGFORM_RETRY_BASE_MS: '25' }))).toBe(25);
    expect(retryBaseMs(io({ ORGFORM_RETRY_BASE_MS: '' }))).toBeUndefined();
    expect(() => retryBaseMs(io({ ORGFORM_RETRY_BASE_MS: '0' }))).toThrow('ORGFORM_RETRY_BASE_MS must be a whole number from 1 to 10000 (got "0").');
  });
});
