/**
 * The journal of a run holding a file state: each entry is appended to the run's own log, and
 * `record` resolves only once it is all on disk. Entries recorded while a write is under way go out
 * together in the next one (group commit). After a write fails, every entry of it and every one
 * recorded later is refused with the same error, so that the apply starts nothing more.
 */
import { OrgformError } from '../../errors.js';
import { formatEntryLine, type JournalEntry } from '../journal-entry.js';
import type { KeyIndex } from '../journal-index.js';
import type { StateJournal } from '../state-backend.js';
import type { RunLog } from './run-log.js';

export interface FileJournalOptions {
  /** What the run may ask about, as read when the lock was taken; what it records is added. */
  index: KeyIndex;
  /** The run's lock ID, stamped on entries that name none. */
  run: string;
  /** Creates the run's log, at its first write. */
  createLog(): Promise<RunLog>;
  /** Throws when the lock is no longer the run's (force-unlocked): nothing more may be appended then. */
  checkHeld(): Promise<void>;
  /** The state error for a write that failed (an OrgformError thrown on the way is kept as it is). */
  writeError(err: unknown): OrgformError;
  /** Told once, when a write fails. */
  onFailure(error: OrgformError): void;
}

interface Pending {
  service: string;
  key: string;
  line: string;
  resolve(): void;
  reject(error: unknown): void;
}

export class FileJournal implements StateJournal {
  private pending: Pending[] = [];
  private writing: Promise<void> | null = null;
  private failure: OrgformError | undefined;
  private log: RunLog | undefined;
  /** What went out: appends to the log. */
  readonly written = { appends: 0, entries: 0 };

  constructor(private readonly options: FileJournalOptions) {}

  has(serviceKey: string, key: string): boolean {
    return this.options.index.has(serviceKey, key);
  }

  record(serviceKey: string, key: string, entry: JournalEntry): Promise<void> {
    if (this.failure !== undefined) return Promise.reject(this.failure);
    const stamped = 'run' in entry ? entry : { ...entry, run: this.options.run };
    const line = formatEntryLine({ service: serviceKey, key, entry: stamped });
    const done = new Promise<void>((resolve, reject) => this.pending.push({ service: serviceKey, key, line, resolve, reject }));
    this.writing ??= this.writeLoop();
    return done;
  }

  async flush(): Promise<void> {
    while (this.writing !== null) await this.writing;
  }

  /** Throws, as a failed write does, once the lock is no longer the run's (or a write has failed). */
  async checkHeld(): Promise<void> {
    if (this.failure === undefined) await this.options.checkHeld().catch((err: unknown) => this.fail(err, []));
    if (this.failure !== undefined) throw this.failure;
  }

  /** Waits for what is recorded, then closes the log: nothing is appended to it after this. */
  async close(): Promise<void> {
    await this.flush();
    await this.log?.close();
    this.log = undefined;
  }

  private async writeLoop(): Promise<void> {
    while (this.pending.length > 0) {
      const batch = this.pending;
      this.pending = [];
      try {
        await this.options.checkHeld();
        this.log ??= await this.options.createLog();
        let text = '';
        for (const p of batch) text += `${p.line}\n`;
        await this.log.append(Buffer.from(text));
        // Again once the bytes are on disk: a run force-unlocked while it appended may have had its
        // log folded and removed by then, these bytes with it (a fold takes the logs of runs out
        // of the table). Still held now means out of the table only after the bytes went.
        await this.options.checkHeld();
        this.written.appends += 1;
        this.written.entries += batch.length;
        for (const p of batch) {
          this.options.index.add(p.service, p.key);
          p.resolve();
        }
      } catch (err) {
        this.fail(err, batch);
      }
    }
    this.writing = null;
  }

  private fail(err: unknown, batch: Pending[]): void {
    const error = err instanceof OrgformError ? err : this.options.writeError(err);
    const first = this.failure === undefined;
    this.failure ??= error;
    for (const p of [...batch, ...this.pending.splice(0)]) p.reject(error);
    if (first) this.options.onFailure(error);
  }
}
