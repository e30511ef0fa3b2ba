/**
 * The one way orgform writes a file whole or not at all: the text goes to a temp file beside the
 * target and is fsynced there, the temp file is renamed over the target, and the directory is
 * fsynced, so that a reader (or a crash) never sees half a journal, half a plan or half an
 * orgs.yaml. The state journal uses `replaceFile`; the lock shares the first step
 * (`writeDurableFile`) and then links its temp file into place instead of renaming it, so that an
 * existing lock is never replaced; files that a user names (saved plans, exports, reports, the
 * emulator's --save) go through `writeFileAtomically`, which also checks what it is about to
 * replace and keeps its mode.
 */
import { createHash } from 'node:crypto';
import { access, lstat, mkdir, open, readFile, realpath, rename, stat, unlink, type FileHandle } from 'node:fs/promises';
import { constants, type Stats } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { OrgformError, UsageError } from '../errors.js';
import { literalPattern, removeOrphanFiles } from './orphan-files.js';
import { describeEscape, type WorkTree } from '../work-tree.js';

export interface DurableFileOptions {
  /** Fail if the file exists. */
  exclusive?: boolean;
  /** The permission bits to give it (by default 0600), whatever the umask. */
  mode?: number;
  /** The owner to give it, where this process may (best effort: a user can only give a file away to itself). */
  owner?: { uid: number; gid: number };
}

/**
 * What a file is written with: its text, or its text in pieces (a large saved plan, made as it is
 * written). Pieces are read once, after the file is opened: a temp name already taken costs none.
 */
export type FileText = string | Iterable<string> | AsyncIterable<string>;

/** Pieces are gathered into writes of about this many characters. */
const WRITE_LENGTH = 1024 * 1024;

/** Writes text in pieces at the file's position, a megabyte at a time. */
async function writePieces(handle: FileHandle, pieces: Iterable<string> | AsyncIterable<string>): Promise<void> {
  let parts: string[] = [];
  let length = 0;
  let position = 0;
  const flush = async (): Promise<void> => {
    const bytes = Buffer.from(parts.join(''), 'utf8');
    parts = [];
    length = 0;
    await writeAll(handle, bytes, position);
    position += bytes.length;
  };
  for await (const piece of pieces) {
    parts.push(piece);
    length += piece.length;
    if (length >= WRITE_LENGTH) await flush();
  }
  if (length > 0) await flush();
}

/**
 * Creates `path` (mode 0600 unless `mode` says otherwise; with `exclusive`, failing if it exists),
 * writes `text` and fsyncs it. A failed write or fsync removes the file again.
 */
export async function writeDurableFile(path: string, text: FileText, options: DurableFileOptions = {}): Promise<void> {
  const handle = await open(path, options.exclusive ? 'wx' : 'w', 0o600);
  try {
    try {
      if (options.owner !== undefined) await handle.chown(options.owner.uid, options.owner.gid).catch(() => undefined);
      // After chown, which may clear bits; fchmod is not narrowed by the umask as open's mode is.
      if (options.mode !== undefined) await handle.chmod(options.mode);
      if (typeof text === 'string') await handle.writeFile(text, 'utf8');
      else await writePieces(handle, text);
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch (err) {
    // A failed write (disk full, I/O error) must not leave the file behind.
    await unlink(path).catch(() => undefined);
    throw err;
  }
}

/**
 * Writes every byte of `bytes` at `position` (or, for a file opened to append, at its end). A
 * write that takes only part is continued from where it stopped; one that takes none, or fails,
 * throws: the caller never counts as written what is not all there.
 */
export async function writeAll(handle: FileHandle, bytes: Uint8Array, position?: number): Promise<void> {
  let offset = 0;
  while (offset < bytes.length) {
    const { bytesWritten } = await handle.write(bytes, offset, bytes.length - offset, position === undefined ? null : position + offset);
    if (bytesWritten <= 0) throw Object.assign(new Error('EIO: the file system took none of the bytes written, write'), { code: 'EIO' });
    offset += bytesWritten;
  }
}

/** Makes a rename or link in `dir` durable. Best effort: not every file system can sync a directory. */
export async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, 'r').catch(() => undefined);
  if (handle === undefined) return;
  await handle.sync().catch(() => undefined);
  await handle.close();
}

let sequence = 0;

/**
 * A temp file name beside `path`, unique within this process: `.NAME.PID.N.tmp`. A temp file that a
 * killed writer left is recognisable by that form (removeOrphanTempFiles removes them).
 */
export function tempPathFor(path: string): string {
  sequence += 1;
  return join(dirname(path), `.${basename(path)}.${process.pid}.${sequence}.tmp`);
}

/**
 * Removes the temp files of `path` (`.NAME.PID.N.tmp`) whose writer is gone (killed between writing
 * and renaming): every replaceFile does, so a killed write of a journal, a saved plan, an export or
 * a report is cleaned up by the next write of the same file. Returns how many were removed.
 */
export function removeOrphanTempFiles(path: string): Promise<number> {
  const form = new RegExp(`^\\.${literalPattern(basename(path))}\\.(\\d+)\\.\\d+\\.tmp$`);
  return removeOrphanFiles(dirname(path), (name) => {
    const pid = form.exec(name)?.[1];
    return pid === undefined ? undefined : Number(pid);
  });
}

export interface ReplaceOptions extends Omit<DurableFileOptions, 'exclusive'> {
  /** Runs once the text is durably beside the target, right before the rename; a throw stops it (nothing is replaced). */
  beforeRename?: () => Promise<void>;
}

/** Temp names tried before giving up: each one taken means something else made it. */
export const TEMP_ATTEMPTS = 20;

/**
 * The text written to a new temp file beside `path`, created exclusively: a name already there
 * (a link planted in the repository where a temp file would go, say) is never opened, let alone
 * written through, and the next name is tried.
 */
async function writeTempFile(path: string, text: FileText, options: DurableFileOptions): Promise<string> {
  for (let attempt = 1; ; attempt += 1) {
    const temp = tempPathFor(path);
    try {
      await writeDurableFile(temp, text, { ...options, exclusive: true });
      return temp;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || attempt >= TEMP_ATTEMPTS) throw err;
    }
  }
}

/** Replaces (or creates) `path` with `text`, atomically and durably. File system errors are thrown as they are. */
export async function replaceFile(path: string, text: FileText, options: ReplaceOptions = {}): Promise<void> {
  const { beforeRename, ...durable } = options;
  const dir = dirname(path);
  await mkdir(dir, { recursive: true });
  await removeOrphanTempFiles(path);
  const temp = await writeTempFile(path, text, durable);
  try {
    await beforeRename?.();
    await rename(temp, path);
  } catch (err) {
    await unlink(temp).catch(() => undefined);
    throw err;
  }
  // The rename is durable only once the directory entry is.
  await syncDirectory(dir);
}

/** A file that a user named: how to speak of it, and what to check before it is replaced. */
export interface UserFile {
  /** The path as the user gave it. */
  shown: string;
  /** What named it (`--out`, `--report`, `-f`), for what to do next. */
  option: string;
  /** The repository's working tree: a path in it must stay in it, links followed (a pull request may have planted one). */
  tree: WorkTree;
  /**
   * SHA-256 of the content the new text was made from: checked right before the rename, and if the
   * file holds anything else by then (someone edited it meanwhile), nothing is written.
   */
  madeFrom?: string;
}

/**
 * Writes a file that a user named (--out, -f, --report, --save). The target must be a regular file
 * of one name, or not exist: renaming over a device, a directory or a FIFO would replace it, and
 * over a file with other hard links would leave those names with the old text. A symlink is
 * followed to the file it names rather than replaced by one, unless it leads out of the working
 * tree (or into .git) from a place in it. The file keeps its mode (and, where
 * this process may give it, its owner); a new one is made 0600. Failures are the user's to fix.
 */
export async function writeFileAtomically(path: string, text: FileText, file: UserFile): Promise<void> {
  const { target, existing } = await inspectTarget(path, file);
  const madeFrom = file.madeFrom;
  try {
    await replaceFile(target, text, {
      ...(existing === undefined ? {} : { mode: existing.mode & 0o777, owner: { uid: existing.uid, gid: existing.gid } }),
      ...(madeFrom === undefined ? {} : { beforeRename: () => checkUnchanged(target, { ...file, madeFrom }) }),
    });
  } catch (err) {
    if (err instanceof OrgformError) throw err;
    throw cannotWrite(file, err);
  }
}

/**
 * What writeFileAtomically would write to: the target itself, or the regular file a symlink points
 * at, and what is there now (undefined: nothing yet). Refuses, as it would, what it must not
 * replace; so a command can check a path before it reads the service, rather than after.
 */
export async function inspectTarget(path: string, file: UserFile): Promise<{ target: string; existing?: Stats }> {
  const away = await describeEscape(file.tree, path, 'stay', file.shown);
  if (away !== undefined) throw new UsageError(`Cannot write ${file.shown}: ${away}. Nothing was written; remove the link, or choose a path for ${file.option} that stays in the working tree (or lies outside it, such as the runner's temporary directory).`);
  let info: Stats;
  try {
    info = await lstat(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { target: path };
    throw cannotWrite(file, err);
  }
  let target = path;
  if (info.isSymbolicLink()) {
    try {
      target = await realpath(path);
      info = await stat(target);
    } catch (err) {
      // A dangling link: refuse rather than replace the link with a file.
      throw new UsageError(`Cannot write ${file.shown}: it is a symbolic link to something that does not exist (${(err as NodeJS.ErrnoException).code ?? 'unreadable'}). Nothing was written; remove the link or choose another path for ${file.option}.`);
    }
  }
  if (info.isDirectory()) {
    throw new UsageError(`Cannot write ${file.shown}: it is a directory. Nothing was written; give ${file.option} the path of a file (in it, or elsewhere).`);
  }
  if (!info.isFile()) {
    throw new UsageError(`Cannot write ${file.shown}: it is not a regular file (${describeKind(info)}). Nothing was written; choose a file path for ${file.option}.`);
  }
  if (!(await isWritable(target))) {
    throw new UsageError(`Cannot write ${file.shown}: it is read-only (mode ${(info.mode & 0o777).toString(8).padStart(4, '0')}). Nothing was written; make it writable (chmod u+w ${file.shown}) or choose another path for ${file.option}.`);
  }
  if (info.nlink > 1) {
    throw new UsageError(
      `Cannot write ${file.shown}: it has ${info.nlink} hard links, and replacing it would leave the other names with the old content. Nothing was written; make it a file of its own (cp ${file.shown} copy && mv copy ${file.shown}) or choose another path for ${file.option}.`,
    );
  }
  return { target, existing: info };
}

async function isWritable(path: string): Promise<boolean> {
  try {
    await access(path, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Throws unless `path` holds exactly what `file.madeFrom` hashes: writeFileAtomically checks it
 * right before its rename; a command that writes several files checks them all first, so that
 * none is written when one has changed.
 */
export async function checkUnchanged(path: string, file: UserFile & { madeFrom: string }): Promise<void> {
  let now: string | undefined;
  try {
    now = createHash('sha256').update(await readFile(path)).digest('hex');
  } catch {
    now = undefined;
  }
  if (now !== file.madeFrom) {
    throw new OrgformError(
      'CONFIG_IO',
      `${file.shown} ${now === undefined ? 'was removed or cannot be read' : 'changed'} after orgform read it (an edit, a checkout?). Nothing was written, so that the change is kept; run the command again to start from what it holds now.`,
    );
  }
}

/** What a path that is not a regular file is, in words. */
export function describeKind(info: Stats): string {
  if (info.isCharacterDevice() || info.isBlockDevice()) return 'a device';
  if (info.isFIFO()) return 'a named pipe';
  if (info.isSocket()) return 'a socket';
  return 'not a file';
}

/** Why a file the user named could not be written, and what to do: theirs to fix, never a bug. */
export function cannotWrite(file: UserFile, err: unknown): UsageError {
  return new UsageError(`Cannot write ${file.shown}: ${(err as Error).message}. Check that its directory can be created and written, or choose another path for ${file.option}.`, { cause: err });
}
