/**
 * The I/O around validation: expand -f paths (files, or directories of *.yaml and *.yml), read each
 * file with a size cap, hash it, parse it, then validate them all together.
 */
import { createHash } from 'node:crypto';
import { readdir, readlink, realpath, stat, type FileHandle } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { MAX_FILE_BYTES, parseSource, tooLargeMessage } from './parse-source.js';
import { sortProblems, toProblem } from './format-problem.js';
import { loadSchemaValidator } from './schema-validator.js';
import { appendAll, ConfigValidation, type LoadResult } from './validate-config.js';
import type { ConfigProblem } from '../model/config-problem.js';
import type { ConfigVariables } from './interpolate.js';
import { describeEscape, findWorkTree, openInTree, type WorkTree } from '../work-tree.js';

export type { LoadResult } from './validate-config.js';
export { formatProblem } from './format-problem.js';

export const DEFAULT_CONFIG_FILE = 'orgs.yaml';

export interface LoadOptions {
  /** Paths are resolved against this, and shown as given. */
  cwd: string;
  /** What `${ORGFORM_VAR_…}` in the files reads. */
  variables: ConfigVariables;
  /** Where configuration may be read from; by default the working tree that holds `cwd`. */
  tree?: WorkTree;
  /** In a CI job, its checkout: a working directory outside it gives the checkout's tree (findWorkTree). */
  checkout?: string;
}

function fileProblem(file: string, message: string): ConfigProblem {
  return { file, line: 1, col: 1, message };
}

function describeFsError(err: unknown): string {
  const code = (err as { code?: string }).code;
  if (code === 'ENOENT') return 'no such file or directory';
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  if (code === 'ELOOP') return 'a symbolic link that leads back to itself';
  return err instanceof Error ? err.message : String(err);
}

/** Why a symbolic link in a directory of orgs files cannot be followed. */
async function describeBrokenLink(path: string, err: unknown): Promise<string> {
  const target = await readlink(path).catch(() => undefined);
  const what = (err as { code?: string }).code === 'ENOENT' && target !== undefined ? `a symbolic link to ${JSON.stringify(target)}, which does not exist` : describeFsError(err);
  return `cannot read: ${what}. Its organisations would drop out of management: fix the link, or remove it`;
}

interface Expanded {
  files: string[];
  problems: ConfigProblem[];
  /** Every path that may appear in a problem, in the order given: problems are sorted by it. */
  order: string[];
}

/** A file or directory that leads out of the working tree (or into .git), refused before anything in it is read. */
function refusal(reason: string): string {
  return `refused, nothing in it was read: ${reason}. orgform reads configuration only from inside the repository's working tree (not its .git directory)`;
}

async function expandPaths(paths: readonly string[], cwd: string, tree: WorkTree): Promise<Expanded> {
  const files: string[] = [];
  const problems: ConfigProblem[] = [];
  const order: string[] = [];
  const seen = new Set<string>();
  const add = async (file: string) => {
    order.push(file);
    // The same file named twice (-f orgs.yaml -f .) is read once, not reported as declaring everything twice.
    const real = await realpath(resolve(cwd, file)).catch(() => resolve(cwd, file));
    if (seen.has(real)) return;
    seen.add(real);
    files.push(file);
  };

  for (const given of paths) {
    const escape = await describeEscape(tree, resolve(cwd, given), 'inside', given);
    if (escape !== undefined) {
      order.push(given);
      problems.push(fileProblem(given, refusal(escape)));
      continue;
    }
    let info;
    try {
      info = await stat(resolve(cwd, given));
    } catch (err) {
      order.push(given);
      const hint = given === DEFAULT_CONFIG_FILE && paths.length === 1 ? ` (name your files with -f)` : '';
      problems.push(fileProblem(given, `cannot read: ${describeFsError(err)}${hint}`));
      continue;
    }
    if (info.isDirectory()) {
      const entries = (await readdir(resolve(cwd, given), { withFileTypes: true }))
        .filter((e) => /\.ya?ml$/.test(e.name) && !e.name.startsWith('.'))
        .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      let found = 0;
      for (const { name } of entries) {
        const file = join(given, name);
        const away = await describeEscape(tree, resolve(cwd, file), 'inside', file);
        if (away !== undefined) {
          found += 1;
          order.push(file);
          problems.push(fileProblem(file, refusal(away)));
          continue;
        }
        let entry;
        try {
          entry = await stat(resolve(cwd, file));
        } catch (err) {
          // Listed, yet it cannot be followed: a dangling link, most likely. Skipping it would
          // silently leave its organisations out, as if the file had been deleted.
          found += 1;
          order.push(file);
          problems.push(fileProblem(file, await describeBrokenLink(resolve(cwd, file), err)));
          continue;
        }
        // A directory named *.yaml (or a link to one), a socket...: not an orgs file.
        if (!entry.isFile()) continue;
        found += 1;
        await add(file);
      }
      if (found === 0) {
        order.push(given);
        problems.push(fileProblem(given, 'no *.yaml or *.yml files in this directory'));
      }
    } else if (info.isFile()) {
      await add(given);
    } else {
      order.push(given);
      problems.push(fileProblem(given, 'not a regular file or a directory'));
    }
  }
  return { files, problems, order };
}

async function readCapped(tree: WorkTree, path: string, shown: string): Promise<{ ok: true; bytes: Buffer } | { ok: false; message: string }> {
  const opened = await openInTree(tree, path, 'inside', shown);
  if (!opened.ok) return { ok: false, message: refusal(opened.reason) };
  const handle: FileHandle = opened.handle;
  try {
    const info = await handle.stat();
    // Listed as a file, yet something else by now (a named pipe swapped in): never read from it.
    if (!info.isFile()) return { ok: false, message: 'not a regular file' };
    const { size } = info;
    // Checked before reading: a huge file is refused without loading it.
    if (size > MAX_FILE_BYTES) return { ok: false, message: tooLargeMessage(size) };
    const bytes = await handle.readFile();
    if (bytes.length > MAX_FILE_BYTES) return { ok: false, message: tooLargeMessage(bytes.length) };
    return { ok: true, bytes };
  } finally {
    await handle.close();
  }
}

/**
 * Reads and validates the files (default ./orgs.yaml): the DesiredState, or every problem in every
 * file, sorted by file (in the order read), line and column.
 */
export async function loadConfig(paths: string[], options: LoadOptions): Promise<LoadResult> {
  const given = paths.length > 0 ? paths : [DEFAULT_CONFIG_FILE];
  const tree = options.tree ?? (await findWorkTree(options.cwd, options.checkout));
  const { files, problems, order } = await expandPaths(given, options.cwd, tree);
  // Each file is checked as soon as it is parsed and its tree let go: a directory of bulk files
  // is never held in memory whole.
  const validation = new ConfigValidation({ variables: options.variables, validator: await loadSchemaValidator('orgs') });
  for (const file of files) {
    let read;
    try {
      read = await readCapped(tree, resolve(options.cwd, file), file);
    } catch (err) {
      problems.push(fileProblem(file, `cannot read: ${describeFsError(err)}`));
      continue;
    }
    if (!read.ok) {
      problems.push(fileProblem(file, read.message));
      continue;
    }
    const parsed = await parseSource(read.bytes);
    if (!parsed.ok) {
      for (const positioned of parsed.problems) problems.push(toProblem(file, positioned));
      continue;
    }
    validation.add({ file, sha256: createHash('sha256').update(read.bytes).digest('hex'), root: parsed.root });
  }
  const validated = validation.finish();
  if (problems.length === 0) return validated;
  if (!validated.ok) appendAll(problems, validated.problems);
  return { ok: false, problems: sortProblems(problems, order), warnings: sortProblems(validated.warnings, order) };
}
