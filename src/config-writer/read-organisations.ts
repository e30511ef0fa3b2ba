/**
 * What export needs from the service: every organisation you belong to (all pages), the active
 * one's id, and billing as GetOrganisation answers it. Reads only; nothing is written.
 */
import pLimit from 'p-limit';
import type { OrganisationsClient } from '../api/client.js';
import type { Organisation } from '../api/types.js';

export interface ReadOrganisationsOptions {
  /** Only organisations whose name or slug contains this (the service filters). */
  filter?: string;
  parallelism: number;
  /**
   * Which organisations need their billing: a listing may leave billing out, and those are then
   * read by id, so that the file never says "no billing" for billing not seen. Default: all of them.
   * An organisation not read keeps whatever the listing showed, possibly nothing.
   */
  needsBilling?: (org: Organisation) => boolean;
}

export interface ReadOrganisations {
  /** Only id, slug and billing are kept: a listing of 100,000 organisations is held whole. */
  organisations: Organisation[];
  /** The active organisation's id, or null when the listing cannot tell. */
  activeId: string | null;
}

export async function readOrganisations(client: OrganisationsClient, options: ReadOrganisationsOptions): Promise<ReadOrganisations> {
  const { filter } = options;
  const organisations: Organisation[] = [];
  let activeId: string | null = null;
  let first = true;
  for await (const page of client.listOrganisationPages(filter === undefined ? {} : { filter })) {
    // Interface rule 2: unfiltered, the first item of the first page is the active organisation.
    if (first && filter === undefined) activeId = page.organisations[0]?.id ?? null;
    first = false;
    for (const org of page.organisations) organisations.push({ id: org.id, slug: org.slug, ...(org.billing === undefined ? {} : { billing: org.billing }) });
  }
  if (filter !== undefined) {
    for await (const page of client.listOrganisationPages({ pageSize: 1 })) {
      activeId = page.organisations[0]?.id ?? null;
      break;
    }
  }
  const limit = pLimit(options.parallelism);
  const needsBilling = options.needsBilling ?? (() => true);
  await Promise.all(
    organisations.map((org, i) =>
      org.billing !== undefined || !needsBilling(org)
        ? undefined
        : limit(async () => {
            const read = await client.getOrganisation(org.id);
            organisations[i] = { id: org.id, slug: org.slug, ...(read.billing === undefined ? {} : { billing: read.billing }) };
          }),
    ),
  );
  return { organisations, activeId };
}
