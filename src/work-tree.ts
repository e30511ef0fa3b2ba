/**
 * The repository's working tree, and whether a path stays in it once every link is followed. A
 * pull request controls the files of the tree, links included; it does not control the options the
 * pipeline passes. So a configuration file must lie in the tree, and any other path orgform is
 * given (a file it writes, a saved plan, the journal, a token file) that names a place in the tree
 * must stay there: a link the pull request planted cannot send a read or a write out of it, nor
 * into `.git` (the checkout's credentials are in `.git/config`).
 */
import { constants as bufferConstants } from 'node:buffer';
import { constants } from 'node:fs';
import { lstat, open, readlink, realpath, stat, type FileHandle } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, parse, relative, resolve, sep } from 'node:path';

export interface WorkTree {
  /** The directory holding `.git`, or the working directory where there is none. */
  root: string;
  /** `root` with its links followed: what real paths are compared with. */
  real: string;
}

/** Links followed before giving up, as the kernel does (ELOOP). */
const MAX_LINKS = 40;
/** A link's target as shown: what the pull request wrote, cut. */
const MAX_TARGET_SHOWN = 200;

async function exists(path: string): Promise<boolean> {
  return lstat(path).then(
    () => true,
    () => false,
  );
}

/**
 * The enclosing git working tree of `cwd` (found by walking up to a `.git` entry), else `cwd`. In
 * a CI job, a working directory outside the job's `checkout` (ci/ci-settings.ts's jobCheckout: a
 * `working-directory` that the pull request made a link to a directory of the runner, where the
 * process only sees where it leads) gives the checkout's tree, so that nothing there counts as in
 * the repository.
 */
export async function findWorkTree(cwd: string, checkout?: string): Promise<WorkTree> {
  if (checkout !== undefined) {
    const [real, here] = await Promise.all([realpath(checkout).catch(() => undefined), realpath(cwd).catch(() => resolve(cwd))]);
    if (real !== undefined && within(real, here) === undefined) return findWorkTree(real);
  }
  const start = resolve(cwd);
  let root = start;
  for (let dir = start; ; dir = dirname(dir)) {
    if (await exists(join(dir, '.git'))) {
      root = dir;
      break;
    }
    if (dirname(dir) === dir) break;
  }
  return { root, real: await realpath(root).catch(() => root) };
}

/** `path` relative to `dir` when it lies inside it (or is it: ''), else undefined. */
function within(dir: string, path: string): string | undefined {
  const rel = relative(dir, path);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel)) ? rel : undefined;
}

function inGitDir(rel: string): boolean {
  // Case-insensitively: on macOS and Windows `.GIT` is the same directory.
  return rel.split(sep).some((segment) => segment.toLowerCase() === '.git');
}

/** Whether `path` (absolute, nothing followed) is written as a place in the tree. */
export function namesPlaceInTree(tree: WorkTree, path: string): boolean {
  return within(tree.root, path) !== undefined || within(tree.real, path) !== undefined;
}

/**
 * `path` with every link followed, including a last one that leads nowhere (what a write would
 * create); throws ELOOP on a loop of links.
 */
export async function followLinks(path: string, hops = 0): Promise<string> {
  if (hops > MAX_LINKS) throw Object.assign(new Error('too many symbolic links'), { code: 'ELOOP' });
  try {
    return await realpath(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT' && code !== 'ENOTDIR') throw err;
  }
  const parent = dirname(path);
  if (parent === path) return path;
  const realParent = await followLinks(parent, hops + 1);
  const here = join(realParent, basename(path));
  const info = await lstat(here).catch(() => undefined);
  if (info?.isSymbolicLink()) return followLinks(resolve(realParent, await readlink(here)), hops + 1);
  return here;
}

/** The first link on the way to `path`, below `from` (a directory it lies in), and what it holds. */
async function firstLink(from: string, path: string): Promise<{ link: string; target: string } | undefined> {
  const rel = relative(from, path);
  let at = from;
  for (const segment of rel === '' ? [] : rel.split(sep)) {
    at = join(at, segment);
    const info = await lstat(at).catch(() => undefined);
    if (info === undefined) return undefined;
    if (info.isSymbolicLink()) return { link: at, target: await readlink(at) };
  }
  return undefined;
}

function showTarget(target: string): string {
  const cut = target.length > MAX_TARGET_SHOWN ? `${target.slice(0, MAX_TARGET_SHOWN)}…` : target;
  return JSON.stringify(cut);
}

export type Rule =
  /** A configuration file: in the tree, wherever it is named from. */
  | 'inside'
  /** Any other path: where it is written as a place in the tree, it must stay there. */
  | 'stay';

/**
 * Why `path` (absolute) may not be used under `rule`, or undefined when it may. The reason names
 * the link that leads away and what it holds (never what is behind it), and says where it leads:
 * out of the tree, or into `.git`. `shown` is how the caller names `path` to the reader.
 */
export async function describeEscape(tree: WorkTree, path: string, rule: Rule, shown: string): Promise<string | undefined> {
  const written = within(tree.root, path) ?? within(tree.real, path);
  if (rule === 'stay' && written === undefined) return undefined;
  let real: string;
  try {
    real = await followLinks(path);
  } catch (err) {
    // A loop leads nowhere, out of the tree no more than in it: using it fails as it would anyway.
    if ((err as NodeJS.ErrnoException).code === 'ELOOP') return undefined;
    throw err;
  }
  const rel = within(tree.real, real);
  if (rel !== undefined && !inGitDir(rel)) return undefined;
  const where = rel === undefined ? `outside the repository's working tree (${tree.root})` : `into the repository's .git directory`;
  const from = written === undefined ? parse(path).root : within(tree.root, path) !== undefined ? tree.root : tree.real;
  const link = await firstLink(from, path).catch(() => undefined);
  if (link !== undefined) {
    const inTree = within(tree.root, link.link);
    const name = link.link === path ? shown : `${inTree === undefined ? link.link : inTree} (on the way to ${shown})`;
    return `${name} is a symbolic link to ${showTarget(link.target)}, which leads ${where}`;
  }
  return rel === undefined ? `${shown} is ${where}` : `${shown} is in the repository's .git directory`;
}

/** The real path of an open file (what was opened, whatever its name has become since), or undefined if unknown. */
async function realPathOfHandle(handle: FileHandle, opened: string): Promise<string | undefined> {
  // Linux names the file behind a descriptor; elsewhere, the name must still lead to the same file.
  const named = await readlink(`/proc/self/fd/${handle.fd}`).catch(() => undefined);
  if (named !== undefined && isAbsolute(named)) return named;
  const [now, then] = await Promise.all([handle.stat(), stat(opened).catch(() => undefined)]);
  return then !== undefined && then.dev === now.dev && then.ino === now.ino ? opened : undefined;
}

export type OpenInTree = { ok: true; handle: FileHandle } | { ok: false; reason: string };

/**
 * Opens `path` for reading if `rule` allows it, checked twice: by name before it is opened, and by
 * what was opened, so that a link swapped in between is caught. Opened without blocking (a named
 * pipe) and without following a last link (the name checked is the real one), read by nothing here.
 */
export async function openInTree(tree: WorkTree, path: string, rule: Rule, shown: string): Promise<OpenInTree> {
  const reason = await describeEscape(tree, path, rule, shown);
  if (reason !== undefined) return { ok: false, reason };
  const real = await followLinks(path);
  const handle = await open(real, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
  const opened = await realPathOfHandle(handle, real);
  const rel = opened === undefined ? undefined : within(tree.real, opened);
  const stays = rule === 'stay' && !namesPlaceInTree(tree, path) ? opened === real : rel !== undefined && !inGitDir(rel);
  if (stays) return { ok: true, handle };
  await handle.close();
  return { ok: false, reason: `${shown} changed while it was opened (a link swapped in?)` };
}

/**
 * The most bytes read as one text: V8's longest string, in UTF-16 units. UTF-8 never gives more
 * characters than bytes, so a file of at most this many bytes always fits; a larger one is refused
 * before it is read, rather than failing inside the read with no word of why.
 */
export const MAX_TEXT_BYTES = bufferConstants.MAX_STRING_LENGTH;

export type ReadTextInTree = { ok: true; text: string } | { ok: false; reason: string; tooLarge?: { bytes: number; limit: number } };

/** The whole text of `path` if `rule` allows it (see openInTree), or why not. */
export async function readTextInTree(tree: WorkTree, path: string, rule: Rule, shown: string): Promise<ReadTextInTree> {
  const opened = await openInTree(tree, path, rule, shown);
  if (!opened.ok) return opened;
  try {
    const stats = await opened.handle.stat();
    if (!stats.isFile()) return { ok: false, reason: `${shown} is not a regular file` };
    if (stats.size > MAX_TEXT_BYTES) {
      return { ok: false, reason: `${shown} is ${stats.size} bytes, more than the ${MAX_TEXT_BYTES} that can be read as one text`, tooLarge: { bytes: stats.size, limit: MAX_TEXT_BYTES } };
    }
    return { ok: true, text: await opened.handle.readFile('utf8') };
  } finally {
    await opened.handle.close();
  }
}
