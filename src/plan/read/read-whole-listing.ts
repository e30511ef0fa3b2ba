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

export interface ListingWants {
  /** Organisations declared by slug, until the listing shows them: what is left was not listed. */
  bySlug: Map<string, DesiredOrganisation>;
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
      const bySlug = wants.bySlug.get(org.slug);
      const byId = wants.ids.has(org.id);
      if (org.slug === observation.activeSlug) observation.slugsById.set(org.id, org.slug);
      if (bySlug === undefined && !byId) continue;
      const billing = observeBilling(org.billing, false);
      const listed: Listed = { listed: observe(org, org.slug, true, billing), unknown: billing.known ? undefined : billing.reason };
      if (byId) listedById.set(org.id, listed);
      if (bySlug !== undefined) {
        wants.bySlug.delete(org.slug);
        member(bySlug, listed);
      }
    }
  }
  return listedById;
}
