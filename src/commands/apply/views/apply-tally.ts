/**
 * The running counts a progress display shows, kept from the apply's events alone (so that every
 * display counts the same way, and none needs the flow's state).
 */
import type { ApplyEvent } from '../../../executor/events.js';

export interface ApplyTally {
  /** Changes finished, whatever their outcome. */
  done: number;
  failed: number;
  skipped: number;
  stale: number;
  retries: number;
}

export function emptyTally(): ApplyTally {
  return { done: 0, failed: 0, skipped: 0, stale: 0, retries: 0 };
}

/** Counts one event into `tally`. */
export function countEvent(tally: ApplyTally, event: ApplyEvent): void {
  if (event.type === 'change-retry') tally.retries += 1;
  if (event.type !== 'change-end') return;
  tally.done += 1;
  if (event.outcome === 'failed') tally.failed += 1;
  if (event.outcome === 'skipped') tally.skipped += 1;
  if (event.outcome === 'stale') tally.stale += 1;
}
