import { describe, expect, it } from 'vitest';
import { MAX_PROGRESS_INTERVAL_MS, PROGRESS_INTERVAL_MS, progressInterval } from '../../../../src/commands/apply/views/progress-lines-display.js';

describe('progressInterval', () => {
  it('is the base interval at first, then a twentieth of the time elapsed, at most a minute', () => {
    expect(progressInterval(0)).toBe(PROGRESS_INTERVAL_MS);
    expect(progressInterval(100_000)).toBe(5_000);
    expect(progressInterval(400_000)).toBe(20_000);
    expect(progressInterval(10 * 3_600_000)).toBe(MAX_PROGRESS_INTERVAL_MS);
  });

  it('never goes below a base interval longer than the cap', () => {
    expect(progressInterval(0, 120_000)).toBe(120_000);
    expect(progressInterval(10 * 3_600_000, 120_000)).toBe(120_000);
  });

  it('keeps an hour-long apply to about a hundred progress lines, where a fixed 5 s would print 720', () => {
    let lines = 0;
    for (let t = progressInterval(0); t <= 3_600_000; t += progressInterval(t)) lines += 1;
    expect(lines).toBeGreaterThan(60);
    expect(lines).toBeLessThan(130);
  });
});
