/**
 * The journal of a remote state: entries are kept in memory as changes complete and written in
 * batches, one write at a time, so that no change waits for the network and a bulk apply sends a
 * few hundred writes rather than one per change. A batch goes out once it holds `maxEntries`
 * entries, or `maxDelayMs` after its first entry, whichever is first; `flush` writes what is left
 * (at the end of an apply, and at once on an interrupt).
 *
 * A crash loses at most what was not yet written, and that is harmless: a one-shot change missing
 * from the journal is planned again, and applying it finds it already done. A failed write is
 * not retried here (each backend retries what is safe to retry): the journal reports the loss
 * once, through `onFailure`, and writes nothing more; the apply then starts nothing new.
 */
import type { OrgformError } from '../errors.js';
import type { JournalData, JournalEntry } from './journal-entry.js';
import type { LockHolder, StateJournal } from './state-backend.js';
import type { LegacyHeldState as HeldState } from './legacy-backend.js';

export interface PendingEntry {
  serviceKey: string;
  key: string;
  entry: JournalEntry;
}

export interface BatchPolicy {
  maxEntries: number;
  maxDelayMs: number;
}

export const DEFAULT_BATCH_POLICY: BatchPolicy = { maxEntries: 500, maxDelayMs: 2_000 };

export interface BatchedJournalOptions {
  /** The entries read when the lock was taken; new ones are added as they are recorded. */
  data: JournalData;
  /** Writes one batch; `data` already holds it. Throws when it could not be written. */
  write(batch: readonly PendingEntry[]): Promise<void>;
  policy?: BatchPolicy;
  /** The run that records (the lock's ID), stamped on entries that name none. */
  run?: string;
  /** Told once, when a write fails: how many recorded entries are not written (so far). */
  onFailure(error: unknown, unwritten: number): void;
}

export class BatchedJournal implements StateJournal {
  private pending: PendingEntry[] = [];
  private writing: Promise<void> | null = null;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private failed = false;
  private unwritten = 0;
  /** What went out: batches and entries written. */
  readonly written = { batches: 0, entries: 0 };
  private readonly policy: BatchPolicy;

  constructor(private readonly options: BatchedJournalOptions) {
    this.policy = options.policy ?? DEFAULT_BATCH_POLICY;
  }

  has(serviceKey: string, key: string): boolean {
    return this.options.data.services[serviceKey]?.[key] !== undefined;
  }

  /** Entries recorded but not written: after a failure, every one recorded since. */
  get unwrittenCount(): number {
    return this.unwritten + this.pending.length;
  }

  record(serviceKey: string, key: string, entry: JournalEntry): Promise<void> {
    const stamped = !('run' in entry) && this.options.run !== undefined ? { ...entry, run: this.options.run } : entry;
    (this.options.data.services[serviceKey] ??= {})[key] = stamped;
    if (this.failed) {
      this.unwritten += 1;
      return Promise.resolve();
    }
    this.pending.push({ serviceKey, key, entry: stamped });
    if (this.pending.length >= this.policy.maxEntries) this.startWrite();
    else this.arm();
    return Promise.resolve();
  }

  /** Writes what is pending now rather than when the batch fills or its delay runs out (an interrupt). */
  flushSoon(): void {
    this.startWrite();
  }

  async flush(): Promise<void> {
    for (;;) {
      if (this.writing === null) this.startWrite();
      if (this.writing === null) return;
      await this.writing;
    }
  }

  private arm(): void {
    if (this.timer !== undefined || this.writing !== null) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.startWrite();
    }, this.policy.maxDelayMs);
    this.timer.unref?.();
  }

  private startWrite(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.writing !== null || this.failed || this.pending.length === 0) return;
    const batch = this.pending.length <= this.policy.maxEntries ? this.pending : this.pending.slice(0, this.policy.maxEntries);
    this.pending = batch === this.pending ? [] : this.pending.slice(batch.length);
    this.writing = this.options.write(batch).then(
      () => {
        this.written.batches += 1;
        this.written.entries += batch.length;
      },
      (error: unknown) => {
        this.failed = true;
        this.unwritten += batch.length + this.pending.length;
        this.pending = [];
        this.options.onFailure(error, this.unwritten);
      },
    );
    void this.writing.finally(() => {
      this.writing = null;
      if (this.pending.length >= this.policy.maxEntries) this.startWrite();
      else if (this.pending.length > 0) this.arm();
    });
  }
}

/** The news, told once, that a remote lock is lost: to every listener, those that come later included. */
export class LockLoss {
  private error: OrgformError | undefined;
  private listeners: Array<(error: OrgformError) => void> = [];

  get reported(): boolean {
    return this.error !== undefined;
  }

  report(error: OrgformError): void {
    if (this.error !== undefined) return;
    this.error = error;
    for (const listener of this.listeners.splice(0)) listener(error);
  }

  onLost(listener: (error: OrgformError) => void): void {
    if (this.error !== undefined) listener(this.error);
    else this.listeners.push(listener);
  }
}

/**
 * A remote state held for an apply: its journal writes what it holds at once on an interrupt, and
 * on release writes the rest, then lets go of the lock and closes. The unlock is tried even after a
 * loss (a write refused as too large leaves the lock ours): each backend's unlock names this lock,
 * so it never breaks someone else's.
 */
export function holdRemoteState(parts: {
  lock: LockHolder;
  data: JournalData;
  journal: BatchedJournal;
  loss: LockLoss;
  signal?: AbortSignal;
  /** Throws only when the lock is left behind after this process (see HeldState.release). */
  unlock(): Promise<void>;
  close(): Promise<void>;
}): HeldState {
  const onAbort = () => parts.journal.flushSoon();
  parts.signal?.addEventListener('abort', onAbort, { once: true });
  return {
    lock: parts.lock,
    data: parts.data,
    journal: parts.journal,
    onLost: (listener) => parts.loss.onLost(listener),
    async release() {
      parts.signal?.removeEventListener('abort', onAbort);
      await parts.journal.flush();
      let leftBehind: unknown;
      await parts.unlock().catch((err: unknown) => {
        leftBehind = err;
      });
      await parts.close().catch(() => undefined);
      // After a loss the lock may be someone else's by now: not ours to report.
      if (leftBehind !== undefined && !parts.loss.reported) throw leftBehind;
    },
  };
}
