/**
 * Reads what the service holds for the declared organisations: one listing of all pages where it
 * answers what is needed (slugs, membership, billing, the active organisation), single reads with
 * bounded concurrency only for organisations the listing cannot answer (declared by id, not found
 * there: typically an invitation still to accept). A few organisations declared by id, with nothing
 * else needing the whole listing, are each looked for in the listing filtered by their slug.
 * Membership always comes from a listing: a service may let anyone read an organisation by id.
 * Never writes.
 */
import type { OrganisationsClient } from '../../api/client.js';
import type { DesiredState } from '../../model/desired-state.js';
import type { ObservedState } from '../../model/observed-state.js';
import { Observation, type OnObserved } from './observation.js';
import { ReadsById } from './reads-by-id.js';
import { DeclaredBySlug, readWholeListing, type Listed } from './read-whole-listing.js';

export interface ReadOptions {
  parallelism: number;
  /**
   * Called with each declared organisation as it is read (in no set order); returns whether to keep
   * its observation in `ObservedState.organisations`. The plan takes each one as it comes and keeps
   * none, so that a bulk read holds no observation it is done with. By default every one is kept.
   */
  onObserved?: OnObserved;
  /** Above this many organisations declared by id, one listing is cheaper than single reads. */
  listingThreshold?: number;
}

export async function readObservedState(desired: DesiredState, client: OrganisationsClient, options: ReadOptions): Promise<ObservedState> {
  const observation = new Observation(desired.activeOrganisation?.slug, options.onObserved);
  const reads = new ReadsById(client, observation, options.parallelism);
  const withoutId = desired.organisations.filter((o) => o.id === undefined);
  const withId = desired.organisations.filter((o) => o.id !== undefined);
  // Only the listing shows membership (a service may answer GetOrganisation for non-members too),
  // so an invitation to accept always needs it.
  const needListing =
    desired.activeOrganisation !== undefined ||
    withoutId.length > 0 ||
    withId.length > (options.listingThreshold ?? 20) ||
    withId.some((d) => d.invitations.accept.length > 0);

  let listedById = new Map<string, Listed>();
  if (needListing) {
    const bySlug = new DeclaredBySlug(withoutId);
    listedById = await readWholeListing(client, { bySlug, ids: new Set(withId.map((d) => d.id as string)) }, observation, (d, listed) => reads.member(d, listed));
    for (const d of bySlug.left()) {
      observation.problem(
        d,
        `organisation "${d.slug}" is not among the organisations you belong to. Check the slug; to accept an invitation to an organisation you are not a member of yet, declare its id (organisations.${d.slug}.id).`,
      );
    }
  }
  for (const d of withId) {
    const listed = listedById.get(d.id as string);
    if (listed === undefined) reads.declared(d, d.id as string, !needListing);
    else if (listed.listed.slug !== d.slug) observation.slugMismatch(d, listed.listed);
    else reads.member(d, listed);
  }
  await reads.done();

  if (desired.activeOrganisation) {
    const { slug, source } = desired.activeOrganisation;
    // Named by id once listed or read (see Observation.record).
    const known = [...observation.slugsById.values()].includes(slug);
    if (!known && !observation.problems.some((p) => p.organisation === slug)) {
      observation.fileProblem(`${source.file}:${source.line}:${source.col}: activeOrganisation "${slug}" is not an organisation you belong to, and the file does not declare it with an id to join.`);
    }
  }
  return observation.result();
}
