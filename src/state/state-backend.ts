/**
 * Where the state journal is kept, behind one interface: a local file (the default), a PostgreSQL
 * table, or a Terraform HTTP backend (GitLab-managed state, Gitea's state registry). A plan reads
 * it; an apply locks it, records into it as changes complete and releases it; `state` commands
 * list, pull and migrate it; `force-unlock` breaks a lock left behind. Backends are opened by
 * open-state.ts and loaded only when used (a postgres URL alone brings in `pg`).
 */
import { OrgformError } from '../errors.js';
import type { JournalData, JournalEntry } from './journal.js';

/** What a plan needs of the journal: whether a one-shot change is recorded done. */
export interface JournalReader {
  has(serviceKey: string, key: string): boolean;
}

/** What an apply needs: record entries as changes complete, and wait until they are written. */
export interface StateJournal extends JournalReader {
  /**
   * Records an entry. The file resolves once it is on disk; a remote backend resolves at once and
   * writes in batches (see batched-journal.ts), so that a change never waits for the network.
   * An entry without a `run` key is stamped with this run's lock ID; one whose `run` is there but
   * undefined (migrate's copy of an entry recorded before orgform recorded runs) is kept as it is.
   */
  record(serviceKey: string, key: string, entry: JournalEntry): Promise<void>;
  /** Waits until every entry recorded so far is written (or its loss has been reported). */
  flush(): Promise<void>;
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
}

/** What a new lock says about its holder. */
export interface LockRequest {
  command: string;
  pid: number;
  host: string;
  who: string;
  startedAt: string;
  where?: string;
}

/** An apply's hold on the state: the lock, the journal that records under it, and a way to learn the lock is lost. */
export interface HeldState {
  lock: LockHolder;
  /** A stale lock (its holder's process gone) that was taken over, if any. */
  replaced?: LockHolder;
  /** Every entry as the lock was taken (migrate and state commands use it; an apply only asks `has`). */
  data: JournalData;
  journal: StateJournal;
  /**
   * Called at most once if the lock is lost while held (the connection dropped, someone broke
   * it) or the journal can no longer be written: nothing new may start then.
   */
  onLost(listener: (error: OrgformError) => void): void;
  /**
   * Writes what is left, releases the lock and closes the connection. Throws only when a lock still
   * held could not be let go and outlives this process (an HTTP backend's): the error says how to
   * break it, for every later apply would be refused.
   */
  release(): Promise<void>;
}

export interface StateBackend {
  readonly kind: 'file' | 'postgres' | 'http';
  /** Where the state is, for messages: a path, or a URL without its password. */
  readonly location: string;
  /** Every entry, without taking the lock (plan, state list, state pull). */
  read(): Promise<JournalData>;
  /** Takes the lock for `command` (refused, naming the holder, when someone has it), then reads. */
  lock(command: string): Promise<HeldState>;
  /** Breaks the lock `id` (only that one); says who held it, as far as known. */
  forceUnlock(id: string): Promise<LockHolder>;
}

/** One line about a lock's holder, with whatever the backend knows of it: `pid 7 on ci-3 as ada, running "orgform apply" since … (lock ID …)`. */
export function describeHolder(holder: LockHolder): string {
  let text = holder.pid !== undefined && holder.host !== undefined ? `pid ${holder.pid} on ${holder.host}` : (holder.host ?? '');
  if (holder.who) text += `${text === '' ? '' : ' as '}${holder.who}`;
  if (text === '') text = 'someone the backend does not name';
  if (holder.command) text += `, running "${holder.command}"`;
  if (holder.startedAt) text += ` since ${holder.startedAt}`;
  if (holder.where) text += `, in ${holder.where}`;
  return `${text} (lock ID ${holder.id})`;
}

/** A JournalReader over plain journal data. */
export function readerOf(data: JournalData): JournalReader {
  return { has: (serviceKey, key) => data.services[serviceKey]?.[key] !== undefined };
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
      `Cannot use the state at ${location}: ${why}. Nothing was changed. Check the address, the network and the credentials, or run with another --state.`,
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

/** Someone holds the lock: who, and how to break it if they are gone for good. */
export function stateLockedError(location: string, holder: LockHolder, unlockHint: string): OrgformError {
  return new OrgformError(
    'STATE_LOCKED',
    `The state at ${location} is locked by ${describeHolder(holder)}. Wait for that apply to finish; if it is gone for good, run: ${unlockHint}`,
  );
}
