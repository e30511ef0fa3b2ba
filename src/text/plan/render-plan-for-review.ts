/**
 * The plan as apply shows it for review: whole on a terminal, and a digest in a long log (counts,
 * the first changes, where to see them all): there it is the apply's record, not its review, and
 * the whole would bury the apply's own output. Text only, so that a text apply loads neither the
 * JSON nor the Markdown renderer.
 */
import type { Plan } from '../../plan/types.js';
import { COMPACT_THRESHOLD } from './compact-threshold.js';
import { renderPlanDigest } from './render-plan-digest.js';
import { renderText } from './render-text.js';

export interface ReviewOptions {
  /** Whether the text goes to a terminal (the whole plan) or a log (a digest past the threshold). */
  tty: boolean;
  color: boolean;
  compactAbove?: number;
}

export function renderPlanForReview(plan: Plan, options: ReviewOptions): string {
  if (!options.tty && plan.changes.length > (options.compactAbove ?? COMPACT_THRESHOLD)) return renderPlanDigest(plan, { color: false });
  // Whether to colour is the caller's to say (a terminal, or FORCE_COLOR in a CI log).
  return renderText(plan, { color: options.color });
}
