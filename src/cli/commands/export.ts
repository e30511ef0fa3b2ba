/**
 * `orgform export`: the current state of every organisation you belong to, as an orgs.yaml. Wiring
 * only: what the file says is decided in export/render-export.ts.
 */
import { lstat } from 'node:fs/promises';
import pLimit from 'p-limit';
import { dirname, relative, resolve, sep } from 'node:path';
import type { OrganisationsClient } from '../../api/client.js';
import type { Organisation } from '../../api/types.js';
import { UsageError } from '../../errors.js';
import { quoteYamlString } from '../../export/format-yaml-string.js';
import { DEFAULT_SCHEMA_PATH, renderExport } from '../../export/render-export.js';
import { selectExportable } from '../../export/select-exportable.js';
import { openClient, serviceKey } from '../command-context.js';
import type { CliIO, ExitCode } from '../io.js';
import { writeFileAtomically } from '../write-file-atomically.js';

export interface ExportFlags {
  baseUrl?: string;
  tokenFile?: string;
  token?: string;
  parallelism: number;
  out?: string;
  filter?: string;
  force?: boolean;
}

async function exists(path: string): Promise<boolean> {
  try {
    await lstat(path);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw err;
  }
}

/**
 * Every organisation (all pages) and the active one's id, or null when the listing cannot tell.
 * Only id, slug and billing are kept. A listing may leave billing out: those organisations are read
 * by id, `parallelism` at a time, so that the file never says "no billing" for billing not seen.
 */
async function readOrganisations(client: OrganisationsClient, filter: string | undefined, parallelism: number): Promise<{ organisations: Organisation[]; activeId: string | null }> {
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
  const limit = pLimit(parallelism);
  await Promise.all(
    organisations.map((org, i) =>
      org.billing !== undefined
        ? undefined
        : limit(async () => {
            const read = await client.getOrganisation(org.id);
            organisations[i] = { id: org.id, slug: org.slug, ...(read.billing === undefined ? {} : { billing: read.billing }) };
          }),
    ),
  );
  return { organisations, activeId };
}

/** The schema as the yaml-language-server resolves it: relative to the file, in node_modules of the working directory. */
function schemaPathFor(out: string, cwd: string): string {
  const path = relative(dirname(out), resolve(cwd, DEFAULT_SCHEMA_PATH)).split(sep).join('/');
  return path.startsWith('../') ? path : `./${path}`;
}

export async function run(flags: ExportFlags, io: CliIO): Promise<ExitCode> {
  const out = flags.out === undefined ? undefined : resolve(io.cwd, flags.out);
  if (out !== undefined && !flags.force && (await exists(out))) {
    throw new UsageError(`${flags.out} already exists. Nothing was written. Pass --force to overwrite it, or choose another --out.`);
  }
  const filter = flags.filter === '' ? undefined : flags.filter;
  const client = await openClient(flags, io);
  try {
    const { organisations, activeId } = await readOrganisations(client, filter, flags.parallelism);
    const text = renderExport(organisations, activeId, {
      baseUrl: serviceKey(client),
      ...(filter !== undefined && { filter }),
      ...(out !== undefined && { schema: schemaPathFor(out, io.cwd) }),
    });
    const selection = selectExportable(organisations, activeId);
    for (const org of selection.leftOut) {
      io.stderr.write(`Warning: left out organisation ${quoteYamlString(org.slug)} (id ${quoteYamlString(org.id)}): ${org.reason}.\n`);
    }
    for (const org of selection.organisations) {
      for (const note of org.leftOutFields) io.stderr.write(`Warning: organisation ${quoteYamlString(org.slug)}: left out ${note}.\n`);
    }
    if (out === undefined) {
      io.stdout.write(text);
      return 0;
    }
    await writeFileAtomically(out, text, flags.out);
    const count = selection.organisations.length;
    const active = selection.activeSlug === null ? '' : ` (active: ${selection.activeSlug})`;
    const leftOut = selection.leftOut.length === 0 ? '' : `; ${selection.leftOut.length} left out, see the warnings above`;
    io.stderr.write(`Exported ${count} organisation${count === 1 ? '' : 's'}${active} to ${flags.out}${leftOut}. Check it with: orgform plan -f ${flags.out}\n`);
    return 0;
  } finally {
    await client.close();
  }
}
