/**
 * A long apply in a log (CI): progress lines and failures, not one line per change (which no one
 * reads and CI log viewers choke on). A line every few seconds at first, less often as the apply
 * goes on (progress-interval.ts); each failure or stale change, an interrupt and the rate limiter giving up as they
 * happen; retries, skips and not-started changes counted, not listed.
 */
import { countEvent, emptyTally } from './apply-tally.js';
import { formatLogProgress, formatLogProgressIntro } from './format-log-progress.js';
import type { DisplayContext, ProgressDisplay } from './progress-display.js';
import { applyingTitle } from './progress-display.js';
import { PROGRESS_INTERVAL_MS, progressInterval } from './progress-interval.js';
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
