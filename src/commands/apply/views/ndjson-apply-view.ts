/**
 * Apply for machines (`--format json`): one JSON object per event on standard output, whatever the
 * size, the zero-change apply included (apply_start, then apply_end with the whole summary), so
 * that pipelines read every apply alike. People's text goes to standard error: the plan and the
 * question when it asks, warnings and notices.
 */
import { CANCELLED_TEXT, lockTakenOverText, type ApplyView } from '../view.js';
import { PLAIN_FRAME, type LogFrame, type TextSink } from '../../../text/log-frame.js';
import { formatApplyEventJson, formatRefusalJson } from './render-apply-json.js';
import { refusalError } from './refusal-error.js';
import { renderPlanForReview } from '../../../text/plan/render-plan-for-review.js';
import { planHeadline } from '../../../text/plan/plan-headline.js';

export interface NdjsonApplyViewOptions {
  /** Standard output: the events only. */
  out: TextSink;
  /** Standard error. */
  err: TextSink;
  /** Show the plan for review on `err` (when apply will ask), or not (--auto-approve). */
  review: boolean;
  color: boolean;
  frame?: LogFrame;
  /** The saved plan applied, named in a refusal's message as the error names it. */
  planFile?: string;
}

export function createNdjsonApplyView(options: NdjsonApplyViewOptions): ApplyView {
  const { out, err } = options;
  const frame = options.frame ?? PLAIN_FRAME;
  // The client's retries and rate changes are events of the changes: told only while they run.
  let running = false;
  return {
    lockTakenOver(statePath, pid) {
      err.write(lockTakenOverText(statePath, pid));
    },
    async planMade(plan) {
      if (!options.review) return;
      err.write(frame.fold(planHeadline(plan), renderPlanForReview(plan, { tty: err.isTTY === true, color: options.color })));
    },
    async planRefused(_plan, hazard) {
      // The refusal as data, with the words of the error that follows on standard error.
      out.write(formatRefusalJson(hazard, refusalError(hazard, options.planFile)) + '\n');
    },
    budgetChecked() {
      // The events carry no budget line: the refusal, when over, is the error.
    },
    warn(message) {
      err.write(`${message}\n`);
    },
    cancelled() {
      err.write(CANCELLED_TEXT);
    },
    applyStarting() {
      running = true;
    },
    event(event) {
      // A wait is an event like the others, at any point of the run (before apply_start too).
      if (!running && (event.type === 'change-retry' || event.type === 'rate')) return;
      out.write(formatApplyEventJson(event) + '\n');
    },
    applyStopped() {
      running = false;
    },
    async applyReported() {},
  };
}
