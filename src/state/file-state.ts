/**
 * The default state: the journal file (journal.ts), its log of appended entries and the lock file
 * beside it (lock.ts). Each entry is on disk before its change counts as done; the log is folded
 * into the file when the lock is taken and released; the lock protects one machine (a pipeline's
 * concurrency group protects the rest).
 */
import { Journal } from './journal.js';
import { acquireLock, forceUnlock, type LockEnvironment } from './lock.js';
import type { LegacyHeldState as HeldState, LegacyStateBackend as StateBackend } from './legacy-backend.js';
import { removeOrphanTempFiles } from './write-file-atomically.js';

export function openFileState(path: string, lockEnvironment?: LockEnvironment): StateBackend {
  return {
    kind: 'file',
    location: path,
    async read() {
      return (await Journal.read(path)).data;
    },
    async lock(command: string): Promise<HeldState> {
      const lock = await acquireLock(path, command, lockEnvironment);
      try {
        // Temp files a killed writer of the journal left (their process gone) are removed.
        await removeOrphanTempFiles(path);
        const journal = await Journal.read(path);
        // A log a killed apply left is folded in now, while the lock is ours.
        await journal.compact();
        const run = lock.info.id;
        return {
          lock: lock.info,
          ...(lock.replaced === undefined ? {} : { replaced: lock.replaced }),
          data: journal.data,
          journal: {
            has: (serviceKey, key) => journal.has(serviceKey, key),
            record: (serviceKey, key, entry) => journal.record(serviceKey, key, 'run' in entry ? entry : { ...entry, run }),
            flush: () => journal.flush(),
          },
          // A lock file is not lost while its holder runs (force-unlock is for holders that are gone).
          onLost: () => undefined,
          async release() {
            // A fold that fails (a full disk) loses nothing: the log keeps every entry, and the
            // next lock folds it. A lock that cannot be removed is said (lock.ts).
            await journal.compact().catch(() => undefined);
            await lock.release();
          },
        };
      } catch (err) {
        // The error that stopped the lock is the one to tell; a lock left by this process is taken over by the next.
        await lock.release().catch(() => undefined);
        throw err;
      }
    },
    forceUnlock: (id) => forceUnlock(path, id),
  };
}
