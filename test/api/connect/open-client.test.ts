import { describe, expect, it } from 'vitest';
import { openClient } from '../../../src/api/connect/open-client.js';
import { readSettings } from '../../../src/cli/settings.js';

const WORLD = { cwd: '/', now: () => Date.parse('2026-11-23T10:00:00Z'), signal: new AbortController().signal };
/** The settings a connecting command reads from `env`. */
const settings = (env: Record<string, string>) => readSettings(env, {}, ['connection', 'client', 'network']);
const SERVICE = { ORGFORM_BASE_URL: 'http://127.0.0.1:9', ORGFORM_TOKEN: 'a-token' };

/** An unsigned JWT with this expiry (seconds since the epoch). */
const jwt = (exp: number) => ['{"alg":"none"}', JSON.stringify({ exp })].map((part) => Buffer.from(part).toString('base64url')).join('.') + '.';

describe('openClient', () => {
  it('opens a client for the service named, without sending anything', async () => {
    const client = await openClient({ ...settings(SERVICE), parallelism: 2 }, WORLD);
    expect(client.baseUrl.toString()).toBe('http://127.0.0.1:9/');
    await client.close();
  });

  it('tells when a fixed token is a JWT, and when it expires, never the token', async () => {
    const told: unknown[] = [];
    const client = await openClient(settings({ ...SERVICE, ORGFORM_TOKEN: jwt(1_800_000_000) }), WORLD, { onTokenExpiry: (expiry) => told.push(expiry) });
    await client.close();
    expect(told).toEqual([{ expiresAt: 1_800_000_000_000 }]);
  });
});
