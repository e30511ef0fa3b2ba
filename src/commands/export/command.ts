/**
 * `orgform export`: the current state of every organisation you belong to, as an orgs.yaml; or,
 * with -f (or --diff, --write), the orgs.yaml you have brought in line with the service, in place.
 * Wiring only: what a new file says is decided in export/render-export.ts, what changes in an
 * existing one in export/update-document.ts.
 */
import { createHash } from 'node:crypto';
import { lstat, readFile } from 'node:fs/promises';
import { dirname, relative, resolve, sep } from 'node:path';
import { UsageError } from '../../errors.js';
import { createFilePatch } from '../../export/create-file-patch.js';
import { describeUpdates } from '../../export/describe-updates.js';
import { quoteYamlString } from '../../export/format-yaml-string.js';
import { terminalSafe } from '../../text/ansi.js';
import { readOrganisations } from '../../export/read-organisations.js';
import { DEFAULT_SCHEMA_PATH, renderExport } from '../../export/render-export.js';
import { selectExportable } from '../../export/select-exportable.js';
import { updateDocument } from '../../export/update-document.js';
import { loadDesiredState } from '../../plan/read/load-desired-state.js';
import { serviceKey } from '../../api/connect/service-key.js';
import { openClient } from '../../api/connect/open-client.js';
import type { CliIO, ExitCode } from '../../io.js';
import { checkUnchanged, inspectTarget, writeFileAtomically } from '../../state/write-file-atomically.js';

export interface ExportFlags {
  baseUrl?: string;
  tokenFile?: string;
  token?: string;
  parallelism: number;
  out?: string;
  filter?: string;
  force?: boolean;
  /** The orgs.yaml files to update (default ./orgs.yaml once --diff or --write is given). */
  file?: string[];
  diff?: boolean;
  write?: boolean;
  detailedExitcode?: boolean;
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

/** --out as an absolute path, refused when it exists and --force was not given (before any request). */
async function outPath(flags: ExportFlags, io: CliIO): Promise<string | undefined> {
  const out = flags.out === undefined ? undefined : resolve(io.cwd, flags.out);
  if (out !== undefined && !flags.force && (await exists(out))) {
    throw new UsageError(`${flags.out} already exists. Nothing was written. Pass --force to overwrite it, or choose another --out.`);
  }
  return out;
}

export async function run(flags: ExportFlags, io: CliIO): Promise<ExitCode> {
  if (flags.file !== undefined || flags.diff === true || flags.write === true) return updateInPlace(flags, io);
  if (flags.detailedExitcode) throw new UsageError('--detailed-exitcode compares the service with a file: add -f FILE (and --diff or --write).');
  const out = await outPath(flags, io);
  const filter = flags.filter === '' ? undefined : flags.filter;
  const client = await openClient(flags, io);
  try {
    const { organisations, activeId } = await readOrganisations(client, { ...(filter !== undefined && { filter }), parallelism: flags.parallelism });
    const text = renderExport(organisations, activeId, {
      baseUrl: serviceKey(client),
      ...(filter !== undefined && { filter }),
      ...(out !== undefined && { schema: schemaPathFor(out, io.cwd) }),
    });
    const selection = selectExportable(organisations, activeId);
    for (const org of selection.leftOut) {
      io.stderr.write(`Warning: ${terminalSafe(`left out organisation ${quoteYamlString(org.slug)} (id ${quoteYamlString(org.id)}): ${org.reason}`)}.\n`);
    }
    for (const org of selection.organisations) {
      for (const note of org.leftOutFields) io.stderr.write(`Warning: ${terminalSafe(`organisation ${quoteYamlString(org.slug)}: left out ${note}`)}.\n`);
    }
    if (out === undefined) {
      io.stdout.write(text);
      return 0;
    }
    await writeFileAtomically(out, text, { shown: flags.out as string, option: '--out' });
    const count = selection.organisations.length;
    const active = selection.activeSlug === null ? '' : ` (active: ${terminalSafe(selection.activeSlug)})`;
    const leftOut = selection.leftOut.length === 0 ? '' : `; ${selection.leftOut.length} left out, see the warnings above`;
    io.stderr.write(`Exported ${count} organisation${count === 1 ? '' : 's'}${active} to ${flags.out}${leftOut}. Check it with: orgform plan -f ${flags.out}\n`);
    return 0;
  } finally {
    await client.close();
  }
}

/** The SHA-256 that the loader recorded: the file is updated only as it was validated. */
function sha256(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}

async function updateInPlace(flags: ExportFlags, io: CliIO): Promise<ExitCode> {
  if (flags.filter !== undefined) throw new UsageError('--filter does not combine with -f, --diff or --write: the file says which organisations to compare. Leave out --filter.');
  if (flags.out !== undefined && (flags.write || flags.diff)) throw new UsageError('--out writes the updated file elsewhere; it does not combine with --diff or --write. Use one of them.');
  const out = await outPath(flags, io);
  // Validated as plan reads them: an invalid file is every problem as FILE:LINE:COL, before any request.
  const { desired } = await loadDesiredState({ files: flags.file ?? [] }, io);
  const files = desired.files;
  if (files.length > 1 && !flags.diff && !flags.write) {
    throw new UsageError(`${files.length} files were read (${files.map((f) => f.path).join(', ')}): pass --diff to see the changes as one patch, or --write to update them.`);
  }
  const texts = await Promise.all(
    files.map(async (file) => {
      const bytes = await readFile(resolve(io.cwd, file.path));
      if (sha256(bytes) !== file.sha256) throw new UsageError(`${file.path} changed while export was reading it. Nothing was written; run export again.`);
      return bytes.toString('utf8');
    }),
  );
  // Files that --write may replace, checked before the service is read (a directory, a hard link…).
  if (flags.write) for (const file of files) await inspectTarget(resolve(io.cwd, file.path), { shown: file.path, option: '-f' });
  // Billing is read by id only where the file declares some (by the organisation's id or slug).
  const withBilling = new Set(desired.organisations.filter((o) => o.billing !== undefined).flatMap((o) => [`slug:${o.slug}`, `id:${o.id ?? ''}`]));
  const client = await openClient(flags, io);
  let live;
  try {
    live = await readOrganisations(client, { parallelism: flags.parallelism, needsBilling: (o) => withBilling.has(`id:${o.id}`) || withBilling.has(`slug:${o.slug}`) });
  } finally {
    await client.close();
  }
  const updates = files.map((file, i) => ({ path: file.path, sha256: file.sha256, before: texts[i] as string, ...updateDocument(file.path, texts[i] as string, live, io.env) }));
  for (const update of updates) for (const warning of update.warnings) io.stderr.write(`Warning: ${terminalSafe(warning)}.\n`);
  const changed = updates.filter((u) => u.text !== u.before);
  if (flags.diff) {
    for (const u of changed) io.stdout.write(createFilePatch(relative(io.cwd, resolve(io.cwd, u.path)).split(sep).join('/'), u.before, u.text));
  }
  if (flags.write) {
    // The files were read before the service, which may have taken a while: an edit made meanwhile
    // must not be lost. All are checked first, so that none is written when one has changed; each
    // is checked again right before it is replaced.
    const targets = changed.map((u) => ({ path: resolve(io.cwd, u.path), file: { shown: u.path, option: '-f', madeFrom: u.sha256 }, text: u.text }));
    for (const t of targets) await checkUnchanged(t.path, t.file);
    for (const t of targets) await writeFileAtomically(t.path, t.text, t.file);
  }
  if (!flags.diff && !flags.write) {
    if (out === undefined) io.stdout.write(updates[0]?.text ?? '');
    else {
      // --out naming the -f file itself (with --force) is an update in place too: an edit made meanwhile is kept.
      const first = updates[0];
      const same = first !== undefined && resolve(io.cwd, first.path) === out;
      await writeFileAtomically(out, first?.text ?? '', { shown: flags.out as string, option: '--out', ...(same ? { madeFrom: first.sha256 } : {}) });
    }
  }
  const declared = new Set(desired.organisations.flatMap((o) => [`slug:${o.slug}`, `id:${o.id ?? ''}`]));
  const undeclared = live.organisations.filter((o) => !declared.has(`id:${o.id}`) && !declared.has(`slug:${o.slug}`)).length;
  for (const line of describeUpdates(updates, { mode: flags.write ? 'write' : flags.diff ? 'diff' : 'print', undeclared })) io.stderr.write(`${line}\n`);
  const drift = updates.some((u) => u.changes.length > 0 || u.warnings.length > 0);
  return flags.detailedExitcode && drift ? 2 : 0;
}
