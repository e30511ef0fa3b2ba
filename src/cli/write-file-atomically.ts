/**
 * Writes a file whole or not at all: a temp file beside the target, fsync, rename, fsync of the
 * directory, so that a reader (or a crash) never sees half a plan or half an orgs.yaml. The target
 * must be a regular file or not exist: renaming over a device, a directory or a FIFO would replace
 * it, and a symlink is followed to the file it names rather than replaced by one.
 */
import { lstat, mkdir, open, realpath, rename, stat, unlink, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { UsageError } from '../errors.js';

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

export async function writeFileAtomically(path: string, text: string, shown: string = path): Promise<void> {
  const target = await resolveTarget(path, shown);
  const temp = `${target}.${process.pid}.tmp`;
  try {
    await mkdir(dirname(target), { recursive: true });
    await writeFile(temp, text, { encoding: 'utf8', mode: 0o600, flush: true });
    await rename(temp, target);
    // The rename is durable only once the directory is.
    const dir = await open(dirname(target), 'r').catch(() => undefined);
    await dir?.sync().catch(() => undefined);
    await dir?.close();
  } catch (err) {
    await unlink(temp).catch(() => undefined);
    throw cannotWrite(shown, err);
  }
}

/** An unwritable path is the user's to fix, not a bug: say which and what to do. */
function cannotWrite(shown: string, err: unknown): UsageError {
  return new UsageError(`Cannot write ${shown}: ${(err as Error).message}. Check that its directory can be created and written, or choose another --out.`, { cause: err });
}
