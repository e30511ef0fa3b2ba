/**
 * Runs the apply engine with the view the output calls for: NDJSON events, a live line on a
 * terminal, or in a log one line per completed change (up to COMPACT_THRESHOLD changes) or, beyond,
 * a progress line every few seconds and each failure as it happens; then the summary.
 */
import type { OrganisationsClient } from '../api/client.js';
import type { RetryEvent } from '../api/dispatcher.js';
import type { RateEvent } from '../api/rate-limiter.js';
import type { ApplyEvent, ApplySummary } from '../apply/events.js';
import type { Plan } from '../plan/types.js';
import type { Journal } from '../state/journal.js';
import type { CliIO } from './io.js';
import type { PipelineOutput } from './pipeline-output.js';
import { PROGRESS_INTERVAL_MS, progressInterval } from './progress-interval.js';
import { ThroughputWindow } from './throughput-window.js';

/** Where the client's retry and rate events go; the apply view sets the listeners. */
export interface RetryRelay {
  listener?: (event: RetryEvent) => void;
  rate?: (event: RateEvent) => void;
}

export interface ApplyRunContext {
  format: 'text' | 'json';
  parallelism: number;
  io: CliIO;
  client: OrganisationsClient;
  journal: Journal;
  service: string;
  color: boolean;
  retries?: RetryRelay;
  /** First step of apply's re-reads after an accept (ORGFORM_RETRY_BASE_MS). */
  backoffBaseMs?: number;
  /** In GitHub Actions, the per-change lines are folded in a group and the summary guarded. */
  pipeline?: Pick<PipelineOutput, 'openSection' | 'closeSection' | 'guard'>;
  /** A log of more changes than this shows progress lines, not a line per change; default COMPACT_THRESHOLD. */
  compactAbove?: number;
  /** The first interval between progress lines in a log (ORGFORM_PROGRESS_INTERVAL_MS); default 5 s. */
  progressIntervalMs?: number;
  /**
   * The client's current request-rate cap (requests/s), if its rate limiter has one, shown in the
   * log's progress line; undefined while nothing limits it.
   */
  requestRate?: () => number | undefined;
  /** Aborted when the run cannot go on (only 429s for too long, the token command failed): nothing new starts. */
  stop?: AbortSignal;
}

export async function runApplyWithProgress(plan: Plan, ctx: ApplyRunContext): Promise<ApplySummary> {
  const { applyPlan } = await import('../apply/apply-plan.js');
  const view = await import('../render/render-apply.js');
  const { io } = ctx;
  const flags = { format: ctx.format, parallelism: ctx.parallelism };
  const live = flags.format === 'text' && io.stdout.isTTY === true;
  // A log (not a terminal, not NDJSON): its per-change lines go in one folded section.
  const section = flags.format === 'text' && !live ? ctx.pipeline : undefined;
  // A long apply in a log: progress lines and failures, not one line per change (which no one reads
  // and CI log viewers choke on); retries, skips and not-started changes are counted, not listed.
  const { COMPACT_THRESHOLD } = await import('../render/compact-threshold.js');
  const progressLog = flags.format === 'text' && !live && plan.changes.length > (ctx.compactAbove ?? COMPACT_THRESHOLD);
  const progressView = progressLog ? await import('../render/format-log-progress.js') : undefined;
  let sectionOpen = false;
  const closeSection = () => {
    if (sectionOpen && section) io.stdout.write(section.closeSection());
    sectionOpen = false;
  };
  let done = 0;
  let failed = 0;
  let skipped = 0;
  let retried = 0;
  const started = io.now();
  const total = plan.changes.length;
  const baseIntervalMs = ctx.progressIntervalMs ?? PROGRESS_INTERVAL_MS;
  const throughput = new ThroughputWindow(started);
  const writeProgressLine = () => {
    if (!progressView) return;
    const now = io.now();
    const cap = ctx.requestRate?.();
    const line = progressView.formatLogProgress({
      done,
      total,
      failed,
      skipped,
      retries: retried,
      elapsedMs: now - started,
      changesPerSecond: throughput.rate(now, done),
      ...(cap === undefined ? {} : { requestRateCap: cap }),
    });
    io.stdout.write(line + '\n');
  };
  // A chain of timeouts rather than an interval: each wait depends on the time elapsed so far.
  let progressTimer: ReturnType<typeof setTimeout> | undefined;
  const scheduleProgress = () => {
    progressTimer = setTimeout(() => {
      writeProgressLine();
      scheduleProgress();
    }, progressInterval(io.now() - started, baseIntervalMs));
    // Never what keeps the process alive: the requests in flight do that.
    progressTimer.unref();
  };
  const onEvent = (event: ApplyEvent) => {
    if (flags.format === 'json') {
      io.stdout.write(view.formatApplyEventJson(event) + '\n');
      return;
    }
    if (event.type === 'change-end') {
      done += 1;
      if (event.outcome === 'failed') failed += 1;
      if (event.outcome === 'skipped') skipped += 1;
    }
    if (live) {
      if ((event.type === 'change-end' && event.outcome === 'failed') || event.type === 'rate') {
        io.stdout.write(`\r\x1b[2K${view.formatApplyLine(event) ?? ''}\n`);
      }
      if (event.type === 'change-end' || event.type === 'apply-start' || event.type === 'rate') io.stdout.write(`\r\x1b[2K${liveLine()}`);
      if (event.type === 'apply-end') io.stdout.write('\r\x1b[2K');
      if (event.type === 'interrupted') io.stdout.write(`\r\x1b[2K${view.formatApplyLine(event) ?? ''}\n`);
      return;
    }
    if (event.type === 'apply-start' && section) {
      io.stdout.write(section.openSection(`Applying ${total} ${total === 1 ? 'change' : 'changes'}`));
      sectionOpen = true;
    }
    if (progressView) {
      if (event.type === 'apply-start') {
        io.stdout.write(progressView.formatLogProgressIntro({ total, parallelism: flags.parallelism, everyMs: baseIntervalMs }) + '\n');
        scheduleProgress();
      }
      if (event.type === 'change-end') throughput.record(event.at, done);
      if (event.type === 'change-retry') retried += 1;
      // Each failure in full, as it happens, and an interrupt: the lines a reader of the log looks for.
      // (The progress line shows the rate the limiter holds the run to; only its giving up gets a line.)
      if ((event.type === 'change-end' && event.outcome === 'failed') || event.type === 'interrupted' || (event.type === 'rate' && event.reason === 'stalled')) {
        const line = view.formatApplyLine(event);
        if (line !== undefined) io.stdout.write(line + '\n');
      }
      if (event.type === 'apply-end') {
        clearTimeout(progressTimer);
        closeSection();
      }
      return;
    }
    const line = view.formatApplyLine(event);
    if (line !== undefined) io.stdout.write(line + '\n');
    if (event.type === 'apply-end') closeSection();
  };
  // Only bulk applies need it; a handful of changes never comes near the ceiling.
  const governor = plan.changes.length >= 1000 ? (await import('./memory-governor.js')).startMemoryGovernor() : undefined;
  // The live line keeps its elapsed time moving while changes wait on the service, and shows the
  // rate (or the pause) whenever the rate limiter is what holds them back.
  function liveLine(): string {
    const status = ctx.client.rateStatus();
    const heldBack = status.waiting > 0 || status.pausedMs > 0;
    const held = heldBack ? { pausedMs: status.pausedMs, ...(status.rps === undefined ? {} : { rps: status.rps }) } : undefined;
    return view.formatProgress({ done, total, failed, elapsedMs: io.now() - started, ...(held === undefined ? {} : { held }) });
  }
  const ticker = live ? setInterval(() => io.stdout.write(`\r\x1b[2K${liveLine()}`), 500) : undefined;
  ticker?.unref();
  if (ctx.retries) {
    ctx.retries.listener = (retry) => {
      if (retry.label === undefined) return;
      const { requestId: _requestId, label, ...rest } = retry;
      onEvent({ type: 'change-retry', address: label, ...rest, at: io.now() });
    };
    ctx.retries.rate = (rate) => onEvent({ type: 'rate', at: io.now(), reason: rate.reason, pausedMs: rate.pausedMs, waiting: rate.waiting, ...(rate.rps === undefined ? {} : { rps: rate.rps }) });
  }
  let summary: ApplySummary;
  try {
    summary = await applyPlan(plan.changes, {
      client: ctx.client,
      journal: ctx.journal,
      service: ctx.service,
      parallelism: flags.parallelism,
      signal: ctx.stop ? AbortSignal.any([io.signal, ctx.stop]) : io.signal,
      onEvent,
      now: io.now,
      ...(ctx.backoffBaseMs === undefined ? {} : { backoffBaseMs: ctx.backoffBaseMs }),
    });
  } finally {
    if (ctx.retries) {
      ctx.retries.listener = undefined;
      ctx.retries.rate = undefined;
    }
    governor?.stop();
    if (ticker) clearInterval(ticker);
    clearTimeout(progressTimer);
    // Also when the engine failed half-way: a section left open would swallow the rest of the log.
    closeSection();
  }
  if (flags.format === 'text') {
    const text = view.formatApplySummary(summary, { color: ctx.color });
    io.stdout.write(section ? section.guard(text) : text);
  }
  return summary;
}
