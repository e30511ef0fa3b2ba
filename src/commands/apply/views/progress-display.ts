/**
 * How the text view shows changes as they run, once it knows how many there are: the common shape
 * of the live line (live-line-display.ts), one line per change (change-lines-display.ts) and
 * progress lines (progress-lines-display.ts).
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
