/**
 * A long apply in a log (CI): progress lines and failures, not one line per change (which no one
 * reads and CI log viewers choke on). A line every few seconds at first, less often as the apply
 * goes on (progressInterval below); each failure or stale change, an interrupt and the rate limiter giving up as they
 * happen; retries, skips and not-started changes counted, not listed.
 */
import { formatLogProgress, formatLogProgressIntro } from './format-log-progress.js';
import { applyingTitle, countEvent, emptyTally, type DisplayContext, type ProgressDisplay } from './progress-display.js';
import { formatApplyLine } from './render-apply.js';
import { ThroughputWindow } from './throughput-window.js';

export function startProgressLines(ctx: DisplayContext, options: { intervalMs?: number } = {}): ProgressDisplay {
  const baseMs = options.intervalMs ?? PROGRESS_INTERVAL_MS;
  const tally = emptyTally();
  const throughput = new ThroughputWindow(ctx.startedAt);
  const writeProgress = () => {
    const now = ctx.now();
    // The rate the client holds itself to: why the apply goes no faster.
    const cap = ctx.meter.rateStatus().rps;
    const line = formatLogProgress({
      ...tally,
      total: ctx.total,
      elapsedMs: now - ctx.startedAt,
      changesPerSecond: throughput.rate(now, tally.done),
      ...(cap === undefined ? {} : { requestRateCap: cap }),
    });
    ctx.out.write(line + '\n');
  };
  // A chain of timeouts rather than an interval: each wait depends on the time elapsed so far.
  let timer: ReturnType<typeof setTimeout> | undefined;
  const schedule = () => {
    timer = setTimeout(() => {
      writeProgress();
      schedule();
    }, progressInterval(ctx.now() - ctx.startedAt, baseMs));
    timer.unref();
  };
  let open = true;
  const stop = () => {
    clearTimeout(timer);
    if (open) ctx.out.write(ctx.frame.close());
    open = false;
  };

  ctx.out.write(ctx.frame.open(applyingTitle(ctx.total)));
  ctx.out.write(formatLogProgressIntro({ total: ctx.total, parallelism: ctx.parallelism, everyMs: baseMs }) + '\n');
  schedule();
  return {
    event(event) {
      countEvent(tally, event);
      if (event.type === 'change-end') throughput.record(event.at, tally.done);
      // The lines a reader of the log looks for. (The progress line shows the rate the limiter
      // holds the run to; only its giving up gets a line.)
      if ((event.type === 'change-end' && (event.outcome === 'failed' || event.outcome === 'stale')) || event.type === 'interrupted' || (event.type === 'rate' && event.reason === 'stalled')) {
        const line = formatApplyLine(event);
        if (line !== undefined) ctx.out.write(line + '\n');
      }
      if (event.type === 'apply-end') stop();
    },
    note(line) {
      ctx.out.write(`${ctx.frame.guard(line)}\n`);
    },
    stop,
  };
}

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
