/**
 * The default state: a journal file on this machine (state-files.ts says which files). Runs of
 * one shard count apply at once, each appending to its own log; every reader sees every run's
 * entries; each entry is on disk before its change counts as done; frozen logs are folded into
 * the base by whichever run ends when it is due.
 */
import { OrgformError } from '../../errors.js';
import { LockLoss } from '../batched-journal.js';
import { fileStateError } from '../file-state-error.js';
import type { LoggedEntry } from '../journal-entry.js';
import type { KeyIndex } from '../journal-index.js';
import type { LockEnvironment } from '../lock-environment.js';
import { lockLostError, type HeldState, type Interest, type JournalIndex, type LockHolder, type LockRequest, type StateBackend } from '../state-backend.js';
import { removeOrphanTempFiles } from '../write-file-atomically.js';
import { FileJournal } from './file-journal.js';
import { FileLock } from './file-lock.js';
import { foldJournal, isFoldDue } from './journal-fold.js';
import { JournalReader } from './journal-reader.js';
import { RunLog } from './run-log.js';
import { StateFiles } from './state-files.js';

export class FileState implements StateBackend {
  readonly kind = 'file';

  constructor(
    readonly location: string,
    private readonly local: LockEnvironment,
  ) {}

  async readIndex(interest: Interest): Promise<JournalIndex> {
    return readIndex(await StateFiles.resolve(this.location), interest);
  }

  async *entries(): AsyncGenerator<LoggedEntry> {
    const reader = await JournalReader.open(await StateFiles.resolve(this.location));
    try {
      yield* reader.entries();
    } finally {
      await reader.close();
    }
  }

  async lock(request: LockRequest, interest: Interest): Promise<HeldState> {
    const files = await StateFiles.resolve(this.location);
    const { lock, replaced } = await FileLock.acquire(files, request, this.local);
    try {
      // Temp files a killed fold left (their process gone) are removed.
      await removeOrphanTempFiles(files.base);
      const loss = new LockLoss();
      const journal = new FileJournal({
        index: await readIndex(files, interest),
        run: lock.holder.id,
        createLog: () => RunLog.create(files.logFor(lock.holder.id)),
        checkHeld: async () => {
          if (!(await lock.stillHeld())) throw lockLostError(files.given, `the lock ${lock.holder.id} was broken (orgform force-unlock), so another run may hold this part of the state now`);
        },
        writeError: (err) => fileStateError('Cannot write the state journal', files.given, err),
        onFailure: (error) => {
          // A write that failed (a full disk) stops the apply through its changes; a lost lock halts it.
          if (error.code === 'STATE_LOCK_LOST') loss.report(error);
        },
      });
      return { lock: lock.holder, replaced, journal, onLost: (listener) => loss.onLost(listener), release: () => releaseHold(lock, journal) };
    } catch (err) {
      await lock.release(async () => false).catch(() => undefined);
      await lock.tidy();
      throw err;
    }
  }

  async forceUnlock(id: string): Promise<LockHolder> {
    const files = await StateFiles.resolve(this.location);
    try {
      return await FileLock.forceUnlock(files, id, this.local);
    } catch (err) {
      if (err instanceof OrgformError) throw err;
      throw fileStateError('Cannot remove the state lock', files.lockTable, err);
    }
  }

  async close(): Promise<void> {
    // Nothing stays open between calls.
  }
}

async function readIndex(files: StateFiles, interest: Interest): Promise<KeyIndex> {
  const reader = await JournalReader.open(files);
  try {
    return await reader.index(interest);
  } finally {
    await reader.close();
  }
}

/** Writes what is left, closes the run's log, leaves the table and folds frozen logs if due. */
async function releaseHold(lock: FileLock, journal: FileJournal): Promise<void> {
  await journal.close();
  let frozen: string[];
  try {
    frozen = await lock.release((logs) => isFoldDue(lock.files, logs).catch(() => false));
  } catch (err) {
    throw lockLeftError(lock, err);
  }
  if (frozen.length > 0) {
    // A fold that fails (a full disk, a damaged line) loses nothing: the logs keep every entry,
    // every reader reads them, and a later release folds them.
    await foldJournal(lock.files, frozen).catch(() => undefined);
    await lock.endFold().catch(() => undefined);
  }
  await lock.tidy();
}

/** The lock could not be let go at the end: what was done stands; how the lock left behind goes. */
function lockLeftError(lock: FileLock, err: unknown): OrgformError {
  const { files, holder } = lock;
  const cause = err instanceof OrgformError ? err.message : fileStateError('Cannot remove the state lock', files.lockTable, err).message;
  return new OrgformError(
    'STATE_INVALID',
    `${cause} What was done stands, as said above, but the lock ${holder.id} stays: an apply on this host takes it over once this process has ended; from another machine (a restored cache), break it with: orgform force-unlock ${holder.id} --state ${files.given}`,
    { cause: err },
  );
}
