import { describe, expect, it } from 'vitest';
import type { ApplyEvent } from '../../../../src/executor/events.js';
import { formatApplyLine, formatProgress } from '../../../../src/commands/apply/views/render-apply.js';
import { formatApplyEventJson } from '../../../../src/commands/apply/views/render-apply-json.js';

const rate = (e: Partial<Extract<ApplyEvent, { type: 'rate' }>>): ApplyEvent => ({ type: 'rate', at: 7, reason: 'throttled', pausedMs: 0, waiting: 0, ...e });

describe('the apply views of the shared rate', () => {
  it.each([
    [rate({ pausedMs: 1000, rps: 35.24 }), '⏸ rate limited (HTTP 429): every request paused 1.0 s, then 35 requests/s'],
    [rate({ pausedMs: 0, rps: 2.5 }), '⏸ rate limited (HTTP 429): then 2.5 requests/s'],
    [rate({ reason: 'announced', rps: 49 }), '⏱ the service announced its limit: pacing at 49 requests/s'],
    [rate({ reason: 'quota-empty', pausedMs: 30_000 }), "⏸ the service's quota is used up: every request paused 30.0 s"],
    [rate({ reason: 'stalled' }), '✗ only 429s came back for too long: no new changes will start'],
  ])('a log line for %j', (event, line) => {
    expect(formatApplyLine(event)).toBe(line);
  });

  it('an NDJSON event with snake_case keys and wire strings', () => {
    expect(formatApplyEventJson(rate({ reason: 'quota-empty', rps: 12.3456, pausedMs: 999.6, waiting: 4 }))).toBe(
      '{"type":"rate","at":7,"reason":"quota_empty","rps":12.35,"paused_ms":1000,"waiting":4}',
    );
    expect(JSON.parse(formatApplyEventJson(rate({}))).rps).toBeUndefined();
  });

  it('the live line shows the rate, or the pause, only while the limiter holds requests back', () => {
    const base = { done: 12, total: 100, failed: 0, elapsedMs: 3400 };
    expect(formatProgress(base)).toBe('[  12/100 ] 3.4 s');
    expect(formatProgress({ ...base, held: { rps: 47.4, pausedMs: 0 } })).toBe('[  12/100 ] 3.4 s · 47 requests/s');
    expect(formatProgress({ ...base, held: { rps: 47.4, pausedMs: 800 } })).toBe('[  12/100 ] 3.4 s · paused 800 ms (HTTP 429)');
  });
});
