/**
 * The files of a file state, all beside the journal's real place R (a state path that is a
 * symbolic link is followed to its target, so that every name leading to one journal shares its
 * lock, and a fold replaces the target, never the link):
 *
 *   R                 the base: a header line, then one entry line each, sorted (folds write it)
 *   R.<run>.log       one append-only log per run (its lock ID), never appended to once it ends
 *   R.log             the log of an orgform before version 2's base, read and folded in
 *   R.lock            the lock table: every run holding the state, and the one folding it
 *   R.lock.gate       a short mutex, held while the table is changed
 *
 * R is refused, before any lock, if it is there and is not a regular file of one name: a named
 * pipe would hang every read, and a rename over a file with other hard links would leave those
 * names behind. Every later open of these files refuses links and never blocks.
 */
import { constants, type Stats } from 'node:fs';
import { lstat, open, readdir, realpath, stat, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { OrgformError } from '../../errors.js';
import { literalPattern } from '../orphan-files.js';
import { describeKind } from '../write-file-atomically.js';

export class StateFiles {
  private constructor(
    /** The path as given (--state, ORGFORM_STATE or the default), for messages. */
    readonly given: string,
    /** The journal's real place: R. */
    readonly base: string,
  ) {}

  /** The files of the state at `path`: links followed; a path that is not a regular file of one name refused. */
  static async resolve(path: string): Promise<StateFiles> {
    let info: Stats;
    try {
      info = await lstat(path);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      return new StateFiles(path, join(await realDirectory(dirname(path)), basename(path)));
    }
    let base = path;
    if (info.isSymbolicLink()) {
      try {
        base = await realpath(path);
        info = await stat(base);
      } catch (err) {
        throw refusedPathError(path, `it is a symbolic link to something that does not exist (${(err as NodeJS.ErrnoException).code ?? 'unreadable'})`, 'remove the link, or point it at the journal');
      }
    }
    checkRegular(path, info);
    return new StateFiles(path, base);
  }

  /** The names the state's files have beside `path` (before any link is followed): what a work tree's check covers. */
  static namesBeside(path: string): string[] {
    return [path, `${path}.log`, `${path}.lock`, `${path}.lock.gate`];
  }

  get dir(): string {
    return dirname(this.base);
  }

  get lockTable(): string {
    return `${this.base}.lock`;
  }

  get gate(): string {
    return `${this.base}.lock.gate`;
  }

  get legacyLog(): string {
    return `${this.base}.log`;
  }

  logFor(run: string): string {
    return `${this.base}.${run}.log`;
  }

  /** The run a log belongs to (undefined: an older orgform's log, R.log). */
  runOf(log: string): string | undefined {
    return log === this.legacyLog ? undefined : basename(log).slice(basename(this.base).length + 1, -'.log'.length);
  }

  /** Every log beside the base, the older orgform's first, then the runs' in name order. */
  async listLogs(): Promise<string[]> {
    let names: string[];
    try {
      names = await readdir(this.dir);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw err;
    }
    const name = basename(this.base);
    const run = new RegExp(`^${literalPattern(name)}\\.[0-9a-f]{12}\\.log$`);
    const logs = names.filter((n) => run.test(n)).sort();
    if (names.includes(`${name}.log`)) logs.unshift(`${name}.log`);
    return logs.map((n) => join(this.dir, n));
  }
}

/** The nearest directory that exists, its links resolved, with the rest of `dir` below it. */
async function realDirectory(dir: string): Promise<string> {
  try {
    return await realpath(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || dirname(dir) === dir) throw err;
    return join(await realDirectory(dirname(dir)), basename(dir));
  }
}

function checkRegular(shown: string, info: Stats): void {
  if (info.isDirectory()) throw refusedPathError(shown, 'it is a directory', 'give --state the path of a file, in it or elsewhere');
  if (!info.isFile()) throw refusedPathError(shown, `it is not a regular file (${describeKind(info)})`, 'give --state the path of a file');
  if (info.nlink > 1) {
    throw refusedPathError(shown, `it has ${info.nlink} hard links, and a fold would leave the other names with the old journal`, `make it a file of its own (cp ${shown} copy && mv copy ${shown})`);
  }
}

/** A state path orgform will not use: why, that nothing was touched, and what to do. */
export function refusedPathError(shown: string, why: string, todo: string): OrgformError {
  return new OrgformError('STATE_INVALID', `The state ${shown} cannot be used: ${why}. Nothing was locked, read or written; ${todo}.`);
}

/**
 * Opens one of the state's files to read, or undefined if it is not there. A link is refused
 * (O_NOFOLLOW), the open never blocks (a FIFO put there meanwhile), and anything but a regular
 * file is refused: what was checked by name is what is read.
 */
export async function openToRead(path: string, shown: string): Promise<FileHandle | undefined> {
  let handle: FileHandle;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    if (code === 'ELOOP') throw refusedPathError(shown, `${path} became a symbolic link`, 'remove the link');
    throw err;
  }
  try {
    const info = await handle.stat();
    if (!info.isFile()) throw refusedPathError(shown, `${path} is not a regular file (${describeKind(info)})`, 'move it aside');
    return handle;
  } catch (err) {
    await handle.close();
    throw err;
  }
}
