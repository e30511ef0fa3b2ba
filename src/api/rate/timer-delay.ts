/**
 * A delay Node's timers can keep. Node turns a delay of 2^31 ms or more (about 24.8 days) into
 * 1 ms, with a warning: a pause announced that far ahead would wake at once, again and again,
 * spinning the CPU. Every timer orgform sets goes through this; a caller that must wait longer
 * wakes early and sleeps again.
 */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** `ms` as a whole number of milliseconds from 0 to MAX_TIMER_MS (NaN as 0). */
export function timerDelay(ms: number): number {
  if (!(ms > 0)) return 0;
  return Math.min(MAX_TIMER_MS, Math.ceil(ms));
}
