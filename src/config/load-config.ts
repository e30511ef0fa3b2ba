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
  const expansion = new PathExpansion(cwd, tree);
  for (const given of paths) await expansion.expand(given, paths.length === 1);
  return { files: expansion.files, problems: expansion.problems, order: expansion.order };
}

/** The -f paths as files to read, in order, each once; what cannot be read, as problems. */
class PathExpansion {
  readonly files: string[] = [];
  readonly problems: ConfigProblem[] = [];
  readonly order: string[] = [];
  private readonly seen = new Set<string>();

  constructor(
    private readonly cwd: string,
    private readonly tree: WorkTree,
  ) {}

  async expand(given: string, alone: boolean): Promise<void> {
    const escape = await describeEscape(this.tree, resolve(this.cwd, given), 'inside', given);
    if (escape !== undefined) return this.refuse(given, refusal(escape));
    let info;
    try {
      info = await stat(resolve(this.cwd, given));
    } catch (err) {
      const hint = given === DEFAULT_CONFIG_FILE && alone ? ` (name your files with -f)` : '';
      return this.refuse(given, `cannot read: ${describeFsError(err)}${hint}`);
    }
    if (info.isDirectory()) return this.expandDirectory(given);
    if (info.isFile()) return this.add(given);
    this.refuse(given, 'not a regular file or a directory');
  }

  /** Every *.yaml and *.yml of the directory, sorted by name; a directory without any is a problem. */
  private async expandDirectory(given: string): Promise<void> {
    const entries = (await readdir(resolve(this.cwd, given), { withFileTypes: true }))
      .filter((e) => /\.ya?ml$/.test(e.name) && !e.name.startsWith('.'))
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    let found = 0;
    for (const { name } of entries) if (await this.expandEntry(join(given, name))) found += 1;
    if (found === 0) this.refuse(given, 'no *.yaml or *.yml files in this directory');
  }

  /** One entry of a directory; false when it is not an orgs file at all (a directory named *.yaml, a socket...). */
  private async expandEntry(file: string): Promise<boolean> {
    const away = await describeEscape(this.tree, resolve(this.cwd, file), 'inside', file);
    if (away !== undefined) {
      this.refuse(file, refusal(away));
      return true;
    }
    let entry;
    try {
      entry = await stat(resolve(this.cwd, file));
    } catch (err) {
      // Listed, yet it cannot be followed: a dangling link, most likely. Skipping it would
      // silently leave its organisations out, as if the file had been deleted.
      this.refuse(file, await describeBrokenLink(resolve(this.cwd, file), err));
      return true;
    }
    if (!entry.isFile()) return false;
    await this.add(file);
    return true;
  }

  /** The same file named twice (-f orgs.yaml -f .) is read once, not reported as declaring everything twice. */
  private async add(file: string): Promise<void> {
    this.order.push(file);
    const real = await realpath(resolve(this.cwd, file)).catch(() => resolve(this.cwd, file));
    if (this.seen.has(real)) return;
    this.seen.add(real);
    this.files.push(file);
  }

  private refuse(path: string, message: string): void {
    this.order.push(path);
    this.problems.push(fileProblem(path, message));
  }
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
