/**
 * The whole listing of your organisations, page by page: the active organisation (the first one
 * listed), the members declared by slug (handed over as they are listed) and the members declared
 * by id (kept until the listing has ended). Only what the plan needs is kept, in the form the plan
 * keeps, so that what needs nothing is let go at once: a listing of 100,000 organisations held
 * whole would be most of a bulk plan's memory.
 */
import type { OrganisationsClient } from '../../api/client.js';
import { observeBilling } from '../../api/observe-billing.js';
import type { DesiredOrganisation } from '../../model/desired-state.js';
import type { ObservedOrganisation } from '../../model/observed-organisation.js';
import { observe, type Observation } from './observation.js';

/** An organisation as listed, and why its billing is unknown when the listing does not show it. */
export interface Listed {
  listed: ObservedOrganisation;
  unknown: string | undefined;
}

/**
 * The organisations declared by slug, each taken once the listing shows it: what is left was not
 * listed. Looked for in the list sorted by slug rather than in a map: a million organisations
 * declared cost a byte each here, against some 30 bytes each for a map (and the copies it makes
 * of itself as it empties).
 */
export class DeclaredBySlug {
  private readonly sorted: readonly DesiredOrganisation[];
  private readonly taken: Uint8Array;

  constructor(organisations: readonly DesiredOrganisation[]) {
    let sorted = true;
    for (let at = 1; at < organisations.length && sorted; at++) sorted = organisations[at - 1]!.slug < organisations[at]!.slug;
    this.sorted = sorted ? organisations : [...organisations].sort((a, b) => (a.slug < b.slug ? -1 : a.slug > b.slug ? 1 : 0));
    this.taken = new Uint8Array(organisations.length);
  }

  /** The organisation declared as `slug`, the first time it is asked for. */
  take(slug: string): DesiredOrganisation | undefined {
    let low = 0;
    let high = this.sorted.length - 1;
    while (low <= high) {
      const middle = (low + high) >>> 1;
      const at = this.sorted[middle]!.slug;
      if (at < slug) low = middle + 1;
      else if (at > slug) high = middle - 1;
      else if (this.taken[middle] === 1) return undefined;
      else {
        this.taken[middle] = 1;
        return this.sorted[middle];
      }
    }
    return undefined;
  }

  /** Those not taken, in slug order. */
  *left(): Generator<DesiredOrganisation> {
    for (let at = 0; at < this.sorted.length; at++) if (this.taken[at] === 0) yield this.sorted[at]!;
  }
}

export interface ListingWants {
  /** Organisations declared by slug, until the listing shows them: what is left was not listed. */
  bySlug: DeclaredBySlug;
  /** The ids of the organisations declared by id. */
  ids: ReadonlySet<string>;
}

/** Reads the whole listing into `observation`; `member` is told each one declared by slug. Resolves to the members declared by id, by id. */
export async function readWholeListing(
  client: OrganisationsClient,
  wants: ListingWants,
  observation: Observation,
  member: (d: DesiredOrganisation, listed: Listed) => void,
): Promise<Map<string, Listed>> {
  const listedById = new Map<string, Listed>();
  let first = true;
  observation.listed = 0;
  for await (const page of client.listOrganisationPages({ readAhead: true })) {
    const head = first ? page.organisations[0] : undefined;
    first = false;
    observation.listed += page.organisations.length;
    if (head) {
      observation.activeId = head.id;
      observation.slugsById.set(head.id, head.slug);
    }
    for (const org of page.organisations) {
      const bySlug = wants.bySlug.take(org.slug);
      const byId = wants.ids.has(org.id);
      if (org.slug === observation.activeSlug) observation.slugsById.set(org.id, org.slug);
      if (bySlug === undefined && !byId) continue;
      const billing = observeBilling(org.billing, false);
      const listed: Listed = { listed: observe(org, org.slug, true, billing), unknown: billing.known ? undefined : billing.reason };
      if (byId) listedById.set(org.id, listed);
      if (bySlug !== undefined) member(bySlug, listed);
    }
  }
  return listedById;
}
