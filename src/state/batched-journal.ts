/**
 * The journal of a remote state: entries are written in batches, one write at a time, so that a
 * bulk apply sends a few hundred writes rather than one per change. A batch goes out once it holds
 * `maxEntries` entries, or `maxDelayMs` after its first entry, whichever is first; `flush` writes
 * what is left (at the end of an apply, and at once on an interrupt).
 *
 * `record` resolves only once its batch is written (committed, or in a document the server
 * accepted): a change counts as done only then. The executor frees its worker as soon as the
 * service answers, so the wait holds no one up. A failed write is not retried here (each backend
 * retries what is safe to retry): every entry not written rejects, the failure is told once through
 * `onFailure`, and nothing more is written; the apply then starts nothing new.
 */
import type { OrgformError } from '../errors.js';
import type { JournalEntry, LoggedEntry } from './journal-entry.js';
import type { KeyIndex } from './journal-index.js';
import type { HeldState, LockHolder, StateJournal } from './state-backend.js';

export interface BatchPolicy {
  maxEntries: number;
  maxDelayMs: number;
}

export const DEFAULT_BATCH_POLICY: BatchPolicy = { maxEntries: 500, maxDelayMs: 2_000 };

export interface BatchedJournalOptions {
  /** The keys read when the lock was taken; those recorded are added as they are. */
  index: KeyIndex;
  /** Writes one batch durably. Throws when it could not be written. */
  write(batch: readonly LoggedEntry[]): Promise<void>;
  policy?: BatchPolicy;
  /** The run that records (the lock's ID), stamped on entries that name none. */
  run?: string;
  /** What each entry not written rejects with, for the write's failure (or the reason given to `stop`). */
  rejection(error: unknown): Error;
  /** Told once, on the first failure: the error, and how many recorded entries are not written so far. */
  onFailure(error: unknown, unwritten: number): void;
}

interface Pending extends LoggedEntry {
  resolve(): void;
  reject(error: Error): void;
}

export class BatchedJournal implements StateJournal {
  readonly batched = true;
  private pending: Pending[] = [];
  private writing: Promise<void> | null = null;
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** Set on the first failure: every entry recorded after it rejects with it. */
  private failure: Error | undefined;
  private unwritten = 0;
  /** What went out: batches and entries written. */
  readonly written = { batches: 0, entries: 0 };
  private readonly policy: BatchPolicy;

  constructor(private readonly options: BatchedJournalOptions) {
    this.policy = options.policy ?? DEFAULT_BATCH_POLICY;
  }

  has(service: string, key: string): boolean {
    return this.options.index.has(service, key);
  }

  /** Entries recorded but not written: after a failure, every one recorded since. */
  get unwrittenCount(): number {
    return this.unwritten + this.pending.length;
  }

  record(service: string, key: string, entry: JournalEntry): Promise<void> {
    const stamped = !('run' in entry) && this.options.run !== undefined ? { ...entry, run: this.options.run } : entry;
    this.options.index.add(service, key);
    if (this.failure !== undefined) {
      this.unwritten += 1;
      return Promise.reject(this.failure);
    }
    return new Promise<void>((resolve, reject) => {
      this.pending.push({ service, key, entry: stamped, resolve, reject });
      if (this.pending.length >= this.policy.maxEntries) this.startWrite();
      else this.arm();
    });
  }

  /** Writes what is pending now rather than when the batch fills or its delay runs out (an interrupt). */
  flushSoon(): void {
    this.startWrite();
  }

  /** Waits until every entry recorded so far is written, or has failed (never rejects). */
  async flush(): Promise<void> {
    for (;;) {
      if (this.writing === null) this.startWrite();
      if (this.writing === null) return;
      await this.writing;
    }
  }

  /** The lock is lost: nothing more is written; entries not written yet, and any recorded later, reject. */
  stop(reason: unknown): void {
    if (this.failure !== undefined) return;
    this.fail(reason, []);
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
    if (this.writing !== null || this.failure !== undefined || this.pending.length === 0) return;
    const batch = this.pending.splice(0, this.policy.maxEntries);
    this.writing = this.options.write(batch.map(({ service, key, entry }) => ({ service, key, entry }))).then(
      () => {
        this.written.batches += 1;
        this.written.entries += batch.length;
        for (const entry of batch) entry.resolve();
      },
      (error: unknown) => this.fail(error, batch),
    );
    void this.writing.finally(() => {
      this.writing = null;
      if (this.pending.length >= this.policy.maxEntries) this.startWrite();
      else if (this.pending.length > 0) this.arm();
    });
  }

  private fail(error: unknown, batch: Pending[]): void {
    if (this.failure !== undefined) {
      // A write under way when the journal was stopped, and failed since: its entries go the same way.
      this.unwritten += batch.length;
      for (const entry of batch) entry.reject(this.failure);
      return;
    }
    this.failure = this.options.rejection(error);
    const lost = [...batch, ...this.pending.splice(0)];
    this.unwritten += lost.length;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    for (const entry of lost) entry.reject(this.failure);
    this.options.onFailure(error, this.unwritten);
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

export interface RemoteHoldParts {
  lock: LockHolder;
  replaced?: LockHolder[];
  journal: BatchedJournal;
  loss: LockLoss;
  signal?: AbortSignal;
  /** Throws only when the lock is left behind after this process (see HeldState.release). */
  unlock(): Promise<void>;
  close(): Promise<void>;
}

/**
 * A remote state held for a run: its journal writes what it holds at once on an interrupt, and on
 * release writes the rest, then lets go of the lock and closes. The unlock is tried even after a
 * loss (a write refused as too large leaves the lock ours): each backend's unlock names this lock,
 * so it never breaks someone else's.
 */
export class RemoteHold implements HeldState {
  readonly lock: LockHolder;
  readonly replaced: LockHolder[];
  readonly journal: BatchedJournal;
  private readonly onAbort = () => this.journal.flushSoon();

  constructor(private readonly parts: RemoteHoldParts) {
    this.lock = parts.lock;
    this.replaced = parts.replaced ?? [];
    this.journal = parts.journal;
    parts.signal?.addEventListener('abort', this.onAbort, { once: true });
  }

  onLost(listener: (error: OrgformError) => void): void {
    this.parts.loss.onLost(listener);
  }

  async release(): Promise<void> {
    this.parts.signal?.removeEventListener('abort', this.onAbort);
    await this.journal.flush();
    let leftBehind: unknown;
    await this.parts.unlock().catch((err: unknown) => {
      leftBehind = err;
    });
    await this.parts.close().catch(() => undefined);
    // After a loss the lock may be someone else's by now: not ours to report.
    if (leftBehind !== undefined && !this.parts.loss.reported) throw leftBehind;
  }
}
