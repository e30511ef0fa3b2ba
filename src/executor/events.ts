/**
 * What apply reports as it goes: applyPlan's events, and the client's (a retry of a change's
 * request, a rate change, a wait), which reach the same view through openClient. The flow
 * (commands/apply/flow.ts) hands its view to both and knows nothing of terminals; the apply views
 * (commands/apply/views/) decide how to show them.
 */
import type { ClientEvent } from '../api/connect/open-client.js';
import type { Change } from '../plan/types.js';

/** How one change ended. */
export type Outcome =
  /** The write succeeded. */
  | 'applied'
  /**
   * Nothing was needed: the journal (revocations, channel removals), a 404 on a retried delete, a
   * membership re-read, or an earlier accept of the same organisation (an accept) showed it done.
   */
  | 'already-done'
  /** Not attempted because what it depends on did not happen: every accept of its organisation failed. */
  | 'skipped'
  /** Not attempted because apply was interrupted (SIGINT/SIGTERM) first. */
  | 'not-started'
  /**
   * Refused, nothing written: what the change was planned from changed on the service since the
   * plan, so that the write would differ from what was shown (a billing field someone else changed,
   * an organisation gone from your organisations). Run plan again to review it.
   */
  | 'stale'
  | 'failed';

import type { ApplyCounts, ChangeFailure } from '../model/apply-result.js';
export type { ChangeFailure };

export interface ChangeResult {
  address: string;
  organisation: string;
  kind: Change['kind'];
  outcome: Outcome;
  /** Why it was already done, skipped, not started or stale (for people). */
  reason?: string;
  failure?: ChangeFailure;
  durationMs: number;
}

export type ApplyEvent =
  | { type: 'apply-start'; total: number; parallelism: number; at: number }
  | { type: 'change-start'; address: string; organisation: string; kind: Change['kind']; at: number }
  | ({ type: 'change-end'; at: number } & ChangeResult)
  | { type: 'interrupted'; at: number; inFlight: number }
  | { type: 'apply-end'; at: number; summary: ApplySummary }
  | ClientEvent;

export interface ApplySummary extends ApplyCounts {
  /**
   * The result of every change that was not applied (failed, stale, skipped, not started, already done),
   * in plan order. An applied change is counted and told as it ends (`change-end`), not kept: an
   * apply of 100,000 changes would otherwise hold 100,000 records to the end.
   */
  notApplied: ChangeResult[];
  /** The organisations with at least one change applied: how many, and the first of them in plan order. */
  changed: { organisations: number; first: Array<{ organisation: string; applied: number }> };
}

/** How many organisations `ApplySummary.changed.first` names at most: more than any summary lists. */
export const CHANGED_LISTED = 1_000;

export type ApplyListener = (event: ApplyEvent) => void;
