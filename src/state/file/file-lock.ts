/**
 * A run's hold on a file state, through its lock table: taken, checked, let go, broken. Who may
 * hold it at once is the lock matrix's to say (lock-matrix.ts); liveness is the holder's process
 * on this host, never a clock, so the file state with shards is for one machine.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, rmdir, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { OrgformError } from '../../errors.js';
import { fileStateError } from '../file-state-error.js';
import { NOTHING_CHANGED } from '../state-errors.js';
import type { LockEnvironment } from '../lock-environment.js';
import { decideLock, lockRefusedError } from '../lock-matrix.js';
import { describeHolder, type LockHolder, type LockRequest } from '../state-backend.js';
import { GateTicket, removeOrphanLockFiles } from './lock-gate.js';
import { LockTable } from './lock-table.js';
import type { StateFiles } from './state-files.js';

const CANNOT_CREATE = 'Cannot create the state lock';

/** What changed last about the table file as this holder saw it: a change is when to read it again. */
type Seen = { ino: number; mtimeMs: number; size: number } | undefined;

export class FileLock {
  private seen: Seen;

  private constructor(
    readonly files: StateFiles,
    readonly holder: LockHolder,
    private readonly local: LockEnvironment,
    /** Kept until the lock is let go, so that letting go needs no new space (a full disk). */
    private readonly ticket: GateTicket,
    /** The first directory taking the lock made, removed on release if it is empty by then. */
    private readonly created: string | undefined,
  ) {}

  /** Takes the lock `request` asks for, or refuses naming the holder in the way; says which holders it found gone. */
  static async acquire(files: StateFiles, request: LockRequest, local: LockEnvironment): Promise<{ lock: FileLock; replaced: LockHolder[] }> {
    const created = await mkdir(files.dir, { recursive: true }).catch((err: unknown) => {
      throw fileStateError(CANNOT_CREATE, files.lockTable, err, NOTHING_CHANGED);
    });
    const holder: LockHolder = { id: randomBytes(6).toString('hex'), ...request };
    let ticket: GateTicket | undefined;
    try {
      ticket = await GateTicket.create(files, local).catch(async (err: NodeJS.ErrnoException) => {
        // A run that has just ended may have removed the empty directory meanwhile: once more.
        if (err.code !== 'ENOENT') throw err;
        await mkdir(files.dir, { recursive: true });
        return GateTicket.create(files, local);
      });
      const replaced = await withGate(files, local, ticket, async (table) => {
        const gone = table.prune(local);
        const decision = decideLock(table.holders, request.partition);
        if (!decision.take) {
          const hint = `orgform force-unlock ${decision.holder.id} --state ${files.given}`;
          throw lockRefusedError(files.given, decision, request.partition, hint);
        }
        table.holders.push(holder);
        return gone;
      });
      await removeOrphanLockFiles(files, local.isAlive);
      return { lock: new FileLock(files, holder, local, ticket, created), replaced };
    } catch (err) {
      await ticket?.discard();
      if (created !== undefined) await removeEmptyDirectories(files.dir, created);
      if (err instanceof OrgformError) throw err;
      throw fileStateError(CANNOT_CREATE, files.lockTable, err, NOTHING_CHANGED);
    }
  }

  /** Whether this run still holds the lock: the table is read again only when its file has changed since last seen. */
  async stillHeld(): Promise<boolean> {
    let now: Seen;
    try {
      const info = await stat(this.files.lockTable);
      now = { ino: info.ino, mtimeMs: info.mtimeMs, size: info.size };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
      throw err;
    }
    if (this.seen !== undefined && now.ino === this.seen.ino && now.mtimeMs === this.seen.mtimeMs && now.size === this.seen.size) return true;
    const held = (await LockTable.read(this.files)).has(this.holder.id);
    if (held) this.seen = now;
    return held;
  }

  /**
   * Lets go: this run leaves the table, and so do holders found gone. Returns the logs that are
   * frozen now (their runs all ended) if this run is to fold them (`shouldFold` says whether they
   * are worth it); it is then the table's folder until `endFold`. Where the table cannot say so
   * (a full disk), it lets go without folding.
   */
  async release(shouldFold: (frozen: string[]) => Promise<boolean>): Promise<string[]> {
    await this.ticket.enter();
    try {
      const table = await LockTable.read(this.files);
      table.remove(this.holder.id);
      table.prune(this.local);
      const frozen = table.folder === undefined ? await this.frozenLogs(table) : [];
      if (frozen.length > 0 && (await shouldFold(frozen))) {
        table.folder = { id: this.holder.id, pid: this.local.pid, host: this.local.host };
        const written = await table.write(this.files, this.local).then(
          () => true,
          () => false,
        );
        if (written) return frozen;
        table.folder = undefined;
      }
      await table.write(this.files, this.local);
      return [];
    } finally {
      await this.ticket.leave().catch(() => undefined);
    }
  }

  /** The logs whose runs no longer hold the state (an older orgform's too: one that runs holds the whole state, so this run would not). */
  private async frozenLogs(table: LockTable): Promise<string[]> {
    const live = new Set(table.holders.map((h) => h.id));
    return (await this.files.listLogs()).filter((log) => {
      const run = this.files.runOf(log);
      return run === undefined || !live.has(run);
    });
  }

  /** After a fold (done or failed): this run is no longer the folder; the directory it made goes if empty. */
  async endFold(): Promise<void> {
    await withGate(this.files, this.local, this.ticket, async (table) => {
      if (table.folder?.id === this.holder.id) table.folder = undefined;
    });
  }

  /** The end: the gate ticket goes, and the directory taking the lock made, if nothing is left in it. */
  async tidy(): Promise<void> {
    await this.ticket.discard();
    if (this.created !== undefined) await removeEmptyDirectories(this.files.dir, this.created);
  }

  /** Breaks the lock `id` only (other holders keep theirs); returns who held it. */
  static async forceUnlock(files: StateFiles, id: string, local: LockEnvironment): Promise<LockHolder> {
    const ticket = await GateTicket.create(files, local);
    try {
      return await withGate(files, local, ticket, async (table) => table.remove(id) ?? Promise.reject(noSuchHolderError(files, id, table.holders)));
    } finally {
      await ticket.discard();
    }
  }
}

/** force-unlock of an ID no holder has: who holds the state, if anyone; nothing was changed. */
function noSuchHolderError(files: StateFiles, id: string, holders: readonly LockHolder[]): OrgformError {
  const [only, ...more] = holders;
  if (only === undefined) return new OrgformError('STATE_LOCKED', `There is no lock on ${files.given} (no holder in ${files.lockTable}). ${NOTHING_CHANGED}`);
  if (more.length === 0) return new OrgformError('STATE_LOCKED', `The lock on ${files.given} has ID ${only.id}, not ${id}; it is held by ${describeHolder(only)}. ${NOTHING_CHANGED}`);
  return new OrgformError('STATE_LOCKED', `No lock on ${files.given} has ID ${id}; it is held by ${holders.map(describeHolder).join('; ')}. ${NOTHING_CHANGED}`);
}

/**
 * Runs `change` on the table under the gate, then writes the table back (unless `change` threw).
 * The table is read after the gate is taken, so no one changes it meanwhile.
 */
async function withGate<T>(files: StateFiles, local: LockEnvironment, ticket: GateTicket, change: (table: LockTable) => Promise<T>): Promise<T> {
  await ticket.enter();
  try {
    const table = await LockTable.read(files);
    const result = await change(table);
    await table.write(files, local);
    return result;
  } finally {
    await ticket.leave().catch(() => undefined);
  }
}

/** Removes `dir` and its parents up to `top`, each only if empty (rmdir refuses any other). */
async function removeEmptyDirectories(dir: string, top: string): Promise<void> {
  for (let at = dir; ; at = dirname(at)) {
    try {
      await rmdir(at);
    } catch {
      return;
    }
    if (at === top || dirname(at) === at) return;
  }
}
