/**
 * `orgform export`, start to finish: a new orgs.yaml from every organisation you belong to, or the
 * orgs.yaml files you brought, brought in line with the service. What a new file says is decided in
 * export/render-export.ts, what changes in an existing one in export/update-document.ts; this reads,
 * writes and tells the view.
 *
 *   new file:  check --out → connect → read → render → warn → write or print → report
 *   update:    load and validate the files → connect → read → update → warn → patch, write or print → report
 */
import { createHash } from 'node:crypto';
import { lstat, readFile } from 'node:fs/promises';
import { dirname, relative, resolve, sep } from 'node:path';
import { serviceKeyOf, type OpenClient } from '../../api/connect/open-client.js';
import { UsageError } from '../../errors.js';
import { createFilePatch } from '../../config-writer/create-file-patch.js';
import { describeUpdates } from '../../config-writer/describe-updates.js';
import { readOrganisations } from '../../config-writer/read-organisations.js';
import { DEFAULT_SCHEMA_PATH, renderExport } from '../../config-writer/render-export.js';
import { selectExportable } from '../../config-writer/select-exportable.js';
import { updateDocument } from '../../config-writer/update-document.js';
import { loadDesiredState, type FileWorld } from '../../plan/read/load-desired-state.js';
import { checkUnchanged, inspectTarget, writeFileAtomically, type UserFile } from '../../state/write-file-atomically.js';
import { findWorkTree } from '../../work-tree.js';
import { describeExisting } from '../../text/describe-files.js';
import type { ExportView } from './view.js';

export interface ExportInputs {
  parallelism: number;
  /** --out as given. */
  out?: string;
  filter?: string;
  force?: boolean;
  /** The orgs.yaml files to update (default ./orgs.yaml once --diff or --write is given). */
  files?: string[];
  diff?: boolean;
  write?: boolean;
}

/** Where the -f files are read from (and what `${ORGFORM_VAR_…}` in them reads), and the service. */
export interface ExportDeps extends FileWorld {
  openClient: OpenClient;
}

/** What was found: whether an update would change a file or leave something out (--detailed-exitcode). */
export interface ExportOutcome {
  drift: boolean;
}

/** A new orgs.yaml from what the service holds, printed or written to --out. */
export async function runExport(inputs: ExportInputs, deps: ExportDeps, view: ExportView): Promise<ExportOutcome> {
  const out = await outPath(inputs, deps.cwd);
  const filter = inputs.filter === '' ? undefined : inputs.filter;
  // Connect: from here on the client tells the view itself.
  const { client } = await deps.openClient({ events: view });
  try {
    const { organisations, activeId } = await readOrganisations(client, { ...(filter !== undefined && { filter }), parallelism: inputs.parallelism });
    const text = renderExport(organisations, activeId, {
      baseUrl: serviceKeyOf(client),
      ...(filter !== undefined && { filter }),
      ...(out !== undefined && { schema: schemaPathFor(out.path, deps.cwd) }),
    });
    const selection = selectExportable(organisations, activeId);
    for (const org of selection.leftOut) view.organisationLeftOut(org);
    for (const org of selection.organisations) for (const note of org.leftOutFields) view.fieldLeftOut(org, note);
    if (out === undefined) {
      view.document(text);
      return { drift: false };
    }
    await writeFileAtomically(out.path, text, out.file);
    view.exported({ count: selection.organisations.length, activeSlug: selection.activeSlug, leftOut: selection.leftOut.length, shown: inputs.out as string });
    return { drift: false };
  } finally {
    await client.close();
  }
}

/** The orgs.yaml files brought in line with the service: printed, written to --out, shown as a patch (--diff) or written in place (--write). */
export async function runUpdate(inputs: ExportInputs, deps: ExportDeps, view: ExportView): Promise<ExportOutcome> {
  const out = await outPath(inputs, deps.cwd);
  // Validated as plan reads them: an invalid file is every problem as FILE:LINE:COL, before any request.
  const { desired } = await loadDesiredState({ files: inputs.files ?? [] }, deps);
  const files = desired.files;
  if (files.length > 1 && !inputs.diff && !inputs.write) {
    throw new UsageError(`${files.length} files were read (${files.map((f) => f.path).join(', ')}): pass --diff to see the changes as one patch, or --write to update them.`);
  }
  const texts = await Promise.all(
    files.map(async (file) => {
      const bytes = await readFile(resolve(deps.cwd, file.path));
      if (sha256(bytes) !== file.sha256) throw new UsageError(`${file.path} changed while export was reading it. Nothing was written; run export again.`);
      return bytes.toString('utf8');
    }),
  );
  // Files that --write may replace, checked before the service is read (a directory, a hard link…).
  const tree = await findWorkTree(deps.cwd);
  if (inputs.write) for (const file of files) await inspectTarget(resolve(deps.cwd, file.path), { shown: file.path, option: '-f', tree });
  // Billing is read by id only where the file declares some (by the organisation's id or slug).
  const withBilling = new Set(desired.organisations.filter((o) => o.billing !== undefined).flatMap((o) => [`slug:${o.slug}`, `id:${o.id ?? ''}`]));
  // Connect: from here on the client tells the view itself.
  const { client } = await deps.openClient({ events: view });
  let live;
  try {
    live = await readOrganisations(client, { parallelism: inputs.parallelism, needsBilling: (o) => withBilling.has(`id:${o.id}`) || withBilling.has(`slug:${o.slug}`) });
  } finally {
    await client.close();
  }
  const updates = files.map((file, i) => ({ path: file.path, sha256: file.sha256, before: texts[i] as string, ...updateDocument(file.path, texts[i] as string, live, deps.configVariables ?? {}) }));
  for (const update of updates) for (const warning of update.warnings) view.warn(warning);
  const changed = updates.filter((u) => u.text !== u.before);
  if (inputs.diff) {
    for (const u of changed) view.document(createFilePatch(relative(deps.cwd, resolve(deps.cwd, u.path)).split(sep).join('/'), u.before, u.edits ?? u.text));
  }
  if (inputs.write) {
    // The files were read before the service, which may have taken a while: an edit made meanwhile
    // must not be lost. All are checked first, so that none is written when one has changed; each
    // is checked again right before it is replaced.
    const targets = changed.map((u) => ({ path: resolve(deps.cwd, u.path), file: { shown: u.path, option: '-f', tree, madeFrom: u.sha256 }, text: u.text }));
    for (const t of targets) await checkUnchanged(t.path, t.file);
    for (const t of targets) await writeFileAtomically(t.path, t.text, t.file);
  }
  if (!inputs.diff && !inputs.write) {
    if (out === undefined) view.document(updates[0]?.text ?? '');
    else {
      // --out naming the -f file itself (with --force) is an update in place too: an edit made meanwhile is kept.
      const first = updates[0];
      const same = first !== undefined && resolve(deps.cwd, first.path) === out.path;
      await writeFileAtomically(out.path, first?.text ?? '', { ...out.file, ...(same ? { madeFrom: first.sha256 } : {}) });
    }
  }
  const declared = new Set(desired.organisations.flatMap((o) => [`slug:${o.slug}`, `id:${o.id ?? ''}`]));
  const undeclared = live.organisations.filter((o) => !declared.has(`id:${o.id}`) && !declared.has(`slug:${o.slug}`)).length;
  view.updated(describeUpdates(updates, { mode: inputs.write ? 'write' : inputs.diff ? 'diff' : 'print', undeclared }));
  return { drift: updates.some((u) => u.changes.length > 0 || u.warnings.length > 0) };
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

/** The schema as the yaml-language-server resolves it: relative to the file, in node_modules of the working directory. */
function schemaPathFor(out: string, cwd: string): string {
  const path = relative(dirname(out), resolve(cwd, DEFAULT_SCHEMA_PATH)).split(sep).join('/');
  return path.startsWith('../') ? path : `./${path}`;
}

/**
 * --out as an absolute path and how to write it, refused before any request when it exists and
 * --force was not given, or when writeFileAtomically would refuse it.
 */
async function outPath(inputs: ExportInputs, cwd: string): Promise<{ path: string; file: UserFile } | undefined> {
  if (inputs.out === undefined) return undefined;
  const path = resolve(cwd, inputs.out);
  if (!inputs.force && (await exists(path))) {
    throw new UsageError(describeExisting([inputs.out], 'choose another --out'));
  }
  const file = { shown: inputs.out, option: '--out', tree: await findWorkTree(cwd) };
  await inspectTarget(path, file);
  return { path, file };
}

/** The SHA-256 that the loader recorded: the file is updated only as it was validated. */
function sha256(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}
