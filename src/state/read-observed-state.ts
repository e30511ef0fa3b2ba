/**
 * Reads what the service holds for the declared organisations: one listing of all pages where it
 * answers what is needed (slugs, membership, billing, the active organisation), single reads with
 * bounded concurrency only for organisations the listing cannot answer (declared by id, not found
 * there: typically an invitation still to accept). Never writes.
 */
import pLimit from 'p-limit';
import { isForbidden, isNotFound } from '../api/api-error.js';
import type { OrganisationsClient } from '../api/client.js';
import { observeBilling } from '../api/observe-billing.js';
import { BILLING_RESPONSE_FIELD, type Organisation } from '../api/types.js';
import type { DesiredOrganisation, DesiredState } from '../config/types.js';
import { organisationAddress } from '../model/address.js';
import { BILLING_FIELDS, type BillingObservation } from '../model/billing.js';
import type { ObservedOrganisation } from '../model/observed-organisation.js';
import type { ObservedState } from '../model/observed-state.js';
import type { PlanProblem } from '../model/plan-problem.js';

export interface ReadOptions {
  parallelism: number;
  /** Above this many organisations declared by id, one listing is cheaper than single reads. */
  listingThreshold?: number;
}

/** Every name a managed billing field may be read under: the response spelling and the update's. */
const MANAGED_BILLING_KEYS = [...new Set(BILLING_FIELDS.flatMap((field) => [BILLING_RESPONSE_FIELD[field], field]))];

/**
 * A listed billing narrowed to the keys observeBilling reads, so that observeBilling answers the
 * same for it as for the whole; anything but an object is kept as it is (and reported as such).
 */
function managedBilling(raw: unknown): unknown {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return raw;
  const narrowed: Record<string, unknown> = {};
  for (const key of MANAGED_BILLING_KEYS) {
    const value = (raw as Record<string, unknown>)[key];
    if (value !== undefined) narrowed[key] = value;
  }
  return narrowed;
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
  const withoutId = desired.organisations.filter((o) => o.id === undefined);
  const withId = desired.organisations.filter((o) => o.id !== undefined);
  // Only the listing shows membership (a service may answer GetOrganisation for non-members too),
  // so an invitation to accept always needs it.
  const needListing =
    desired.activeOrganisation !== undefined ||
    withoutId.length > 0 ||
    withId.length > (options.listingThreshold ?? 20) ||
    withId.some((d) => d.invitations.accept.length > 0);

  let activeId: string | null = null;
  const listedById = new Map<string, Organisation>();
  const listedBySlug = new Map<string, Organisation>();
  if (needListing) {
    // Keep only what the plan needs, page by page: a listing of 100,000 organisations held whole is
    // most of a bulk plan's memory.
    const wantedSlugs = new Set(desired.organisations.map((d) => d.slug));
    if (desired.activeOrganisation) wantedSlugs.add(desired.activeOrganisation.slug);
    const wantedIds = new Set(withId.map((d) => d.id as string));
    let first = true;
    for await (const page of client.listOrganisationPages()) {
      const head = first ? page.organisations[0] : undefined;
      first = false;
      if (head) {
        activeId = head.id;
        slugsById.set(head.id, head.slug);
      }
      for (const org of page.organisations) {
        if (!wantedSlugs.has(org.slug) && !wantedIds.has(org.id)) continue;
        // Of billing, only the fields observeBilling reads (in both spellings): the rest of the
        // listing's billing object (subscriptions, quotas, dates) is most of a kept organisation.
        const kept: Organisation = { id: org.id, slug: org.slug, billing: managedBilling(org.billing) as Organisation['billing'] };
        listedById.set(org.id, kept);
        listedBySlug.set(org.slug, kept);
        slugsById.set(org.id, org.slug);
      }
    }
  }

  const limit = pLimit(options.parallelism);
  const reads: Promise<void>[] = [];
  /** A member found in the listing; billing the listing cannot show is read by id when it is declared. */
  const recordMember = (d: DesiredOrganisation, org: Organisation) => {
    const billing = observeBilling(org.billing, false);
    if (billing.known || d.billing === undefined) {
      organisations.set(d.slug, observe(org, d.slug, true, billing));
      return;
    }
    reads.push(
      limit(async () => {
        try {
          const read = await client.getOrganisation(org.id);
          recordById(d, read, true);
        } catch (err) {
          problems.push(problem(d.slug, `${where(d)}: the billing of organisation "${d.slug}" could not be read (${billing.reason}, and reading it by id failed: ${errorText(err)}); nothing will be written for it. Run plan again.`));
        }
      }),
    );
  };

  for (const d of withoutId) {
    const org = listedBySlug.get(d.slug);
    if (org) recordMember(d, org);
    else {
      problems.push(
        problem(
          d.slug,
          `${where(d)}: organisation "${d.slug}" is not among the organisations you belong to. Check the slug; to accept an invitation to an organisation you are not a member of yet, declare its id (organisations.${d.slug}.id).`,
        ),
      );
    }
  }

  for (const d of withId) {
    const id = d.id as string;
    const listed = listedById.get(id);
    if (listed) {
      slugsById.set(listed.id, listed.slug);
      if (listed.slug !== d.slug) slugMismatch(d, listed);
      else recordMember(d, listed);
      continue;
    }
    const joining = d.invitations.accept.length > 0;
    reads.push(
      limit(async () => {
        try {
          const org = await client.getOrganisation(id);
          // Readable is not member when the listing was read and does not hold it.
          if (joining || needListing) recordNonMember(d, org);
          else recordById(d, org, true);
        } catch (err) {
          if ((isNotFound(err) || isForbidden(err)) && joining) {
            // Not readable yet: the user joins by accepting. Billing is unknown until then.
            organisations.set(d.slug, { slug: d.slug, id, member: false, billing: null });
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

  function slugMismatch(d: DesiredOrganisation, org: Organisation): void {
    problems.push(problem(d.slug, `${where(d)}: organisation id "${org.id}" has the slug "${org.slug}", not "${d.slug}". Rename the key to "${org.slug}" or fix the id.`));
  }

  /** A by-id read: authoritative for billing; a member's billing that still cannot be read is a problem when declared. */
  function recordById(d: DesiredOrganisation, org: Organisation, member: boolean): void {
    slugsById.set(org.id, org.slug);
    if (org.slug !== d.slug) return slugMismatch(d, org);
    const billing = observeBilling(org.billing, true);
    if (!billing.known && d.billing !== undefined && member) {
      problems.push(problem(d.slug, `${where(d)}: the billing of organisation "${d.slug}" cannot be read (${billing.reason}); orgform will not send a billing update that could clear values it did not see. Nothing will be written for this organisation.`));
      return;
    }
    organisations.set(d.slug, observe(org, d.slug, member, billing));
  }

  /** Readable, but not in the listing of memberships: only an invitation to accept makes it writable. */
  function recordNonMember(d: DesiredOrganisation, org: Organisation): void {
    if (d.invitations.accept.length === 0) {
      problems.push(problem(d.slug, `${where(d)}: you are not a member of organisation id "${org.id}" (it is not among your organisations, though the service lets you read it). To join it, declare the invitation under invitations.accept.`));
      return;
    }
    slugsById.set(org.id, org.slug);
    if (org.slug !== d.slug) return slugMismatch(d, org);
    // Its billing is read again after the accept: what a non-member sees proves nothing about what a member writes over.
    organisations.set(d.slug, { slug: d.slug, id: org.id, member: false, billing: null });
  }

  if (desired.activeOrganisation) {
    const { slug, source } = desired.activeOrganisation;
    const known = listedBySlug.get(slug)?.id ?? organisations.get(slug)?.id;
    if (known === undefined && !problems.some((p) => p.organisation === slug)) {
      problems.push(problem(null, `${source.file}:${source.line}:${source.col}: activeOrganisation "${slug}" is not an organisation you belong to, and the file does not declare it with an id to join.`));
    }
  }

  problems.sort((a, b) => (a.address < b.address ? -1 : a.address > b.address ? 1 : 0));
  return { organisations, activeId, slugsById, problems };
}

function where(d: DesiredOrganisation): string {
  return `${d.source.file}:${d.source.line}:${d.source.col}`;
}
