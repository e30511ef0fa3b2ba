import { describe, expect, it } from 'vitest';
import { formatLogProgress, formatLogProgressIntro, formatRate } from '../../../../src/commands/apply/views/format-log-progress.js';

const base = { done: 1200, total: 30000, failed: 0, skipped: 0, retries: 0, elapsedMs: 30_000 };

describe('formatLogProgress', () => {
  it('shows done/total, the measured rate, the ETA, failures, skips, stale changes and retries so far, and the time elapsed', () => {
    expect(formatLogProgress({ ...base, failed: 2, skipped: 1, stale: 3, retries: 35, changesPerSecond: 40 })).toBe(
      '[  1200/30000 ] 40/s · ETA 12m 0s · 2 failed · 1 skipped · 3 stale · 35 retries · elapsed 30s',
    );
  });

  it('leaves out what is zero or not measured yet, and the ETA when nothing is moving or nothing is left', () => {
    expect(formatLogProgress(base)).toBe('[  1200/30000 ] elapsed 30s');
    expect(formatLogProgress({ ...base, changesPerSecond: 0, retries: 1 })).toBe('[  1200/30000 ] 0.0/s · 1 retry · elapsed 30s');
    expect(formatLogProgress({ ...base, done: 30000, changesPerSecond: 812 })).toBe('[ 30000/30000 ] 812/s · elapsed 30s');
  });

  it('rounds the ETA up to the second, never promising too early', () => {
    expect(formatLogProgress({ ...base, done: 29_999, changesPerSecond: 40 })).toBe('[ 29999/30000 ] 40/s · ETA 1s · elapsed 30s');
    expect(formatLogProgress({ ...base, done: 29_900, changesPerSecond: 40 })).toBe('[ 29900/30000 ] 40/s · ETA 3s · elapsed 30s');
  });

  it('shows the request-rate cap of the client when it has one', () => {
    expect(formatLogProgress({ ...base, changesPerSecond: 24.6, requestRateCap: 25 })).toBe('[  1200/30000 ] 25/s · ETA 19m 31s · limited to 25 requests/s · elapsed 30s');
  });

  it('pads the count to the total, so that successive lines line up', () => {
    const a = formatLogProgress({ ...base, done: 5 });
    const b = formatLogProgress({ ...base, done: 29999 });
    expect(a.indexOf(']')).toBe(b.indexOf(']'));
  });
});

describe('formatRate', () => {
  it('keeps one decimal below 10 per second only', () => {
    expect(formatRate(0.25)).toBe('0.3');
    expect(formatRate(9.94)).toBe('9.9');
    expect(formatRate(10)).toBe('10');
    expect(formatRate(812.4)).toBe('812');
  });
});

describe('formatLogProgressIntro', () => {
  it('says why there is no line per change and where to get one', () => {
    expect(formatLogProgressIntro({ total: 30000, parallelism: 16, everyMs: 5000 })).toBe(
      'Applying 30000 changes, 16 at a time. Progress every 5s at first (less often later) and each failure as it happens; one line per change with --format json.',
    );
    expect(formatLogProgressIntro({ total: 300, parallelism: 10, everyMs: 50 })).toContain('every 50 ms at first');
  });
});
