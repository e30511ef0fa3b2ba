/**
 * Reads what the service holds for the declared organisations: one listing of all pages where it
 * answers what is needed (slugs, membership, billing, the active organisation), single reads with
 * bounded concurrency only for organisations the listing cannot answer (declared by id, not found
 * there: typically an invitation still to accept). Never writes.
 */
import pLimit from 'p-limit';
import { isNotFound } from '../api/api-error.js';
import type { OrganisationsClient } from '../api/client.js';
import { BILLING_RESPONSE_FIELD, BILLING_UPDATE_FIELDS, type Billing, type BillingUpdateField, type Organisation } from '../api/types.js';
import type { DesiredOrganisation, DesiredState } from '../config/types.js';
import { organisationAddress } from '../plan/address.js';
import type { ObservedOrganisation, PlanProblem } from '../plan/types.js';

export interface ObservedState {
  /** Observed organisations by declared slug; missing where a problem was recorded instead. */
  organisations: Map<string, ObservedOrganisation>;
  /** The active organisation's id (first item of the first unfiltered page), null when it was not read. */
  activeId: string | null;
  /** Slug of every organisation seen in the listing, by id, to show the current active one by name. */
  slugsById: Map<string, string>;
  problems: PlanProblem[];
}

export interface ReadOptions {
  parallelism: number;
  /** Above this many organisations declared by id, one listing is cheaper than single reads. */
  listingThreshold?: number;
}

export function observeBilling(billing: Billing | undefined): Record<BillingUpdateField, string | null> | null {
  if (billing === undefined) return null;
  const out = {} as Record<BillingUpdateField, string | null>;
  for (const field of BILLING_UPDATE_FIELDS) {
    const value = billing[BILLING_RESPONSE_FIELD[field]];
    out[field] = typeof value === 'string' ? value : null;
  }
  return out;
}

function observe(org: Organisation, slug: string, member: boolean): ObservedOrganisation {
  return { slug, id: org.id, member, billing: observeBilling(org.billing) };
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
  const needListing =
    desired.activeOrganisation !== undefined || withoutId.length > 0 || withId.length > (options.listingThreshold ?? 20);

  let activeId: string | null = null;
  const listedById = new Map<string, Organisation>();
  const listedBySlug = new Map<string, Organisation>();
  if (needListing) {
    let first = true;
    for await (const page of client.listOrganisationPages()) {
      if (first && page.organisations[0]) activeId = page.organisations[0].id;
      first = false;
      for (const org of page.organisations) {
        listedById.set(org.id, org);
        listedBySlug.set(org.slug, org);
        slugsById.set(org.id, org.slug);
      }
    }
  }

  for (const d of withoutId) {
    const org = listedBySlug.get(d.slug);
    if (org) organisations.set(d.slug, observe(org, d.slug, true));
    else {
      problems.push(
        problem(
          d.slug,
          `${where(d)}: organisation "${d.slug}" is not among the organisations you belong to. Check the slug; to accept an invitation to an organisation you are not a member of yet, declare its id (organisations.${d.slug}.id).`,
        ),
      );
    }
  }

  const limit = pLimit(options.parallelism);
  const singleReads: Promise<void>[] = [];
  for (const d of withId) {
    const id = d.id as string;
    const listed = listedById.get(id);
    if (listed) {
      recordById(d, listed, true);
      continue;
    }
    singleReads.push(
      limit(async () => {
        try {
          recordById(d, await client.getOrganisation(id), true);
        } catch (err) {
          if (isNotFound(err) && d.invitations.accept.length > 0) {
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
  await Promise.all(singleReads);

  function recordById(d: DesiredOrganisation, org: Organisation, member: boolean): void {
    slugsById.set(org.id, org.slug);
    if (org.slug !== d.slug) {
      problems.push(problem(d.slug, `${where(d)}: organisation id "${org.id}" has the slug "${org.slug}", not "${d.slug}". Rename the key to "${org.slug}" or fix the id.`));
      return;
    }
    organisations.set(d.slug, observe(org, d.slug, member));
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
