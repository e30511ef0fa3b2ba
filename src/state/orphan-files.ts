/**
 * Files a killed orgform leaves behind: the temp files of its atomic writes
 * (write-file-atomically.ts) and the lock's own (lock.ts), each named with the PID of the process
 * that wrote it. One is removed only once that process is gone, so that a writer still at work
 * (another apply taking the lock, another plan saving the same file) is never cut short. The PID
 * is of this host: like the lock, the file state is for one machine.
 */
import { readdir, unlink } from 'node:fs/promises';
import { join } from 'node:path';

/** Whether a process of this host still runs (one of another user's answers EPERM: it runs). */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** A pattern matching exactly `text`. */
export function literalPattern(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * Removes each file of `dir` whose name `ownerOf` reads a PID from, once that process is gone.
 * Best effort (a directory that cannot be read or a file that cannot be removed is left, to be
 * tried again next time): returns how many were removed.
 */
export async function removeOrphanFiles(dir: string, ownerOf: (name: string) => number | undefined, isAlive: (pid: number) => boolean = isProcessAlive): Promise<number> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return 0;
  }
  const orphans = names.filter((name) => {
    const pid = ownerOf(name);
    return pid !== undefined && pid !== process.pid && !isAlive(pid);
  });
  const removed = await Promise.all(
    orphans.map((name) =>
      unlink(join(dir, name)).then(
        () => true,
        () => false,
      ),
    ),
  );
  return removed.filter(Boolean).length;
}
