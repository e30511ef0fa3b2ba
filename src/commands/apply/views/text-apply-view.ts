/**
 * Apply for people: the plan to review, the budget, the question's outcome, the changes as they run
 * and the summary. On a terminal the changes run under a live line; in a log (CI) a short apply
 * prints a line per change and a long one (past COMPACT_THRESHOLD) progress lines, both folded
 * under `Applying N changes` in GitHub Actions. An apply with nothing to do shows only its plan's
 * `No changes.` (or says so, for a saved plan, which is not shown).
 */
import type { ApplySummary } from '../../../executor/events.js';
import { CANCELLED_TEXT, lockTakenOverText, type ApplyView, type RateGauge } from '../view.js';
import { PLAIN_FRAME, type LogFrame, type TextSink } from '../../../text/log-frame.js';
import { describeChangeBudget, NO_CHANGES, planHeadline } from '../../../text/plan/plan-headline.js';
import { startLiveLine } from './live-line-display.js';
import { applyingTitle, type DisplayContext, type ProgressDisplay } from './progress-display.js';
import { startProgressLines } from './progress-lines-display.js';
import { formatApplyLine, formatApplySummary } from './render-apply.js';
import { renderPlanForReview } from '../../../text/plan/render-plan-for-review.js';
import { COMPACT_THRESHOLD } from '../../../text/plan/render-text.js';
import { formatWait } from '../../../text/format-wait.js';

export interface TextApplyViewOptions {
  /** Standard output: the plan, the changes, the summary. A terminal gets the live line. */
  out: TextSink;
  /** Standard error: warnings and notices. */
  err: TextSink;
  color: boolean;
  now: () => number;
  frame?: LogFrame;
  /** A log of more changes than this shows a digest and progress lines; default COMPACT_THRESHOLD. */
  compactAbove?: number;
  /** The first interval between progress lines in a log (ORGFORM_PROGRESS_INTERVAL_MS). */
  progressIntervalMs?: number;
}

export function createTextApplyView(options: TextApplyViewOptions): ApplyView {
  const { out, err, color } = options;
  const frame = options.frame ?? PLAIN_FRAME;
  const live = out.isTTY === true;
  const compactAbove = options.compactAbove ?? COMPACT_THRESHOLD;
  let planShown = false;
  let meter: RateGauge | undefined;
  let display: ProgressDisplay | undefined;

  return {
    lockTakenOver(statePath, pid) {
      err.write(lockTakenOverText(statePath, pid));
    },
    async planMade(plan) {
      planShown = true;
      out.write(frame.fold(planHeadline(plan), renderPlanForReview(plan, { tty: live, color, compactAbove })));
    },
    budgetChecked(budget) {
      out.write(describeChangeBudget(budget));
    },
    warn(message) {
      err.write(`${message}\n`);
    },
    cancelled() {
      out.write(CANCELLED_TEXT);
    },
    applyStarting(m) {
      meter = m;
    },
    event(event) {
      if (event.type === 'wait') {
        const line = formatWait(event);
        // Under the live line or among the change lines while changes run; before and after, a notice.
        if (display !== undefined) display.note(line);
        else err.write(`${frame.guard(line)}\n`);
        return;
      }
      if (event.type === 'apply-start' && event.total > 0) {
        const ctx = { out, frame, now: options.now, meter: meter ?? NO_METER, total: event.total, parallelism: event.parallelism, startedAt: event.at };
        if (live) display = startLiveLine(ctx);
        else if (event.total > compactAbove) display = startProgressLines(ctx, options.progressIntervalMs === undefined ? {} : { intervalMs: options.progressIntervalMs });
        else display = startChangeLines(ctx);
      }
      display?.event(event);
    },
    applyStopped() {
      display?.stop();
      display = undefined;
    },
    async applyReported(summary: ApplySummary) {
      if (summary.total === 0) {
        // A fresh plan already said so; a saved one was not shown.
        if (!planShown) out.write(`${NO_CHANGES}\n`);
        return;
      }
      const text = formatApplySummary(summary, { color });
      out.write(live ? text : frame.guard(text));
    },
  };
}

/**
 * A short apply in a log: one line per finished change, retry, rate change and interrupt, folded
 * (in GitHub Actions) under `Applying N changes`.
 */

export function startChangeLines(ctx: DisplayContext): ProgressDisplay {
  ctx.out.write(ctx.frame.open(applyingTitle(ctx.total)));
  let open = true;
  const close = () => {
    if (open) ctx.out.write(ctx.frame.close());
    open = false;
  };
  return {
    event(event) {
      const line = formatApplyLine(event);
      if (line !== undefined) ctx.out.write(line + '\n');
      if (event.type === 'apply-end') close();
    },
    note(line) {
      ctx.out.write(`${ctx.frame.guard(line)}\n`);
    },
    // Also when the apply failed half-way: a fold left open would swallow the rest of the log.
    stop: close,
  };
}

/** For a view used without applyStarting (tests, or a client that cannot say): nothing holds requests back. */
const NO_METER: RateGauge = { rateStatus: () => ({ rps: undefined, pausedMs: 0, waiting: 0, throttled: 0 }) };
