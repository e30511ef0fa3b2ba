/**
 * What apply's flow tells the people (or machines) watching it, and nothing more: the view
 * decides the words, the stream, colour, terminal codes and timing. Implementations: the text view
 * (a live line on a terminal, per-change or progress lines in a log; text-apply-view.ts) and NDJSON
 * (ndjson-apply-view.ts); the CLI wraps either for CI (annotations, the job summary).
 */
import type { RateStatus } from '../../api/rate/rate-gate.js';
import type { ApplyEvent, ApplySummary } from '../../executor/events.js';
import type { DesiredState } from '../../model/desired-state.js';
import type { ConfigProblem } from '../../model/config-problem.js';
import type { ChangeBudget, PlanHazard } from '../../plan/check-plan-safety.js';
import type { ApplicableChange, Plan } from '../../plan/types.js';
import type { EventSink } from '../../model/event-sink.js';
import { NOTHING_CHANGED } from '../../text/plan/plan-headline.js';

/** What a view may ask while changes run: how the client is being paced (for the live line and progress lines). */
export interface RateGauge {
  rateStatus(): RateStatus;
}

/**
 * What the transport tells of each request attempt (transport/attempts.ts, through ClientHooks.onAttempt),
 * first attempts and retries, reads and writes alike: when it went on the wire, and when it ended,
 * with the answer's status, or none for an attempt that ended without an answer (a network
 * failure, a timeout). Once one is told, the timeline counts requests instead of changes.
 */
export type AttemptEvent = { type: 'attempt-sent'; at: number } | { type: 'attempt-ended'; at: number; sentAt: number; status?: number };

/** What apply is about to run: its changes in plan order (apply lets each go as it ends: copy what is kept), and the service. */
export interface ApplyRun {
  changes: readonly ApplicableChange[];
  /** The service's base URL, as plans and the journal name it. */
  serviceKey: string;
}

export interface ApplyView extends EventSink<ApplyEvent> {
  /** The configuration has problems; the error that follows lists them (CI annotates them). */
  configRejected?(problems: readonly ConfigProblem[]): Promise<void>;
  /** A lock left by a process of this host that no longer runs was taken over. */
  lockTakenOver(statePath: string, pid: number): void;
  /** A fresh plan, to review before anything is written. (A saved plan was reviewed when it was made.) */
  planMade(plan: Plan): Promise<void>;
  /** The plan will not be applied; the refusal follows as an error. */
  planRefused?(plan: Plan, hazard: PlanHazard, desired: DesiredState): Promise<void>;
  /** The plan is within --max-changes and has changes to make. */
  budgetChecked(budget: ChangeBudget): void;
  /** Something to know before anything is written (a token that will expire part way). */
  warn(message: string): void;
  /** The answer was not yes. */
  cancelled(): void;
  /** Changes are about to run; `meter` may be read until applyStopped. */
  applyStarting(meter: RateGauge, run: ApplyRun): void;
  /**
   * Every event of the run, in order, from Connect to the end: applyPlan's, and the client's (a
   * retry of a change's request, a rate change, a wait of 2 s for the service, its rate limit, the
   * token command or the state). The view decides what to show, and when (retries and rate changes
   * only while changes run).
   */
  event(event: ApplyEvent): void;
  /**
   * Each request attempt as it goes on the wire and as it ends (the plan's reads included), for a
   * view that records the run over time; a view without it is not told (nothing is made per attempt).
   */
  attempt?(event: AttemptEvent): void;
  /** The apply is over, normally or not: stop timers, close what is open. */
  applyStopped(): void;
  /** The outcome, once the journal is written. */
  applyReported(summary: ApplySummary): Promise<void>;
}

/** The question on a terminal before a fresh plan is applied. */
export function confirmQuestion(changes: number): string {
  return `\nDo you want to perform these ${changes} changes?\n  Only 'yes' will be accepted to approve.\n\n  Enter a value: `;
}

/** Both views' words for a stale lock taken over, and for a cancelled apply. */
export function lockTakenOverText(statePath: string, pid: number): string {
  return `Took over a stale lock on ${statePath} left by pid ${pid} (no longer running).\n`;
}

export const CANCELLED_TEXT = `\nApply cancelled. ${NOTHING_CHANGED}\n`;
