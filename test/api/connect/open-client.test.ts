import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ENV_RANGES, envInt, openClient, retryBaseMs, useColor, type NumericEnv } from '../../../src/api/connect/open-client.js';
import { MAX_MAX_RPS, MIN_MAX_RPS } from '../../../src/api/rate/parse-max-rps.js';
import type { CliIO } from '../../../src/io.js';
import { UsageError } from '../../../src/errors.js';

const io = (env: Record<string, string>, tty = false) => ({ env, cwd: '/', now: () => Date.parse('2026-11-23T10:00:00Z'), stdout: { write: () => true, isTTY: tty } }) as unknown as CliIO;
const SERVICE = { ORGFORM_BASE_URL: 'http://127.0.0.1:9', ORGFORM_TOKEN: 'a-token' };

/** An unsigned JWT with this expiry (seconds since the epoch). */
const jwt = (exp: number) => ['{"alg":"none"}', JSON.stringify({ exp })].map((part) => Buffer.from(part).toString('base64url')).join('.') + '.';

describe('useColor', () => {
  it('colours a terminal only, unless NO_COLOR or --no-color', () => {
    expect(useColor({}, io({}, true))).toBe(true);
    expect(useColor({}, io({}, false))).toBe(false);
    expect(useColor({ color: false }, io({}, true))).toBe(false);
    expect(useColor({}, io({ NO_COLOR: '1' }, true))).toBe(false);
    expect(useColor({}, io({ NO_COLOR: '' }, true))).toBe(true);
  });

  it('colours a log when FORCE_COLOR says so, as Node reads it, unless --no-color', () => {
    expect(useColor({}, io({ FORCE_COLOR: '1' }, false))).toBe(true);
    expect(useColor({}, io({ FORCE_COLOR: '' }, false))).toBe(true);
    expect(useColor({}, io({ FORCE_COLOR: '3', NO_COLOR: '1' }, false))).toBe(true);
    expect(useColor({}, io({ FORCE_COLOR: '0' }, true))).toBe(false);
    expect(useColor({}, io({ FORCE_COLOR: 'false' }, true))).toBe(false);
    expect(useColor({ color: false }, io({ FORCE_COLOR: '1' }, true))).toBe(false);
  });

  it('does not colour a dumb terminal, and asks the stream it is given', () => {
    expect(useColor({}, io({ TERM: 'dumb' }, true))).toBe(false);
    expect(useColor({}, io({}, true), { write: () => true, isTTY: false })).toBe(false);
  });
});

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

describe('envInt', () => {
  const ranges = Object.entries(ENV_RANGES) as Array<[NumericEnv, { min: number; max: number }]>;

  it.each(ranges)('refuses %s outside its range, naming the variable, the range and the value', (name, { min, max }) => {
    for (const bad of [String(min - 1), String(max + 1), '2147483648', '1e3', '-1']) {
      expect(() => envInt({ [name]: bad }, name)).toThrow(new UsageError(`${name} must be a whole number from ${min} to ${max} (got "${bad}").`));
    }
    expect(envInt({ [name]: String(min) }, name)).toBe(min);
    expect(envInt({ [name]: String(max) }, name)).toBe(max);
  });

  it('keeps every millisecond setting below 2^31 ms, which a timer cannot hold', () => {
    for (const [name, { max }] of ranges) if (name.endsWith('_MS')) expect(max).toBeLessThan(2 ** 31);
  });

  it('docs/cli.md documents every numeric variable, ORGFORM_MAX_RPS included, with the range it is checked against', () => {
    const page = readFileSync(new URL('../../../docs/cli.md', import.meta.url), 'utf8');
    const row = (name: string) => page.split('\n').find((line) => line.startsWith('|') && line.includes(`\`${name}\``))?.replaceAll(',', '');
    for (const [name, { min, max }] of ranges) expect(row(name), name).toContain(`${min} to ${max}`);
    expect(row('ORGFORM_MAX_RPS')).toContain(`${MIN_MAX_RPS} to ${MAX_MAX_RPS}`);
  });
});

describe('retryBaseMs', () => {
  it('reads ORGFORM_RETRY_BASE_MS, unset when empty', () => {
    expect(retryBaseMs(io({ ORGFORM_RETRY_BASE_MS: '25' }))).toBe(25);
    expect(retryBaseMs(io({ ORGFORM_RETRY_BASE_MS: '' }))).toBeUndefined();
    expect(() => retryBaseMs(io({ ORGFORM_RETRY_BASE_MS: '0' }))).toThrow('ORGFORM_RETRY_BASE_MS must be a whole number from 1 to 10000 (got "0").');
  });
});
