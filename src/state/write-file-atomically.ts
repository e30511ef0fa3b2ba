/**
 * The one way orgform writes a file whole or not at all: the text goes to a temp file beside the
 * target and is fsynced there, the temp file is renamed over the target, and the directory is
 * fsynced, so that a reader (or a crash) never sees half a journal, half a plan or half an
 * orgs.yaml. The state journal uses `replaceFile`; the lock shares the first step
 * (`writeDurableFile`) and then links its temp file into place instead of renaming it, so that an
 * existing lock is never replaced; files that a user names (saved plans, exports, reports) go
 * through `writeFileAtomically`, which also checks what it is about to replace.
 */
import { lstat, mkdir, open, realpath, rename, stat, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { UsageError } from '../errors.js';

/**
 * Creates `path` (mode 0600; with `exclusive`, failing if it exists), writes `text` and fsyncs it.
 * A failed write or fsync removes the file again.
 */
export async function writeDurableFile(path: string, text: string, options: { exclusive?: boolean } = {}): Promise<void> {
  const handle = await open(path, options.exclusive ? 'wx' : 'w', 0o600);
  try {
    try {
      await handle.writeFile(text, 'utf8');
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
 * killed writer left is recognisable by that form (Journal.removeOrphanTempFiles removes them).
 */
export function tempPathFor(path: string): string {
  sequence += 1;
  return join(dirname(path), `.${basename(path)}.${process.pid}.${sequence}.tmp`);
}

/** Replaces (or creates) `path` with `text`, atomically and durably. File system errors are thrown as they are. */
export async function replaceFile(path: string, text: string): Promise<void> {
  const dir = dirname(path);
  await mkdir(dir, { recursive: true });
  const temp = tempPathFor(path);
  await writeDurableFile(temp, text);
  try {
    await rename(temp, path);
  } catch (err) {
    await unlink(temp).catch(() => undefined);
    throw err;
  }
  // The rename is durable only once the directory entry is.
  await syncDirectory(dir);
}

/**
 * Writes a file that a user named (--out, -f, --report). The target must be a regular file or not
 * exist: renaming over a device, a directory or a FIFO would replace it, and a symlink is followed
 * to the file it names rather than replaced by one. Failures are the user's to fix: UsageError.
 */
export async function writeFileAtomically(path: string, text: string, shown: string = path): Promise<void> {
  const target = await resolveTarget(path, shown);
  try {
    await replaceFile(target, text);
  } catch (err) {
    throw cannotWrite(shown, err);
  }
}

/** The path to write to: the target itself, or the regular file a symlink points at. */
async function resolveTarget(path: string, shown: string): Promise<string> {
  let info;
  try {
    info = await lstat(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return path;
    throw cannotWrite(shown, err);
  }
  let target = path;
  if (info.isSymbolicLink()) {
    try {
      target = await realpath(path);
      info = await stat(target);
    } catch (err) {
      // A dangling link: refuse rather than replace the link with a file.
      throw new UsageError(`Cannot write ${shown}: it is a symbolic link to something that does not exist (${(err as NodeJS.ErrnoException).code ?? 'unreadable'}). Nothing was written; remove the link or choose another path.`);
    }
  }
  if (!info.isFile()) {
    throw new UsageError(`Cannot write ${shown}: it is not a regular file (${describeKind(info)}). Nothing was written; choose a file path with --out.`);
  }
  return target;
}

function describeKind(info: Awaited<ReturnType<typeof lstat>>): string {
  if (info.isDirectory()) return 'a directory';
  if (info.isCharacterDevice() || info.isBlockDevice()) return 'a device';
  if (info.isFIFO()) return 'a named pipe';
  if (info.isSocket()) return 'a socket';
  return 'not a file';
}

/** An unwritable path is the user's to fix, not a bug: say which and what to do. */
function cannotWrite(shown: string, err: unknown): UsageError {
  return new UsageError(`Cannot write ${shown}: ${(err as Error).message}. Check that its directory can be created and written, or choose another --out.`, { cause: err });
}
