/**
 * Every write of a Terraform HTTP state, for shards and single runs alike: the server's lock is held
 * only around one write (take, read, check, merge, write, let go), and the runs that hold the state
 * are registered in the document itself (`orgform.runs`), where the lock matrix (lock-matrix.ts)
 * decides who may join. So shards of one count write one document in turn, and each write is made
 * on the document as it is, never on a copy read long ago.
 *
 * Before each write the run checks, whatever the server would accept, that the document is still
 * the one it registered in (the same lineage, its registration still there: a force-unlock removes
 * it) and, when it holds the whole state, that nobody else wrote since its own last write (the
 * serial). A failed check stops the run. The protocol has no compare-and-swap: between the read and
 * the write only a writer that ignores the lock can come in, and docs/state.md says so.
 *
 * Transport-agnostic: the requests go through a DocumentPort (http-document-port.ts is the one on
 * the transport; the tests have one on fetch).
 */
import { randomBytes } from 'node:crypto';
import { OrgformError } from '../../errors.js';
import type { LoggedEntry } from '../journal-entry.js';
import { decideLock, lockRefusedError } from '../lock-matrix.js';
import { describeHolder, type LockHolder } from '../state-backend.js';
import { forceUnlockHint, noLockWithIdError } from '../state-errors.js';
import { mergeEntries, whyNotOurs, type StateDocument } from '../terraform-document.js';

/** The protocol's four requests, as the backend sends them. */
export interface DocumentPort {
  /** GET: the document; an empty one for a state that holds nothing yet. Refuses one orgform did not write. */
  read(): Promise<StateDocument>;
  /** POST /lock for `holder`, doing `what`: undefined once taken, else who the server says holds it (409 or 423). Sent once. */
  lock(holder: LockHolder, what: string): Promise<LockHolder | undefined>;
  /** DELETE /lock naming `id`: false when the server says it is not locked with that ID. */
  unlock(id: string): Promise<boolean>;
  /** POST ?ID=`id`: the whole document. Throws when it is refused. */
  post(doc: StateDocument, id: string): Promise<void>;
}

export interface DocumentWriterOptions {
  location: string;
  /** How long a write waits for the server's lock, held by another run's write (ORGFORM_STATE_TIMEOUT_MS). */
  timeoutMs: number;
  /** Whether a registered run is known to be gone (its pid ended on this host): it is dropped, and told as replaced. */
  isGone(holder: LockHolder): boolean;
  sleep?(ms: number): Promise<void>;
  random?(): number;
  now?(): number;
}

/** The waits between tries of the server's lock: full jitter from 100 ms, doubling up to 2 s. */
const FIRST_WAIT_MS = 100;
const LONGEST_WAIT_MS = 2_000;

export class DocumentWriter {
  private lineage: string | undefined;
  /** The serial of this run's last write, checked before the next one when the run holds the whole state. */
  private serial: number | undefined;
  /** The end of the last write under the server's lock. */
  private turn: Promise<void> = Promise.resolve();

  constructor(
    private readonly port: DocumentPort,
    private readonly options: DocumentWriterOptions,
  ) {}

  /** Registers `holder` in the document, as the lock matrix allows, and returns the document as registered. */
  async register(holder: LockHolder): Promise<{ doc: StateDocument; replaced: LockHolder[] }> {
    return this.underLock(holder, 'registering a run', async () => {
      const doc = await this.port.read();
      const replaced = Object.values(doc.runs).filter((run) => this.options.isGone(run));
      for (const gone of replaced) delete doc.runs[gone.id];
      const decision = decideLock(Object.values(doc.runs), holder.partition);
      if (!decision.take) throw lockRefusedError(this.options.location, decision, holder.partition, forceUnlockHint(decision.holder.id));
      doc.runs[holder.id] = holder;
      await this.post(doc, holder);
      this.lineage = doc.lineage;
      return { doc, replaced };
    });
  }

  /** Adds a batch to the document, once the run has checked it may still write it. */
  async write(holder: LockHolder, batch: readonly LoggedEntry[]): Promise<void> {
    await this.underLock(holder, `writing a batch of ${batch.length}`, async () => {
      const doc = await this.checkedRead(holder);
      mergeEntries(doc.data, batch);
      await this.post(doc, holder);
    });
  }

  /**
   * Takes the run's registration out of the document (nothing to do when a force-unlock already did),
   * and lets go of the server's lock: a failure to do either throws, for either would stand in every
   * later run's way.
   */
  async unregister(holder: LockHolder): Promise<void> {
    await this.underLock(
      holder,
      'letting go of the state',
      async () => {
        const doc = await this.port.read();
        if (doc.lineage !== this.lineage || doc.runs[holder.id] === undefined) return;
        delete doc.runs[holder.id];
        await this.post(doc, holder);
      },
      true,
    );
  }

  /**
   * Breaks the run `id`: the server's lock, if that run holds it (killed in the middle of a write),
   * then its registration. Other runs keep theirs. Says who held it.
   */
  async forceUnlock(id: string, by: Omit<LockHolder, 'id'>): Promise<LockHolder> {
    const serverLock = await this.port.unlock(id);
    const breaker: LockHolder = { ...by, id: randomBytes(6).toString('hex') };
    return this.underLock(breaker, `breaking the lock ${id}`, async () => {
      const doc = await this.port.read();
      const holder = doc.runs[id];
      if (holder === undefined) {
        if (serverLock) return { id };
        throw noLockWithIdError(this.options.location, id, Object.values(doc.runs).map(describeHolder).join('; '));
      }
      delete doc.runs[id];
      await this.post(doc, breaker);
      return holder;
    });
  }

  /** The document as read before a write, or the run stopped: replaced, force-unlocked, or written by someone else. */
  private async checkedRead(holder: LockHolder): Promise<StateDocument> {
    const doc = await this.port.read();
    const serial = holder.partition === undefined ? this.serial : undefined;
    const why = whyNotOurs(doc, { lineage: this.lineage ?? doc.lineage, runId: holder.id, ...(serial === undefined ? {} : { serial }) });
    if (why !== undefined) throw new OrgformError('STATE_LOCK_LOST', why);
    return doc;
  }

  private async post(doc: StateDocument, holder: LockHolder): Promise<void> {
    doc.serial += 1;
    await this.port.post(doc, holder.id);
    this.serial = doc.serial;
  }

  /**
   * Runs `work` holding the server's lock, waited for while another run's write holds it; always lets
   * go after. A lock this run could not let go of is taken again by its next write (the server names
   * this run as the holder); `strict`, for the last one, such a failure throws.
   */
  private underLock<T>(holder: LockHolder, what: string, work: () => Promise<T>, strict = false): Promise<T> {
    // One at a time: a lock the server says this run holds is then one left from an earlier write.
    const turn = this.turn.then(() => this.lockedWork(holder, what, work, strict));
    this.turn = turn.then(
      () => undefined,
      () => undefined,
    );
    return turn;
  }

  private async lockedWork<T>(holder: LockHolder, what: string, work: () => Promise<T>, strict: boolean): Promise<T> {
    await this.take(holder, what);
    let result: T;
    try {
      result = await work();
    } catch (err) {
      await this.port.unlock(holder.id).catch(() => undefined);
      throw err;
    }
    const letGo = this.port.unlock(holder.id);
    await (strict ? letGo : letGo.catch(() => undefined));
    return result;
  }

  private async take(holder: LockHolder, what: string): Promise<void> {
    const now = this.options.now ?? Date.now;
    const sleep = this.options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
    const random = this.options.random ?? Math.random;
    const until = now() + this.options.timeoutMs;
    for (let attempt = 0; ; attempt += 1) {
      const other = await this.port.lock(holder, what);
      // Held already by this run: an earlier write's unlock failed.
      if (other === undefined || other.id === holder.id) return;
      const wait = random() * Math.min(LONGEST_WAIT_MS, FIRST_WAIT_MS * 2 ** attempt);
      if (now() + wait > until) {
        throw new OrgformError(
          'STATE_LOCKED',
          `The state at ${this.options.location} stayed locked by ${describeHolder(other)} for ORGFORM_STATE_TIMEOUT_MS (${this.options.timeoutMs} ms) while ${what}. Another run's write holds it only a moment: if it is gone for good, run: ${forceUnlockHint(other.id)}`,
        );
      }
      await sleep(wait);
    }
  }
}
