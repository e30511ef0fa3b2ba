/**
 * How the text view shows changes as they run, once it knows how many there are: the common shape
 * of the live line (live-line-display.ts), one line per change (text-apply-view.ts) and progress
 * lines (progress-lines-display.ts), and the running counts they show, kept from the apply's events
 * alone (so that every display counts the same way, and none needs the flow's state).
 */
import type { ApplyEvent } from '../../../executor/events.js';
import type { RateGauge } from '../view.js';
import { plural } from '../../../text/format-value.js';
import type { LogFrame, TextSink } from '../../../text/log-frame.js';

export interface ProgressDisplay {
  event(event: ApplyEvent): void;
  /** A line of its own, now (a wait), already worded; outside text in it is terminal-safe. */
  note(line: string): void;
  /** Stops timers and closes what is open; may be called more than once. */
  stop(): void;
}

export interface DisplayContext {
  out: TextSink;
  frame: LogFrame;
  now: () => number;
  meter: RateGauge;
  total: number;
  parallelism: number;
  /** When the apply started (its apply-start event). */
  startedAt: number;
}

/** `Applying 5 changes`: the title of a log's fold around the apply's lines. */
export function applyingTitle(total: number): string {
  return `Applying ${plural(total, 'change')}`;
}

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
