import { describe, expect, it } from 'vitest';
import { formatDuration } from '../../src/text/format-duration.js';

describe('formatDuration, precise', () => {
  it('is milliseconds below a second and tenths of seconds from there', () => {
    expect(formatDuration(120.4)).toBe('120 ms');
    expect(formatDuration(999)).toBe('999 ms');
    expect(formatDuration(1_000)).toBe('1.0 s');
    expect(formatDuration(75_340)).toBe('75.3 s');
  });
});

describe('formatDuration, rounded', () => {
  it('is seconds, then minutes, then hours and minutes, each rounded', () => {
    expect(formatDuration(-5, 'rounded')).toBe('0 s');
    expect(formatDuration(44_600, 'rounded')).toBe('45 s');
    expect(formatDuration(720_000, 'rounded')).toBe('12 min');
    expect(formatDuration(7_500_000, 'rounded')).toBe('2 h 5 min');
  });
});

describe('formatDuration, clock', () => {
  it('rounds down to whole seconds and switches to minutes and hours', () => {
    expect(formatDuration(0, 'clock')).toBe('0s');
    expect(formatDuration(999, 'clock')).toBe('0s');
    expect(formatDuration(59_999, 'clock')).toBe('59s');
    expect(formatDuration(60_000, 'clock')).toBe('1m 0s');
    expect(formatDuration(720_000, 'clock')).toBe('12m 0s');
    expect(formatDuration(3_599_000, 'clock')).toBe('59m 59s');
    expect(formatDuration(3_600_000, 'clock')).toBe('1h 0m');
    expect(formatDuration(7_500_000, 'clock')).toBe('2h 5m');
    expect(formatDuration(-5, 'clock')).toBe('0s');
  });
});
