/**
 * Where the state journal is kept, behind one interface: a local file (the default), a PostgreSQL
 * table, or a Terraform HTTP backend (GitLab-managed state, Gitea's state registry). A plan reads
 * what it may ask of it (`readIndex`); an apply locks it, whole or one shard's partition
 * (lock-matrix.ts), records into it as changes complete and releases it; the `state` commands
 * list, pull and migrate every entry (`entries`); `force-unlock` breaks a lock left behind.
 * Backends are opened by open-state.ts and loaded only when used (a postgres URL alone brings in
 * `pg`); whoever opens one closes it, once.
 */
import { OrgformError } from '../errors.js';
import { NOTHING_CHANGED } from './state-errors.js';
import type { JournalEntry, LoggedEntry } from './journal-entry.js';

/** One shard of the configuration, as `--shard INDEX/COUNT` names it (1-based). */
export interface Partition {
  index: number;
  count: number;
}

/**
 * What a run may ask of the journal: the targets (`KIND TARGET`, model/journal-key.ts) of every
 * one-shot change its configuration declares. A reader keeps only the entries of these.
 */
export interface Interest {
  readonly targets: ReadonlySet<string>;
}

/** What a plan needs of the journal: whether a one-shot change is recorded done. */
export interface JournalIndex {
  has(serviceKey: string, key: string): boolean;
}

/** The name plan/read and the executor use (their files are others' in issue 32's phase 2): one name once merged. */
export type JournalReader = JournalIndex;

/** What an apply needs: record entries as changes complete, and wait until they are written. */
export interface StateJournal extends JournalIndex {
  /**
   * Records an entry and resolves once it is durable: on disk in full (file), committed
   * (PostgreSQL), or in a document the server accepted (HTTP). A change counts as done only then.
   * An entry without a `run` key is stamped with this run's lock ID; one whose `run` is there but
   * undefined (migrate's copy of an entry recorded before orgform recorded runs) is kept as it is.
   */
  record(serviceKey: string, key: string, entry: JournalEntry): Promise<void>;
  /** Waits until every entry recorded so far is written (or its loss has been reported). */
  flush(): Promise<void>;
  /**
   * True when entries are written in batches (a remote state), so that a record may wait up to the
   * batch delay: the executor then lets the change's worker go on meanwhile. Otherwise a record
   * takes one write, and the worker waits for it, so that a failure stops the next change.
   */
  readonly batched?: boolean;
  /**
   * Where a lock can be broken without this process hearing of it (a file state's force-unlock):
   * throws, and tells the loss (HeldState.onLost), once the lock is no longer the run's. Asked
   * before each change is sent, so that a run whose lock was broken starts nothing more on the
   * organisations another run may hold by then.
   */
  checkHeld?(): Promise<void>;
}

/** Who holds a lock, as far as the backend can say (a Terraform HTTP backend may say only some of it). */
export interface LockHolder {
  id: string;
  who?: string;
  pid?: number;
  host?: string;
  command?: string;
  startedAt?: string;
  /** The CI job that runs it, when there is one. */
  where?: string;
  /** The shard it holds; none: the whole state. */
  partition?: Partition;
}

/** What a new lock says about its holder, and what it holds: one shard's partition, or (none) the whole state. */
export interface LockRequest {
  command: string;
  pid: number;
  host: string;
  who: string;
  startedAt: string;
  where?: string;
  partition?: Partition;
}

/** A run's hold on the state: the lock, the journal that records under it, and a way to learn the lock is lost. */
export interface HeldState {
  lock: LockHolder;
  /** Holders found gone (their process ended on this host) and dropped as the lock was taken. */
  replaced: LockHolder[];
  /** `has` answers for the entries of the interest the lock was taken with, and for those recorded since. */
  journal: StateJournal;
  /**
   * Called at most once if the lock is lost while held (the connection dropped, someone broke
   * it) or the journal can no longer be written: nothing new may start then.
   */
  onLost(listener: (error: OrgformError) => void): void;
  /**
   * Writes what is left and lets go of the lock. Throws only when a lock still held could not be
   * let go and outlives this process (an HTTP backend's): the error says how to break it, for
   * every later apply would be refused.
   */
  release(): Promise<void>;
}

export interface StateBackend {
  readonly kind: 'file' | 'postgres' | 'http';
  /** Where the state is, for messages: a path, or a URL without its password. */
  readonly location: string;
  /** Every entry of `interest`, whoever wrote it, without a lock (plan): all written before the call began. */
  readIndex(interest: Interest): Promise<JournalIndex>;
  /** Every entry, sorted by service then key, without a lock (state list, pull, migrate's source). */
  entries(): AsyncIterable<LoggedEntry>;
  /** Takes the lock the request asks for (refused, naming the holder, when the lock matrix says so), then reads `interest`. */
  lock(request: LockRequest, interest: Interest): Promise<HeldState>;
  /** Breaks the lock `id` (only that one); says who held it, as far as known. */
  forceUnlock(id: string): Promise<LockHolder>;
  /** Lets go of whatever the backend opened (connections, agents): once, by whoever opened it, after any hold is released. Never throws. */
  close(): Promise<void>;
}

/** One line about a lock's holder, with whatever the backend knows of it: `pid 7 on ci-3 as ada, running "orgform apply" since … (lock ID …)`. */
export function describeHolder(holder: LockHolder): string {
  let text = holder.pid !== undefined && holder.host !== undefined ? `pid ${holder.pid} on ${holder.host}` : (holder.host ?? '');
  if (holder.who) text += `${text === '' ? '' : ' as '}${holder.who}`;
  if (text === '') text = 'someone the backend does not name';
  if (holder.command) text += `, running "${holder.command}"`;
  if (holder.partition !== undefined && !(holder.command ?? '').includes('--shard')) text += ` (shard ${holder.partition.index}/${holder.partition.count})`;
  if (holder.startedAt) text += ` since ${holder.startedAt}`;
  if (holder.where) text += `, in ${holder.where}`;
  return `${text} (lock ID ${holder.id})`;
}

/** A remote state that cannot be reached or read: nothing was written, and what to check. */
export class StateUnavailableError extends OrgformError {
  constructor(
    location: string,
    /** What went wrong, alone (for a message that says more around it). */
    readonly why: string,
    cause?: unknown,
  ) {
    super(
      'STATE_UNAVAILABLE',
      `Cannot use the state at ${location}: ${why}. ${NOTHING_CHANGED} Check the address, the network and the credentials, or run with another --state.`,
      cause === undefined ? {} : { cause },
    );
    this.name = 'StateUnavailableError';
  }
}

export function stateUnavailableError(location: string, why: string, cause?: unknown): StateUnavailableError {
  return new StateUnavailableError(location, why, cause);
}

/** The lock was lost during an apply: nothing new starts; what the journal may be missing is harmless, and said so. */
export function lockLostError(location: string, why: string): OrgformError {
  return new OrgformError(
    'STATE_LOCK_LOST',
    `Lost the lock on the state at ${location}: ${why}. Nothing new was started; the changes in flight finished. One-shot changes done since the last write to the state may not be recorded: the next plan shows them again, and applying them finds them already done. Run orgform apply again.`,
  );
}

/** The lock could not be let go at the end: what was done stands; what to run before the next apply. */
export function lockNotReleasedError(location: string, id: string, why: string): OrgformError {
  return new OrgformError(
    'STATE_LOCKED',
    `Could not release the lock ${id} on the state at ${location}: ${why}. What was done above stands and is recorded, but every later apply will be refused until the lock is broken: orgform force-unlock ${id} with the same --state (or ORGFORM_STATE).`,
  );
}

/**
 * Someone holds the state: who, why that stands in the way when it is not plain (lock-matrix.ts
 * says it of shards), and how to break it if they are gone for good.
 */
export function stateLockedError(location: string, holder: LockHolder, unlockHint: string, why?: string): OrgformError {
  return new OrgformError(
    'STATE_LOCKED',
    `The state at ${location} is locked by ${describeHolder(holder)}${why === undefined ? '' : `: ${why}`}. Wait for that run to finish; if it is gone for good, run: ${unlockHint}`,
  );
}
