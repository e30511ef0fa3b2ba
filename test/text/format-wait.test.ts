import { describe, expect, it } from 'vitest';
import type { WaitEvent } from '../../src/api/wait-event.js';
import { formatWait } from '../../src/text/format-wait.js';

const AT = Date.UTC(2026, 2, 1, 23, 58, 0);
const wait = (event: Omit<WaitEvent, 'at'>): string => formatWait({ ...event, at: AT });

describe('formatWait', () => {
  it('says until when in UTC, and in how long, for every reason', () => {
    expect(wait({ reason: 'rate-limit', what: 'the first page of the listing (all pages)', until: AT + 200_000, waiting: 1 })).toBe(
      'Waiting until 00:01:20 UTC (in 3 min): the service answered 429 (too many requests), and every request waits; the first page of the listing (all pages) waits.'.replace('00:01:20 UTC', '2026-03-02 00:01:20 UTC'),
    );
    expect(wait({ reason: 'quota', what: 'page 2 of the listing (all pages)', until: AT + 45_000, waiting: 12 })).toBe(
      "Waiting until 23:58:45 UTC (in 45 s): the service's request quota is used up until then; 12 requests wait, page 2 of the listing (all pages) among them.",
    );
    expect(wait({ reason: 'pacing', what: 'the read of organisation "a"', until: AT + 15_000, rps: 0.2, waiting: 3 })).toBe(
      'Waiting: requests go at 0.2 a second, the rate the service allows (or --max-rps); 3 requests wait, the read of organisation "a" among them, the last until about 23:58:15 UTC (in 15 s).',
    );
    expect(wait({ reason: 'retry', what: 'page 2 of the listing (all pages)', until: AT + 8_000, after: 'HTTP 503' })).toBe('Waiting until 23:58:08 UTC (in 8 s) to send page 2 of the listing (all pages) again, after HTTP 503.');
    expect(wait({ reason: 'answer', what: 'page 2 of the listing (all pages)', until: AT + 58_000, via: 'http://[REDACTED]@proxy:3128 (HTTPS_PROXY)' })).toBe(
      'Waiting for the answer to page 2 of the listing (all pages), through the proxy http://[REDACTED]@proxy:3128 (HTTPS_PROXY): none yet; orgform gives up at 23:58:58 UTC (in 58 s).',
    );
    expect(wait({ reason: 'token-command', what: 'the token command (ORGFORM_TOKEN_COMMAND)', until: AT + 58_000, setting: 'ORGFORM_TOKEN_COMMAND_TIMEOUT_MS' })).toBe(
      'Waiting for the token command (ORGFORM_TOKEN_COMMAND) to print a token: none yet; orgform gives up at 23:58:58 UTC (in 58 s), ORGFORM_TOKEN_COMMAND_TIMEOUT_MS.',
    );
    expect(wait({ reason: 'state', what: 'the lock on the state at pg://db/orgform', until: AT + 28_000, setting: 'ORGFORM_STATE_TIMEOUT_MS' })).toBe(
      'Waiting for the lock on the state at pg://db/orgform: no answer yet; orgform gives up at 23:58:28 UTC (in 28 s), ORGFORM_STATE_TIMEOUT_MS.',
    );
  });

  it('keeps what it quotes on one line, whatever it holds', () => {
    const line = wait({ reason: 'answer', what: 'the read of organisation "a\nb\u001b[2J"', until: AT + 1_000 });
    expect(line).not.toMatch(/[\n\u001b]/);
  });
});

describe('formatWait for an answer that has begun', () => {
  it('says the answer is not whole yet, not that none has come', () => {
    expect(wait({ reason: 'answer', what: 'page 2 of the listing (all pages)', until: AT + 58_000, begun: true })).toBe(
      'Waiting for the rest of the answer to page 2 of the listing (all pages): it has begun, but is not whole yet; orgform gives up at 23:58:58 UTC (in 58 s).',
    );
  });
});
