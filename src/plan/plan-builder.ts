/**
 * A plan put together one organisation at a time, as each is read, so that an observation is let
 * go as soon as its changes are planned: a bulk plan holds the changes, not 100,000 observations
 * as well. Pure: data in, a deterministically sorted plan out, whatever order organisations come in.
 */
import type { DesiredOrganisation } from '../model/desired-state.js';
import { changeAddress } from '../model/address.js';
import { KIND_ORDER } from '../model/change-kind.js';
import type { ObservedOrganisation } from '../model/observed-organisation.js';
import type { ObservedState } from '../model/observed-state.js';
import { planOrganisation, type IsJournaled } from './plan-organisation.js';
import type { Change, Plan } from './types.js';

export interface PlanBuilderOptions {
  baseUrl: string;
  isJournaled: IsJournaled;
  /** The slug declared as the active organisation, if any. */
  activeSlug: string | undefined;
  /**
   * Record in the plan the observations its changes depend on (`Plan.observed`). Only a plan to be
   * saved needs them: its apply compares them again. Without, they are let go as they are planned.
   */
  recordObservations: boolean;
  /**
   * Where the recorded observations go as they are planned, instead of into `Plan.observed` (which
   * then stays empty): `plan --out` spools them to its file's lines rather than hold them all.
   */
  observationSink?: (slug: string, observed: ObservedOrganisation) => void;
}

/** What the plan takes of the observed state besides the organisations: the active one, names by id, problems. */
export type ObservedRest = Pick<ObservedState, 'activeId' | 'slugsById' | 'problems'>;

export class PlanBuilder {
  private readonly changes: Change[] = [];
  private readonly unchanged: string[] = [];
  private readonly journaled: string[] = [];
  // As [slug, observed] pairs, made into the plan's record once, in slug order: a record filled one
  // key at a time, then copied to sort it, costs a bulk plan three large tables for one.
  private readonly observedWithChanges: Array<[string, ObservedOrganisation]> = [];
  private active: ObservedOrganisation | undefined;
  private activeRecorded = false;

  constructor(private readonly options: PlanBuilderOptions) {}

  /** One declared organisation, as observed; each at most once. */
  add(d: DesiredOrganisation, o: ObservedOrganisation): void {
    const mine = planOrganisation(d, o, this.options.isJournaled);
    // One by one: a spread of many arguments overflows the stack.
    for (const address of mine.journaled) this.journaled.push(address);
    if (d.slug === this.options.activeSlug) this.active = o;
    if (mine.changes.length === 0) {
      this.unchanged.push(d.slug);
      return;
    }
    for (const change of mine.changes) this.changes.push(change);
    if (this.options.recordObservations) this.record(d.slug, o);
  }

  private record(slug: string, o: ObservedOrganisation): void {
    if (slug === this.options.activeSlug) this.activeRecorded = true;
    const sink = this.options.observationSink;
    if (sink === undefined) this.observedWithChanges.push([slug, o]);
    else sink(slug, o);
  }

  /** The plan, once every organisation that could be read has been added. */
  finish(observed: ObservedRest): Plan {
    const { changes, observedWithChanges } = this;
    const activeSlug = this.options.activeSlug;
    if (activeSlug !== undefined) {
      const target = this.active;
      const targetId = target?.id ?? [...observed.slugsById].find(([, slug]) => slug === activeSlug)?.[0];
      if (targetId !== undefined && targetId !== observed.activeId) {
        const from = observed.activeId === null ? null : (observed.slugsById.get(observed.activeId) ?? observed.activeId);
        changes.push({
          address: changeAddress('set-active', activeSlug),
          kind: 'set-active',
          action: 'update',
          organisation: { slug: activeSlug, id: targetId },
          display: { fromActive: from },
        });
        if (target && this.options.recordObservations && !this.activeRecorded) this.record(activeSlug, target);
      }
    }

    changes.sort(compareChanges);
    this.unchanged.sort();
    this.journaled.sort();
    return {
      formatVersion: 3,
      baseUrl: this.options.baseUrl,
      changes,
      unchanged: this.unchanged,
      problems: observed.problems,
      journaled: this.journaled,
      observed: Object.fromEntries(observedWithChanges.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))),
      observedActiveId: observed.activeId,
    };
  }
}

function compareChanges(a: Change, b: Change): number {
  const aActive = a.kind === 'set-active' ? 1 : 0;
  const bActive = b.kind === 'set-active' ? 1 : 0;
  if (aActive !== bActive) return aActive - bActive;
  if (a.organisation.slug !== b.organisation.slug) return a.organisation.slug < b.organisation.slug ? -1 : 1;
  if (a.kind !== b.kind) return KIND_ORDER[a.kind] - KIND_ORDER[b.kind];
  const at = a.targetId ?? '';
  const bt = b.targetId ?? '';
  return at < bt ? -1 : at > bt ? 1 : 0;
}
