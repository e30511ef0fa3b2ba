/**
 * A plan is plain data: serialisable, deterministically sorted, with a stable address and an
 * action per change. `display` fields explain the plan to people and never drive apply; apply
 * reads only `kind`, `organisation`, `targetId`, `declared`, `seen` and `knownAfter`. A billing
 * change carries no ready body: apply reads the organisation again just before writing and builds
 * the body then (executor/write-billing.ts).
 */
import type { BillingDetails, BillingField, SeenBilling } from '../model/billing.js';
import type { ChangeKind } from '../model/change-kind.js';
import type { ObservedOrganisation } from '../model/observed-organisation.js';
import type { PlanProblem } from '../model/plan-problem.js';

/** Internal actions. Wire strings for the JSON view are mapped in text/plan/render-json.ts by an exhaustive switch. */
export type Action = 'accept' | 'update' | 'delete';

export interface OrganisationRef {
  slug: string;
  id: string;
}

/** One billing field as the plan shows it: declared value vs current value. */
export interface FieldChange {
  field: BillingField;
  before: string | null;
  after: string;
}

export interface Change {
  /** Stable and unique: `organisations.acme.billing`, `organisations.acme.invitations.revoke.inv_2`, `activeOrganisation`. */
  address: string;
  kind: ChangeKind;
  action: Action;
  /** The organisation written to (for set-active: the one made active). */
  organisation: OrganisationRef;
  /** The invitation or channel id, for one-shot changes. */
  targetId?: string;
  /** Billing: the declared fields and their values, which apply writes over the other fields as it reads them then. */
  declared?: BillingDetails;
  /**
   * Billing: the declared fields as the plan read them (null: no value). Apply compares its fresh read
   * with these: a declared field that changed since, to a value other than the declared one, makes
   * the change stale (the write would differ from what was shown). Absent with `knownAfter`.
   */
  seen?: SeenBilling;
  /**
   * Billing whose current values could not be read when planning (an organisation joined by this
   * very apply): the address of the last of its organisation's accepts. Apply runs it once every
   * accept has ended and, if any one of them made you a member (they are alternatives), reads the
   * organisation and writes `declared` over what it reads. If none did, it is skipped, naming the
   * accepts that failed.
   */
  knownAfter?: string;
  display: {
    /** Billing: only the declared fields that differ (with `knownAfter`: every declared field, `before` unknown). */
    fields?: FieldChange[];
    /** set-active: the slug (or id) of the organisation active now, if known. */
    fromActive?: string | null;
    /** Why this change is there or what cannot be known before apply. */
    note?: string;
  };
}

/** What apply reads of a change: all of it but `display`, which explains the plan and never drives apply. */
export type ApplicableChange = Omit<Change, 'display'>;

/** The display of every change once the plan has been shown (see dropDisplays). */
const SHOWN: Change['display'] = Object.freeze({});

/**
 * The plan's changes as apply holds them while they run: each one's display, over a third of a
 * bulk plan's memory (30 MB at 100,000 changes), let go once the plan has been shown. In place: a
 * copy of 100,000 changes would be made at the very moment when the plan, its display and the
 * desired state are all still alive, which is an apply's peak.
 */
export function dropDisplays(changes: Change[]): ApplicableChange[] {
  for (const change of changes) change.display = SHOWN;
  return changes;
}

export interface Plan {
  /** 3: a billing change carries `declared` and `seen`, no ready body (2: `request`; `knownAfter` since 2). */
  formatVersion: 3;
  baseUrl: string;
  /** Sorted by organisation slug, then by kind order, then target id; `activeOrganisation` last. */
  changes: Change[];
  /** Slugs of declared organisations that need nothing, sorted. */
  unchanged: string[];
  /** Organisations that could not be read; their changes are missing from the plan. */
  problems: PlanProblem[];
  /** One-shot changes skipped because the journal records them done, by address (display only). */
  journaled: string[];
  /**
   * The observed values the changes depend on (organisations with changes), keyed by slug: recorded
   * for a plan to be saved (`plan --out`), whose apply compares them again; empty otherwise.
   */
  observed: Record<string, ObservedOrganisation>;
  /** The active organisation's id when the plan was made, if it was read. */
  observedActiveId: string | null;
}

export interface PlanSummary {
  change: number;
  remove: number;
  accept: number;
  unchanged: number;
  problems: number;
}

export function summarisePlan(plan: Plan): PlanSummary {
  let change = 0;
  let remove = 0;
  let accept = 0;
  for (const c of plan.changes) {
    switch (c.action) {
      case 'update':
        change += 1;
        break;
      case 'delete':
        remove += 1;
        break;
      case 'accept':
        accept += 1;
        break;
      default: {
        const unreachable: never = c.action;
        throw new Error(`unknown action ${String(unreachable)}`);
      }
    }
  }
  return { change, remove, accept, unchanged: plan.unchanged.length, problems: plan.problems.length };
}
