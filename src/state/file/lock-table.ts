/**
 * The lock table of a file state (R.lock): every run holding the state (the whole of it, or one
 * shard's partition) and the run folding its logs, if any. It is read and written only under the
 * gate (lock-gate.ts), and replaced whole (temp file, rename), so a reader without the gate sees
 * it before or after a change, never half way. Its top-level fields are one live holder's, in the
 * form an orgform before version 2 wrote its lock file: that one then refuses, naming the holder.
 * A lock file such an orgform wrote is read as a holder of the whole state.
 */
import { randomBytes } from 'node:crypto';
import { link, readFile, rename, unlink } from 'node:fs/promises';
import { OrgformError } from '../../errors.js';
import type { LockEnvironment } from '../lock-environment.js';
import type { LockHolder, Partition } from '../state-backend.js';
import { syncDirectory, writeDurableFile } from '../write-file-atomically.js';
import type { StateFiles } from './state-files.js';

/** What to do about a lock file left behind, if it is one. */
export function deleteIfNoneRuns(path: string): string {
  return `If no orgform runs on this state, delete ${path} and run again.`;
}

export const LOCK_TABLE_VERSION = 2;

/** The run folding the state's frozen logs into its base. */
export interface Folder {
  id: string;
  pid: number;
  host: string;
}

interface TableData {
  version: typeof LOCK_TABLE_VERSION;
  holders: LockHolder[];
  folder?: Folder;
}

export class LockTable {
  private constructor(
    public holders: LockHolder[],
    public folder: Folder | undefined,
    /** Whether the file was there when read (a new one is linked into place, never renamed over one). */
    private readonly existed: boolean,
  ) {}

  static empty(): LockTable {
    return new LockTable([], undefined, false);
  }

  /** The table as it is now; none is an empty table. An unreadable one is refused, with what to do. */
  static async read(files: StateFiles): Promise<LockTable> {
    let text: string;
    try {
      text = await readFile(files.lockTable, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return LockTable.empty();
      throw err;
    }
    const data = parseTable(text);
    if (data === undefined) {
      throw new OrgformError(
        'STATE_LOCKED',
        `The state ${files.given} is locked by an unreadable lock file ${files.lockTable} (an orgform may be starting, or one stopped while taking the lock). ${deleteIfNoneRuns(files.lockTable)}`,
      );
    }
    return new LockTable(data.holders, data.folder, true);
  }

  /** Drops the holders (and folder) whose process is gone on this host; returns the holders dropped. */
  prune(local: LockEnvironment): LockHolder[] {
    const gone = (who: { pid?: number; host?: string }) => who.host === local.host && who.pid !== undefined && !local.isAlive(who.pid);
    const dropped = this.holders.filter(gone);
    this.holders = this.holders.filter((h) => !gone(h));
    if (this.folder !== undefined && gone(this.folder)) this.folder = undefined;
    return dropped;
  }

  has(id: string): boolean {
    return this.holders.some((h) => h.id === id);
  }

  remove(id: string): LockHolder | undefined {
    const holder = this.holders.find((h) => h.id === id);
    this.holders = this.holders.filter((h) => h.id !== id);
    return holder;
  }

  /**
   * Writes the table back: replaced whole, or removed when no one holds or folds the state (so
   * that an older orgform may take it again). A new table is linked into place, so that a lock an
   * older orgform took meanwhile is never replaced (EEXIST is thrown).
   */
  async write(files: StateFiles, local: LockEnvironment): Promise<void> {
    if (this.holders.length === 0 && this.folder === undefined) {
      await unlink(files.lockTable).catch((err: NodeJS.ErrnoException) => {
        if (err.code !== 'ENOENT') throw err;
      });
      return;
    }
    const temp = `${files.lockTable}.${local.pid}.${randomBytes(6).toString('hex')}.tmp`;
    await writeDurableFile(temp, `${JSON.stringify(this.toData(), null, 2)}\n`, { exclusive: true });
    try {
      if (this.existed) await rename(temp, files.lockTable);
      else await link(temp, files.lockTable);
    } finally {
      await unlink(temp).catch(() => undefined);
    }
    await syncDirectory(files.dir);
  }

  private toData(): Record<string, unknown> {
    const top = this.holders[0] ?? { id: this.folder!.id, pid: this.folder!.pid, host: this.folder!.host, command: 'orgform (folding the journal)' };
    const { id, pid, host, startedAt, command } = top;
    const data: TableData = { version: LOCK_TABLE_VERSION, holders: this.holders, ...(this.folder === undefined ? {} : { folder: this.folder }) };
    return { id, pid, host, startedAt, command, ...data };
  }
}

function isPartition(value: unknown): value is Partition {
  const p = value as Partition | null;
  return typeof p === 'object' && p !== null && Number.isInteger(p.index) && Number.isInteger(p.count);
}

function isHolder(value: unknown): value is LockHolder {
  const h = value as LockHolder | null;
  return typeof h === 'object' && h !== null && typeof h.id === 'string' && (h.partition === undefined || isPartition(h.partition));
}

/** The table's data, or undefined if it is not one. An older orgform's lock file (no version) is one holder of the whole state. */
function parseTable(text: string): { holders: LockHolder[]; folder?: Folder } | undefined {
  let value: Record<string, unknown>;
  try {
    value = JSON.parse(text) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  if (value.version === undefined) {
    if (!isHolder(value)) return undefined;
    const { id, pid, host, startedAt, command } = value as unknown as LockHolder;
    return { holders: [{ id, pid, host, startedAt, command } as LockHolder] };
  }
  if (value.version !== LOCK_TABLE_VERSION || !Array.isArray(value.holders) || !value.holders.every(isHolder)) return undefined;
  const folder = value.folder as Folder | undefined;
  return { holders: value.holders, ...(folder !== undefined && typeof folder.id === 'string' ? { folder } : {}) };
}
