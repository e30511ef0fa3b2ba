/**
 * Apply events as NDJSON for pipelines: one object per line, a `type` first, snake_case keys, and
 * wire strings mapped by exhaustive switches (kinds shared with the JSON plan), so internal renames
 * never reach consumers.
 */
import type { ApplyEvent, ChangeFailure, Outcome } from '../../../executor/events.js';
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
