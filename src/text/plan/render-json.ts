/**
 * The machine view of a plan: a stable, versioned document for pipelines (schemas/plan.schema.json).
 * Internal actions and kinds reach the wire only through the exhaustive switches below, so renaming
 * one inside orgform never changes what consumers read. `request` and `observed` are not for display
 * and are left out.
 */
import type { ChangeKind } from '../../model/change-kind.js';
import { summarisePlan, type Action, type Change, type Plan } from '../../plan/types.js';
import { digestPlan } from '../../plan/plan-digest.js';
import { LazyArray, stringifyPieces } from '../../plan/stringify-pieces.js';

/** 1.2: the plan's `digest` (1.1: a billing change may be `known_after` another change, with `before` null, not read yet). */
export const JSON_FORMAT_VERSION = '1.2';

export type WireAction = 'accept' | 'update' | 'delete';
export type WireKind =
  | 'invitation_accept'
  | 'billing_update'
  | 'invitation_revoke'
  | 'notification_channel_remove'
  | 'active_organisation_set';

export function wireAction(action: Action): WireAction {
  switch (action) {
    case 'accept':
      return 'accept';
    case 'update':
      return 'update';
    case 'delete':
      return 'delete';
    default: {
      const unreachable: never = action;
      throw new Error(`no wire string for action ${String(unreachable)}`);
    }
  }
}

export function wireKind(kind: ChangeKind): WireKind {
  switch (kind) {
    case 'accept-invitation':
      return 'invitation_accept';
    case 'billing':
      return 'billing_update';
    case 'revoke-invitation':
      return 'invitation_revoke';
    case 'remove-channel':
      return 'notification_channel_remove';
    case 'set-active':
      return 'active_organisation_set';
    default: {
      const unreachable: never = kind;
      throw new Error(`no wire string for change kind ${String(unreachable)}`);
    }
  }
}

type Values = Record<string, string | null> | null;

export interface WireChange {
  address: string;
  action: WireAction;
  kind: WireKind;
  organisation: { slug: string; id: string };
  target_id?: string;
  before: Values;
  after: Values;
  /**
   * Billing of an organisation being joined: the address of the last of its accepts, after which
   * `before` can be read (the accepts are alternatives: any one of them makes the membership).
   */
  known_after?: string;
  note?: string;
}

export function renderJson(plan: Plan): string {
  return [...renderJsonPieces(plan)].join('');
}

/**
 * The same text in pieces, written as it is made: a plan of 500,000 changes is never held as one
 * document or one string (plan/stringify-pieces.ts).
 */
export function* renderJsonPieces(plan: Plan): Generator<string> {
  const s = summarisePlan(plan);
  const document = {
    format_version: JSON_FORMAT_VERSION,
    base_url: plan.baseUrl,
    digest: digestPlan(plan),
    summary: { change: s.change, remove: s.remove, accept: s.accept, unchanged: s.unchanged, problems: s.problems },
    changes: new LazyArray(plan.changes, toWireChange),
    unchanged: plan.unchanged,
    problems: new LazyArray(plan.problems, (p) => ({ organisation: p.organisation, address: p.address, message: p.message })),
    journaled: plan.journaled,
  };
  yield* stringifyPieces(document, '  ');
  yield '\n';
}

function toWireChange(change: Change): WireChange {
  const { before, after } = beforeAfter(change);
  return {
    address: change.address,
    action: wireAction(change.action),
    kind: wireKind(change.kind),
    organisation: { slug: change.organisation.slug, id: change.organisation.id },
    ...(change.targetId !== undefined ? { target_id: change.targetId } : {}),
    before,
    after,
    ...(change.knownAfter !== undefined ? { known_after: change.knownAfter } : {}),
    ...(change.display.note !== undefined ? { note: change.display.note } : {}),
  };
}

function beforeAfter(change: Change): { before: Values; after: Values } {
  switch (change.kind) {
    case 'billing': {
      if (change.knownAfter !== undefined) return { before: null, after: Object.fromEntries((change.display.fields ?? []).map((f) => [f.field, f.after])) };
      const before: Record<string, string | null> = {};
      const after: Record<string, string | null> = {};
      for (const f of change.display.fields ?? []) {
        before[f.field] = f.before;
        after[f.field] = f.after;
      }
      return { before, after };
    }
    case 'set-active':
      return { before: { organisation: change.display.fromActive ?? null }, after: { organisation: change.organisation.slug } };
    case 'accept-invitation':
      return { before: null, after: { invitation: target(change) } };
    case 'revoke-invitation':
      return { before: { invitation: target(change) }, after: null };
    case 'remove-channel':
      return { before: { notification_channel: target(change) }, after: null };
    default: {
      const unreachable: never = change.kind;
      throw new Error(`no before/after for change kind ${String(unreachable)}`);
    }
  }
}

/** One-shot changes always carry their target id; a plan without one is a bug in plan, not input to show. */
function target(change: Change): string {
  if (change.targetId === undefined) throw new Error(`plan change ${change.address} (${change.kind}) has no targetId`);
  return change.targetId;
}
