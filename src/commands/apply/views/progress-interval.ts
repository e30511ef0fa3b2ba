/**
 * How long until the next progress line of a long apply in a log: `baseMs` at first, then a
 * twentieth of the time elapsed, at most a minute. A fixed interval would make the log's length
 * grow with the apply's duration (a rate-limited 30,000-change apply at 10/s: 600 lines at 5 s);
 * growing with elapsed time keeps it to about a hundred lines for an hour, while a line a minute
 * still shows a stuck job is alive and keeps CI's no-output timeouts away.
 */
export const PROGRESS_INTERVAL_MS = 5_000;
export const MAX_PROGRESS_INTERVAL_MS = 60_000;

export function progressInterval(elapsedMs: number, baseMs: number = PROGRESS_INTERVAL_MS): number {
  return Math.min(Math.max(baseMs, elapsedMs / 20), Math.max(baseMs, MAX_PROGRESS_INTERVAL_MS));
}
