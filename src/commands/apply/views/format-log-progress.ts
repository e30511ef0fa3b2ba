/**
 * The progress line of a long apply in a log (CI): `[  1200/30000 ] 40/s · ETA 12m 0s · 2 failed ·
 * 35 retries · elapsed 30s`, written every few seconds instead of one line per change. Pure: the
 * caller measures the rate and decides when to write.
 */
import { formatDuration } from '../../../text/format-duration.js';
import { plural } from '../../../text/format-value.js';

const clock = (ms: number): string => formatDuration(ms, 'clock');

export interface LogProgress {
  done: number;
  total: number;
  failed: number;
  /** Not attempted because a change they depend on failed. */
  skipped: number;
  /** Not written because they changed on the service since the plan (absent: none). */
  stale?: number;
  /** Retries (and waits after a 429) so far: counted here rather than printed one by one. */
  retries: number;
  elapsedMs: number;
  /** Changes completed per second over a recent window; undefined until there is a window to measure. */
  changesPerSecond?: number;
  /**
   * The request rate the client holds itself to right now (its rate limiter), when it reports one:
   * why the apply goes no faster.
   */
  requestRateCap?: number;
}

export function formatLogProgress(p: LogProgress): string {
  const total = String(p.total);
  const parts: string[] = [];
  if (p.changesPerSecond !== undefined) {
    parts.push(`${formatRate(p.changesPerSecond)}/s`);
    const left = p.total - p.done;
    // Rounded up to the second: an ETA should not be optimistic.
    if (left > 0 && p.changesPerSecond > 0) parts.push(`ETA ${clock(Math.ceil(left / p.changesPerSecond) * 1000)}`);
  }
  if (p.requestRateCap !== undefined) parts.push(`limited to ${formatRate(p.requestRateCap)} requests/s`);
  if (p.failed > 0) parts.push(`${p.failed} failed`);
  if (p.skipped > 0) parts.push(`${p.skipped} skipped`);
  if (p.stale !== undefined && p.stale > 0) parts.push(`${p.stale} stale`);
  if (p.retries > 0) parts.push(plural(p.retries, 'retry', 'retries'));
  parts.push(`elapsed ${clock(p.elapsedMs)}`);
  // The count padded to the total's width, so that successive lines line up in the log.
  return `[ ${String(p.done).padStart(total.length)}/${total} ] ${parts.join(' · ')}`;
}

/** `40`, `2.5`, `0.3`: a decimal only where it carries information. */
export function formatRate(perSecond: number): string {
  return perSecond >= 10 ? String(Math.round(perSecond)) : perSecond.toFixed(1);
}

/** The line that opens a long apply's log section: why the per-change lines are not there, and where they are. */
export function formatLogProgressIntro(state: { total: number; parallelism: number; everyMs: number }): string {
  const every = state.everyMs < 1000 ? `${Math.round(state.everyMs)} ms` : clock(state.everyMs);
  return `Applying ${plural(state.total, 'change')}, ${state.parallelism} at a time. Progress every ${every} at first (less often later) and each failure as it happens; one line per change with --format json.`;
}
