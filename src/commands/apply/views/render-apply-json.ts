/**
 * Apply events as NDJSON for pipelines: one object per line, a `type` first, snake_case keys, and
 * wire strings mapped by exhaustive switches (kinds shared with the JSON plan), so internal renames
 * never reach consumers.
 */
import type { ApplyEvent, ChangeFailure, Outcome } from '../../../executor/events.js';
import type { PlanHazard } from '../../../plan/check-plan-safety.js';
import type { ChangedChange, PlanDifference } from '../../../plan/compare-with-reviewed.js';
import type { ChangeEssence } from '../../../plan/plan-digest.js';
import type { OrgformError } from '../../../errors.js';
import { wireKind } from '../../../text/plan/render-json.js';

export type WireOutcome = 'applied' | 'already_done' | 'skipped' | 'not_started' | 'stale' | 'failed';

export function wireOutcome(outcome: Outcome): WireOutcome {
  switch (outcome) {
    case 'applied':
      return 'applied';
    case 'already-done':
      return 'already_done';
    case 'skipped':
      return 'skipped';
    case 'not-started':
      return 'not_started';
    case 'stale':
      return 'stale';
    case 'failed':
      return 'failed';
    default: {
      const unreachable: never = outcome;
      throw new Error(`no wire string for outcome ${String(unreachable)}`);
    }
  }
}

/** One line of NDJSON, without its newline (like formatApplyLine). Optional fields are left out when absent. */
export function formatApplyEventJson(event: ApplyEvent): string {
  return JSON.stringify(toWire(event));
}

function toWire(e: ApplyEvent): Record<string, unknown> {
  switch (e.type) {
    case 'apply-start':
      return { type: 'apply_start', at: e.at, total: e.total, parallelism: e.parallelism };
    case 'change-start':
      return { type: 'change_start', at: e.at, address: e.address, organisation: e.organisation, kind: wireKind(e.kind) };
    case 'change-retry':
      return { type: 'change_retry', at: e.at, address: e.address, attempt: e.attempt, delay_ms: e.delayMs, status: e.status, error_code: e.errorCode };
    case 'change-end':
      return {
        type: 'change_end',
        at: e.at,
        address: e.address,
        organisation: e.organisation,
        kind: wireKind(e.kind),
        outcome: wireOutcome(e.outcome),
        reason: e.reason,
        failure: e.failure === undefined ? undefined : wireFailure(e.failure),
        duration_ms: e.durationMs,
      };
    case 'interrupted':
      return { type: 'interrupted', at: e.at, in_flight: e.inFlight };
    case 'rate':
      return { type: 'rate', at: e.at, reason: e.reason.replace('-', '_'), rps: e.rps === undefined ? undefined : Math.round(e.rps * 100) / 100, paused_ms: Math.round(e.pausedMs), waiting: e.waiting };
    case 'wait':
      return waitWire(e);
    case 'apply-end': {
      const s = e.summary;
      return {
        type: 'apply_end',
        at: e.at,
        summary: {
          total: s.total,
          applied: s.applied,
          already_done: s.alreadyDone,
          skipped: s.skipped,
          not_started: s.notStarted,
          stale: s.stale,
          failed: s.failed,
          interrupted: s.interrupted,
          elapsed_ms: s.elapsedMs,
        },
      };
    }
    default: {
      const unreachable: never = e;
      throw new Error(`unknown apply event ${JSON.stringify(unreachable)}`);
    }
  }
}

/** A wait: `{"type":"wait","reason":"rate_limit",…}`, at any point of the run (before apply_start too). */
function waitWire(e: Extract<ApplyEvent, { type: 'wait' }>): Record<string, unknown> {
  return {
    type: 'wait',
    at: e.at,
    reason: e.reason.replace('-', '_'),
    what: e.what,
    until: e.until,
    waiting: e.waiting,
    rps: e.rps === undefined ? undefined : Math.round(e.rps * 100) / 100,
    after: e.after,
    begun: e.begun,
    via: e.via,
    setting: e.setting,
  };
}

function wireFailure(f: ChangeFailure): Record<string, unknown> {
  return {
    operation: f.operation,
    message: f.message,
    status: f.status,
    service_code: f.serviceCode,
    service_message: f.serviceMessage,
    service_cause: f.serviceCause,
  };
}

/** The most changes a `refused` line lists of each of added, gone and changed; the counts are whole. */
export const MAX_LISTED_DIFFERENCES = 1_000;

/**
 * `{"type":"refused","reason":"not_reviewed",…}`: why nothing was applied, before the error on
 * standard error, with the error's own words (`message`, `details`) and, for a plan that is not the
 * reviewed one, the digests and what differs as data.
 */
export function formatRefusalJson(hazard: PlanHazard, error: OrgformError): string {
  const words = { code: error.code, message: error.message, details: error.details.length > 0 ? [...error.details] : undefined };
  switch (hazard.kind) {
    case 'not-reviewed':
      return JSON.stringify({
        type: 'refused',
        reason: 'not_reviewed',
        expected_digest: hazard.expected,
        digest: hazard.actual,
        difference: hazard.difference === undefined ? undefined : wireDifference(hazard.difference),
        ...words,
      });
    case 'stale':
      return JSON.stringify({ type: 'refused', reason: 'stale', ...words });
    case 'incomplete':
      return JSON.stringify({ type: 'refused', reason: 'incomplete', organisations: hazard.problems.map((p) => p.organisation ?? p.address), ...words });
    case 'over-budget':
      return JSON.stringify({ type: 'refused', reason: 'over_budget', changes: hazard.changes, max_changes: hazard.maxChanges, ...words });
    default: {
      const unreachable: never = hazard;
      throw new Error(`unknown hazard ${JSON.stringify(unreachable)}`);
    }
  }
}

function wireDifference(d: PlanDifference): Record<string, unknown> {
  const first = <T>(items: readonly T[]) => items.slice(0, MAX_LISTED_DIFFERENCES);
  return {
    service: d.service,
    added_count: d.added.length,
    gone_count: d.gone.length,
    changed_count: d.changed.length,
    added: first(d.added).map(wireEssence),
    gone: first(d.gone).map(wireEssence),
    changed: first(d.changed).map(wireChanged),
  };
}

function wireEssence(e: ChangeEssence): Record<string, unknown> {
  return {
    address: e.address,
    kind: wireKind(e.kind),
    organisation_id: e.organisation,
    target_id: e.target,
    declared: e.declared,
    seen: e.seen,
    known_after: e.knownAfter,
    active_from: e.activeFrom,
  };
}

const WIRE_ASPECT: Readonly<Record<ChangedChange['values'][number]['aspect'], string>> = {
  kind: 'kind',
  organisation: 'organisation_id',
  target: 'target_id',
  declared: 'declared',
  seen: 'seen',
  knownAfter: 'known_after',
  activeFrom: 'active_from',
};

function wireChanged(c: ChangedChange): Record<string, unknown> {
  const wire = (aspect: string, value: string | null | undefined) => (aspect === 'kind' && typeof value === 'string' ? wireKind(value as ChangeEssence['kind']) : value);
  return { address: c.address, values: c.values.map((v) => ({ aspect: WIRE_ASPECT[v.aspect], field: v.field, reviewed: wire(v.aspect, v.reviewed), now: wire(v.aspect, v.now) })) };
}
