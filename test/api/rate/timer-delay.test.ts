import { describe, expect, it } from 'vitest';
import { MAX_TIMER_MS, timerDelay } from '../../../src/api/rate/timer-delay.js';

describe('timerDelay', () => {
  it('keeps every delay below 2^31 ms, where Node would fire the timer at once instead', () => {
    expect(MAX_TIMER_MS).toBe(2_147_483_647);
    expect(timerDelay(3_000_000_000)).toBe(MAX_TIMER_MS);
    expect(timerDelay(Infinity)).toBe(MAX_TIMER_MS);
    expect(timerDelay(2 ** 31)).toBe(MAX_TIMER_MS);
  });

  it('rounds up to whole milliseconds, and reads a negative or unreadable delay as none', () => {
    expect(timerDelay(0.2)).toBe(1);
    expect(timerDelay(1500)).toBe(1500);
    expect(timerDelay(-5)).toBe(0);
    expect(timerDelay(Number.NaN)).toBe(0);
  });
});
