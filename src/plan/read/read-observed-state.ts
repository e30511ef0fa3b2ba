/**
 * Reads what the service holds for the declared organisations: one listing of all pages where it
 * answers what is needed (slugs, membership, billing, the active organisation), single reads with
 * bounded concurrency only for organisations the listing cannot answer (declared by id, not found
 * there: typically an invitation still to accept). A few organisations declared by id, with nothing
 * else needing the whole listing, are each looked for in the listing filtered by their slug.
 * Membership always comes from a listing: a service may let anyone read an organisation by id.
 * Never writes.
 */
import pLimit from 'p-limit';
import { isForbidden, isNotFound } from '../../api/api-error.js';
import type { OrganisationsClient } from '../../api/client.js';
import { observeBilling } from '../../api/observe-billing.js';
import type { Organisation } from '../../api/types.js';
import type { DesiredOrganisation, DesiredState } from '../../model/desired-state.js';
import { organisationAddress } from '../../model/address.js';
import type { BillingObservation } from '../../model/billing.js';
import type { ObservedOrganisation } from '../../model/observed-organisation.js';
import type { ObservedState } from '../../model/observed-state.js';
import type { PlanProblem } from '../../model/plan-problem.js';

export interface ReadOptions {
  parallelism: number;
  /**
   * Called with each declared organisation as it is read (in no set order); returns whether to keep
   * its observation in `ObservedState.organisations`. The plan takes each one as it comes and keeps
   * none, so that a bulk read holds no observation it is done with. By default every one is kept.
   */
  onObserved?: (desired: DesiredOrganisation, observed: ObservedOrganisation) => boolean;
  /** Above this many organisations declared by id, one listing is cheaper than single reads. */
  listingThreshold?: number;
}

/** An organisation as listed, and why its billing is unknown when the listing does not show it. */
interface Listed {
  listed: ObservedOrganisation;
  unknown: string | undefined;
}

function observe(org: Organisation, slug: string, member: boolean, billing: BillingObservation): ObservedOrganisation {
  return { slug, id: org.id, member, billing: billing.known ? billing.values : null };
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function problem(slug: string | null, message: string): PlanProblem {
  return { organisation: slug, address: slug === null ? 'activeOrganisation' : organisationAddress(slug), message };
}

export async function readObservedState(desired: DesiredState, client: OrganisationsClient, options: ReadOptions): Promise<ObservedState> {
  const organisations = new Map<string, ObservedOrganisation>();
  const problems: PlanProblem[] = [];
  const slugsById = new Map<string, string>();
  const activeSlug = desired.activeOrganisation?.slug;
  const record = (d: DesiredOrganisation, o: ObservedOrganisation): void => {
    // The organisation to make active is named by id in the plan, whether or not its observation is kept.
    if (d.slug === activeSlug) slugsById.set(o.id, d.slug);
    if (options.onObserved === undefined || options.onObserved(d, o)) organisations.set(d.slug, o);
  };
  const withoutId = desired.organisations.filter((o) => o.id === undefined);
  const withId = desired.organisations.filter((o) => o.id !== undefined);
  // Only the listing shows membership (a service may answer GetOrganisation for non-members too),
  // so an invitation to accept always needs it.
  const needListing =
    desired.activeOrganisation !== undefined ||
    withoutId.length > 0 ||
    withId.length > (options.listingThreshold ?? 20) ||
    withId.some((d) => d.invitations.accept.length > 0);

  let listed: number | undefined;
  const limit = pLimit(options.parallelism);
  const reads: Promise<void>[] = [];
  /** A member found in the listing; billing the listing cannot show (`unknown` says why) is read by id when it is declared. */
  const recordMember = (d: DesiredOrganisation, { listed, unknown }: Listed) => {
    if (listed.billing !== null || d.billing === undefined) {
      record(d, listed);
      return;
    }
    reads.push(
      limit(async () => {
        try {
          const read = await client.getOrganisation(listed.id);
          recordById(d, read);
        } catch (err) {
          problems.push(problem(d.slug, `${where(d)}: the billing of organisation "${d.slug}" could not be read (${unknown}, and reading it by id failed: ${errorText(err)}); nothing will be written for it. Run plan again.`));
        }
      }),
    );
  };

  let activeId: string | null = null;
  // Members the listing shows for organisations declared by id (by slug, they are recorded as they
  // are listed).
  const listedById = new Map<string, Listed>();
  // Organisations declared by slug, until the listing shows them.
  const unlisted = new Map(withoutId.map((d) => [d.slug, d]));
  if (needListing) {
    // Keep only what the plan needs, page by page, and in the form the plan keeps; an organisation
    // declared by slug is recorded as soon as it is listed, so that what needs nothing is let go
    // at once: a listing of 100,000 organisations held whole is most of a bulk plan's memory.
    const wantedIds = new Set(withId.map((d) => d.id as string));
    let first = true;
    listed = 0;
    for await (const page of client.listOrganisationPages({ readAhead: true })) {
      const head = first ? page.organisations[0] : undefined;
      first = false;
      listed += page.organisations.length;
      if (head) {
        activeId = head.id;
        slugsById.set(head.id, head.slug);
      }
      for (const org of page.organisations) {
        const bySlug = unlisted.get(org.slug);
        const byId = wantedIds.has(org.id);
        if (org.slug === activeSlug) slugsById.set(org.id, org.slug);
        if (bySlug === undefined && !byId) continue;
        const billing = observeBilling(org.billing, false);
        const listed: Listed = { listed: observe(org, org.slug, true, billing), unknown: billing.known ? undefined : billing.reason };
        if (byId) listedById.set(org.id, listed);
        if (bySlug !== undefined) {
          unlisted.delete(org.slug);
          recordMember(bySlug, listed);
        }
      }
    }
  }

  for (const d of unlisted.values()) {
    problems.push(
      problem(
        d.slug,
        `${where(d)}: organisation "${d.slug}" is not among the organisations you belong to. Check the slug; to accept an invitation to an organisation you are not a member of yet, declare its id (organisations.${d.slug}.id).`,
      ),
    );
  }

  for (const d of withId) {
    const id = d.id as string;
    const listed = listedById.get(id);
    if (listed) {
      if (listed.listed.slug !== d.slug) slugMismatch(d, listed.listed);
      else recordMember(d, listed);
      continue;
    }
    const joining = d.invitations.accept.length > 0;
    reads.push(
      limit(async () => {
        // Without the whole listing: the listing filtered by the declared slug says whether you are a member.
        if (!needListing && (await readListedBySlug(d, id))) return;
        try {
          const org = await client.getOrganisation(id);
          // Readable is not member: the listing does not hold it.
          recordNonMember(d, org);
        } catch (err) {
          if ((isNotFound(err) || isForbidden(err)) && joining) {
            // Not readable yet: the user joins by accepting. Billing is unknown until then.
            record(d, { slug: d.slug, id, member: false, billing: null });
          } else if (isNotFound(err)) {
            problems.push(problem(d.slug, `${where(d)}: organisation id "${id}" was not found, or you are not a member of it. Check the id; to join it, declare the invitation under invitations.accept.`));
          } else {
            problems.push(problem(d.slug, `${where(d)}: ${errorText(err)}`));
          }
        }
      }),
    );
  }
  await Promise.all(reads);

  /**
   * Looks for organisation `id` in the listing filtered by `d`'s slug (one small listing): recorded
   * as a member when there, its billing read by id if the listing does not show it. False when the
   * listing does not hold it (not a member, or another slug): the caller reads it by id to say which.
   */
  async function readListedBySlug(d: DesiredOrganisation, id: string): Promise<boolean> {
    let found: Organisation | undefined;
    try {
      for await (const org of client.listOrganisations({ filter: d.slug })) {
        if (org.id === id) {
          found = org;
          break;
        }
      }
    } catch (err) {
      problems.push(problem(d.slug, `${where(d)}: ${errorText(err)}`));
      return true;
    }
    if (found === undefined) return false;
    if (found.slug !== d.slug) {
      slugMismatch(d, found);
      return true;
    }
    const billing = observeBilling(found.billing, false);
    if (billing.known || d.billing === undefined) {
      record(d, observe(found, d.slug, true, billing));
      return true;
    }
    try {
      recordById(d, await client.getOrganisation(id));
    } catch (err) {
      problems.push(problem(d.slug, `${where(d)}: the billing of organisation "${d.slug}" could not be read (${billing.reason}, and reading it by id failed: ${errorText(err)}); nothing will be written for it. Run plan again.`));
    }
    return true;
  }

  function slugMismatch(d: DesiredOrganisation, org: { id: string; slug: string }): void {
    problems.push(problem(d.slug, `${where(d)}: organisation id "${org.id}" has the slug "${org.slug}", not "${d.slug}". Rename the key to "${org.slug}" or fix the id.`));
  }

  /** A by-id read of an organisation a listing shows you a member of: authoritative for billing; billing that still cannot be read is a problem when declared. */
  function recordById(d: DesiredOrganisation, org: Organisation): void {
    slugsById.set(org.id, org.slug);
    if (org.slug !== d.slug) return slugMismatch(d, org);
    const billing = observeBilling(org.billing, true);
    if (!billing.known && d.billing !== undefined) {
      problems.push(problem(d.slug, `${where(d)}: the billing of organisation "${d.slug}" cannot be read (${billing.reason}); orgform will not send a billing update that could clear values it did not see. Nothing will be written for this organisation.`));
      return;
    }
    record(d, observe(org, d.slug, true, billing));
  }

  /** Readable, but not in the listing of memberships: only an invitation to accept makes it writable. */
  function recordNonMember(d: DesiredOrganisation, org: Organisation): void {
    slugsById.set(org.id, org.slug);
    // Another slug first: a listing filtered by the declared slug cannot have found it.
    if (org.slug !== d.slug) return slugMismatch(d, org);
    if (d.invitations.accept.length === 0) {
      problems.push(problem(d.slug, `${where(d)}: you are not a member of organisation id "${org.id}" (it is not among your organisations, though the service lets you read it). To join it, declare the invitation under invitations.accept.`));
      return;
    }
    // Its billing is read again after the accept: what a non-member sees proves nothing about what a member writes over.
    record(d, { slug: d.slug, id: org.id, member: false, billing: null });
  }

  if (desired.activeOrganisation) {
    const { slug, source } = desired.activeOrganisation;
    // Named by id once listed or read (see record).
    const known = [...slugsById.values()].includes(slug);
    if (!known && !problems.some((p) => p.organisation === slug)) {
      problems.push(problem(null, `${source.file}:${source.line}:${source.col}: activeOrganisation "${slug}" is not an organisation you belong to, and the file does not declare it with an id to join.`));
    }
  }

  problems.sort((a, b) => (a.address < b.address ? -1 : a.address > b.address ? 1 : 0));
  return { organisations, activeId, slugsById, problems, ...(listed === undefined ? {} : { listed }) };
}

function where(d: DesiredOrganisation): string {
  return `${d.source.file}:${d.source.line}:${d.source.col}`;
}
