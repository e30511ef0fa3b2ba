/**
 * What the plan's read has found so far: the observed organisations (each handed to `onObserved`
 * as it comes), the problems that leave an organisation out, and the slugs the plan may name by id.
 * Every unit of the read (the whole listing, the reads by id) records into one Observation.
 */
import { organisationAddress } from '../../model/address.js';
import type { BillingObservation } from '../../model/billing.js';
import type { DesiredOrganisation } from '../../model/desired-state.js';
import type { ObservedOrganisation } from '../../model/observed-organisation.js';
import type { ObservedState } from '../../model/observed-state.js';
import type { PlanProblem } from '../../model/plan-problem.js';
import type { Organisation } from '../../api/types.js';

/** Whether to keep an observation (see ReadOptions.onObserved). */
export type OnObserved = (desired: DesiredOrganisation, observed: ObservedOrganisation) => boolean;

export function observe(org: Organisation, slug: string, member: boolean, billing: BillingObservation): ObservedOrganisation {
  return { slug, id: org.id, member, billing: billing.known ? billing.values : null };
}

export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Where `d` is declared: file:line:col. */
export function where(d: DesiredOrganisation): string {
  return `${d.source.file}:${d.source.line}:${d.source.col}`;
}

export class Observation {
  readonly organisations = new Map<string, ObservedOrganisation>();
  readonly problems: PlanProblem[] = [];
  readonly slugsById = new Map<string, string>();
  /** The active organisation's id, once the whole listing's first page has been read. */
  activeId: string | null = null;
  /** How many organisations the whole listing held, when it was read. */
  listed: number | undefined;

  constructor(
    /** The organisation the files make active, if any: named by id in the plan once it is read. */
    readonly activeSlug: string | undefined,
    private readonly onObserved: OnObserved | undefined,
  ) {}

  record(d: DesiredOrganisation, o: ObservedOrganisation): void {
    // The organisation to make active is named by id in the plan, whether or not its observation is kept.
    if (d.slug === this.activeSlug) this.slugsById.set(o.id, d.slug);
    if (this.onObserved === undefined || this.onObserved(d, o)) this.organisations.set(d.slug, o);
  }

  /** A problem that leaves `d` out, told at the place it is declared. */
  problem(d: DesiredOrganisation, message: string): void {
    this.problems.push({ organisation: d.slug, address: organisationAddress(d.slug), message: `${where(d)}: ${message}` });
  }

  /** A problem of the file as a whole (its activeOrganisation). */
  fileProblem(message: string): void {
    this.problems.push({ organisation: null, address: 'activeOrganisation', message });
  }

  slugMismatch(d: DesiredOrganisation, org: { id: string; slug: string }): void {
    this.problem(d, `organisation id "${org.id}" has the slug "${org.slug}", not "${d.slug}". Rename the key to "${org.slug}" or fix the id.`);
  }

  result(): ObservedState {
    this.problems.sort((a, b) => (a.address < b.address ? -1 : a.address > b.address ? 1 : 0));
    const { organisations, activeId, slugsById, problems, listed } = this;
    return { organisations, activeId, slugsById, problems, ...(listed === undefined ? {} : { listed }) };
  }
}
