/**
 * The state in a Terraform HTTP backend: GitLab-managed Terraform state
 * (`…/api/v4/projects/ID/terraform/state/NAME`) or Gitea's state registry
 * (`…/api/packages/OWNER/terraform/state/NAME`), or any server of that protocol.
 *
 * One document holds the journal and the runs that hold the state. A run registers in it, as the
 * lock matrix allows (shards of one count side by side), and writes its entries in batches; the
 * server's lock is held only around each of those writes (document-writer.ts), which check first
 * that the run is still registered and the document still the one it registered in. A plan, `state
 * list` and `state pull` read the document without any lock. The requests go through the transport
 * (http-document-port.ts).
 */
import { randomBytes } from 'node:crypto';
import { OrgformError } from '../../errors.js';
import type { NetworkSettings } from '../../transport/proxy-settings.js';
import { BatchedJournal, LockLoss, RemoteHold } from '../batched-journal.js';
import { entriesOfData, type LoggedEntry } from '../journal-entry.js';
import { indexEntries, type KeyIndex } from '../journal-index.js';
import { lockLostError, lockNotReleasedError, StateUnavailableError, type HeldState, type Interest, type JournalIndex, type LockHolder, type LockRequest, type StateBackend } from '../state-backend.js';
import { journalNotWrittenError, unwrittenAfter } from '../state-errors.js';
import type { StateSettings } from '../state-settings.js';
import { DocumentWriter } from './document-writer.js';
import { HttpDocumentPort, type HttpSpec } from './http-document-port.js';

export { HttpStateError } from './http-document-port.js';
export { lockSettings } from './terraform-lock.js';

export interface HttpStateOptions {
  settings: StateSettings;
  /** What a lock says of its holder (force-unlock's own, as it breaks another's). */
  describe(command: string): LockRequest;
  network: NetworkSettings;
  /** Aborted on an interrupt: the journal then writes what it holds at once. */
  signal?: AbortSignal;
  /** Whether a registered run is known to be gone (its process ended on this host): its registration is dropped. */
  isGone?(holder: LockHolder): boolean;
  /** The waits for the server's lock while another run's write holds it; injected by tests. */
  sleep?(ms: number): Promise<void>;
}

export class TerraformHttpState implements StateBackend {
  readonly kind = 'http' as const;
  readonly location: string;
  readonly #port: HttpDocumentPort;
  readonly #options: HttpStateOptions;

  constructor(spec: HttpSpec, options: HttpStateOptions) {
    this.#port = new HttpDocumentPort(spec, options.settings, options.network);
    this.#options = options;
    this.location = spec.location;
  }

  async readIndex(interest: Interest): Promise<JournalIndex> {
    return indexEntries(entriesOfData((await this.#port.read()).data), interest);
  }

  async *entries(): AsyncGenerator<LoggedEntry> {
    yield* [...entriesOfData((await this.#port.read()).data)].sort(byServiceThenKey);
  }

  async lock(request: LockRequest, interest: Interest): Promise<HeldState> {
    const holder: LockHolder = { id: randomBytes(6).toString('hex'), ...request };
    const writer = this.#writer();
    const { doc, replaced } = await writer.register(holder);
    return this.#hold(writer, holder, replaced, indexEntries(entriesOfData(doc.data), interest));
  }

  /** Breaks the run `id`: the server's lock if that run holds it, and its registration. */
  forceUnlock(id: string): Promise<LockHolder> {
    return this.#writer().forceUnlock(id, this.#options.describe('orgform force-unlock'));
  }

  close(): Promise<void> {
    return this.#port.close();
  }

  #writer(): DocumentWriter {
    const { settings, isGone, sleep } = this.#options;
    return new DocumentWriter(this.#port, { location: this.location, timeoutMs: settings.timeoutMs, isGone: isGone ?? (() => false), ...(sleep === undefined ? {} : { sleep }) });
  }

  /** The run's hold: each batch written under the server's lock for that write only; the registration taken out at release. */
  #hold(writer: DocumentWriter, holder: LockHolder, replaced: LockHolder[], index: KeyIndex): HeldState {
    const loss = new LockLoss();
    const journal = new BatchedJournal({
      index,
      run: holder.id,
      policy: this.#options.settings.batch,
      write: (batch) => writer.write(holder, batch),
      rejection: (err) => journalNotWrittenError(this.location, whyOf(err)),
      onFailure: (err, unwritten) => {
        const what = err instanceof OrgformError && err.code === 'STATE_LOCK_LOST' ? whyOf(err) : `a write failed (${whyOf(err)})`;
        loss.report(lockLostError(this.location, unwrittenAfter(what, unwritten)));
      },
    });
    return new RemoteHold({
      lock: holder,
      replaced,
      journal,
      loss,
      ...(this.#options.signal === undefined ? {} : { signal: this.#options.signal }),
      // Left registered, the run would stand in every later run's way: said, with how to break it.
      unlock: () => writer.unregister(holder).catch((err: unknown) => Promise.reject(lockNotReleasedError(this.location, holder.id, whyOf(err)))),
      // The backend's opener closes it.
      close: async () => undefined,
    });
  }
}

/** What went wrong, alone: a state error's own words, or the error's message. */
function whyOf(err: unknown): string {
  return err instanceof StateUnavailableError ? err.why : err instanceof Error ? err.message : String(err);
}

function byServiceThenKey(a: LoggedEntry, b: LoggedEntry): number {
  if (a.service !== b.service) return a.service < b.service ? -1 : 1;
  return a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
}
