import { describe, expect, it } from 'vitest';
import { ASSUMED_RPS, tokenExpiryWarning } from '../../../../src/commands/apply/views/token-expiry-warning.js';

const NOW = Date.parse('2026-11-21T10:00:00Z');
const MIN = 60_000;

describe('tokenExpiryWarning', () => {
  it.each([
    ['ample time: 100 changes at 40/s take about 4 s', { expiresAt: NOW + 60 * MIN, changes: 100, rps: ASSUMED_RPS }, undefined],
    ['exactly enough', { expiresAt: NOW + 150_000, changes: 4000, rps: 40 }, undefined],
    [
      '100,000 changes at 40/s against an hour-long token',
      { expiresAt: NOW + 60 * MIN, changes: 100_000, rps: 40 },
      'Warning: the token (a JWT) expires at 2026-11-21T11:00:00Z, in 1 h 0 min, but this apply of 100,000 changes may take about 1 h 3 min (about 150,000 requests at up to 40 a second): what is left then will be refused (HTTP 401) and fail. Set ORGFORM_TOKEN_COMMAND (or --token-command) to a command that prints a fresh token, and orgform runs it whenever the token runs out.',
    ],
    [
      'a token already expired',
      { expiresAt: NOW - 1000, changes: 1, rps: 40 },
      'Warning: the token (a JWT) expired at 2026-11-21T09:59:59Z: the service will refuse it (HTTP 401). Set ORGFORM_TOKEN_COMMAND (or --token-command) to a command that prints a fresh token, and orgform runs it whenever the token runs out.',
    ],
  ])('%s', (_name, input, expected) => {
    expect(tokenExpiryWarning({ ...input, now: NOW })).toBe(expected);
  });

  it('counts one change as 1.5 requests at the rate given', () => {
    expect(tokenExpiryWarning({ expiresAt: NOW + 10_000, now: NOW, changes: 10, rps: 1 })).toContain('about 15 s (about 15 requests at up to 1 a second)');
    expect(tokenExpiryWarning({ expiresAt: NOW + 16_000, now: NOW, changes: 10, rps: 1 })).toBeUndefined();
  });
});
