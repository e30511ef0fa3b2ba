/**
 * The state in PostgreSQL (`postgres://…?state=NAME&schema=orgform`), through `pg`, loaded only
 * when such a URL is used. The schema (postgres-schema.ts) holds one row per entry, so that shards
 * write side by side and a reader asks only for what it needs; postgres-locks.ts says who may hold
 * the state at once.
 *
 * A run holds its locks on the one connection it also writes through: while that connection lives,
 * the lock is held, and every insert is made under it. A dropped connection (a network failure,
 * pg_terminate_backend, force-unlock) releases the lock: the run is told, every entry not yet
 * committed is reported not recorded, and it halts. Each use other than a run's opens a connection
 * of its own and closes it, so there is nothing left open between uses.
 */
import { OrgformError } from '../../errors.js';
import { BatchedJournal, LockLoss, RemoteHold } from '../batched-journal.js';
import type { LoggedEntry } from '../journal-entry.js';
import { KeyIndex } from '../journal-index.js';
import { lockLostError, StateUnavailableError, type HeldState, type Interest, type JournalIndex, type LockHolder, type LockRequest, type StateBackend } from '../state-backend.js';
import { journalNotWrittenError, noLockError, unwrittenAfter } from '../state-errors.js';
import type { StateSettings } from '../state-settings.js';
import { insertRows, selectKeysOf, streamRows } from './journal-rows.js';
import { PostgresLocks } from './postgres-locks.js';
import { PostgresSchema, SCHEMA_VERSION } from './postgres-schema.js';
import { PostgresSession, type PostgresSpec } from './postgres-session.js';

export interface PostgresStateOptions {
  settings: StateSettings;
  /** Aborted on an interrupt: the journal then writes what it holds at once. */
  signal?: AbortSignal;
  /** HEARTBEAT_MS, unless a test says otherwise. */
  heartbeatMs?: number;
}

/** How often a held connection is checked while the run is quiet: a lock lost is noticed within this, not at the next write. */
export const HEARTBEAT_MS = 5_000;

export class PostgresState implements StateBackend {
  readonly kind = 'postgres' as const;
  readonly location: string;

  constructor(
    private readonly spec: PostgresSpec,
    private readonly options: PostgresStateOptions,
  ) {
    this.location = spec.location;
  }

  async readIndex(interest: Interest): Promise<JournalIndex> {
    return this.using(async (session) => {
      const version = await new PostgresSchema(session).version();
      return version === 0 ? new KeyIndex() : readKeys(session, interest, version);
    });
  }

  async *entries(): AsyncGenerator<LoggedEntry> {
    const session = await PostgresSession.open(this.spec, this.options.settings);
    try {
      if ((await new PostgresSchema(session).version()) === 0) return;
      yield* streamRows(session);
    } catch (err) {
      throw session.unavailable(err);
    } finally {
      await session.close();
    }
  }

  async lock(request: LockRequest, interest: Interest): Promise<HeldState> {
    const session = await PostgresSession.open(this.spec, this.options.settings);
    try {
      await new PostgresSchema(session).ensure();
      const locks = new PostgresLocks(session, SCHEMA_VERSION);
      const { holder, replaced, stateId } = await locks.acquire(request);
      const index = await readKeys(session, interest, SCHEMA_VERSION);
      return this.hold(session, { holder, replaced, index, release: () => locks.release(holder, stateId) });
    } catch (err) {
      await session.close();
      throw session.unavailable(err);
    }
  }

  async forceUnlock(id: string): Promise<LockHolder> {
    return this.using(async (session) => {
      const version = await new PostgresSchema(session).version();
      if (version === 0) throw noLockError(this.location);
      return new PostgresLocks(session, version).forceUnlock(id);
    });
  }

  /** Whether the session of the run `id` (its application_name names it) is still on the server, asked through a connection of its own within `timeoutMs`. */
  private async sessionLives(id: string, timeoutMs: number): Promise<boolean> {
    const session = await PostgresSession.open(this.spec, { ...this.options.settings, timeoutMs });
    try {
      const { rows } = await session.query('SELECT 1 FROM pg_stat_activity WHERE application_name = $1', [`orgform run ${id}`]);
      return rows.length > 0;
    } finally {
      await session.close();
    }
  }

  /** Every use but a run's opens its own connection and closes it: nothing is left to close. */
  async close(): Promise<void> {}

  private async using<T>(work: (session: PostgresSession) => Promise<T>): Promise<T> {
    const session = await PostgresSession.open(this.spec, this.options.settings);
    try {
      return await work(session);
    } catch (err) {
      throw session.unavailable(err);
    } finally {
      await session.close();
    }
  }

  /** The run's hold: its journal writes through the session that holds the lock, and a lost session stops it. */
  private hold(session: PostgresSession, taken: { holder: LockHolder; replaced: LockHolder[]; index: KeyIndex; release(): Promise<void> }): HeldState {
    const loss = new LockLoss();
    const journal = new BatchedJournal({
      index: taken.index,
      run: taken.holder.id,
      policy: this.options.settings.batch,
      write: (batch) => insertRows(session, batch),
      rejection: (err) => journalNotWrittenError(this.location, err instanceof OrgformError ? err.message : session.describe(err)),
      onFailure: (err, unwritten) => {
        const why = err instanceof OrgformError ? err.message : `writing to the database failed (${session.describe(err)})`;
        loss.report(lockLostError(this.location, unwrittenAfter(why, unwritten)));
      },
    });
    // A connection that stops answering is given up, as lost: its locks may be gone on the server.
    const every = this.options.heartbeatMs ?? HEARTBEAT_MS;
    const limit = Math.min(every, this.options.settings.timeoutMs);
    let checking = false;
    const check = async () => {
      if (checking) return;
      checking = true;
      try {
        const held = await session.probe(limit, () => this.sessionLives(taken.holder.id, limit));
        if (!held) await session.abandon('the database ended its session, and the lock went with it, while a write waited for an answer');
      } catch (err) {
        await session.abandon(`the database stopped answering (${err instanceof StateUnavailableError ? err.why : session.describe(err)})`);
      } finally {
        checking = false;
      }
    };
    const heartbeat = setInterval(() => void check(), every);
    heartbeat.unref();
    session.onLost((why) => {
      clearInterval(heartbeat);
      journal.stop(new OrgformError('STATE_LOCK_LOST', why));
    });
    return new RemoteHold({
      lock: taken.holder,
      replaced: taken.replaced,
      journal,
      loss,
      ...(this.options.signal === undefined ? {} : { signal: this.options.signal }),
      // A failure here needs no report: closing the connection next lets go of the lock all the same.
      unlock: () => taken.release().catch(() => undefined),
      close: async () => {
        clearInterval(heartbeat);
        await session.close();
      },
    });
  }
}

/** The keys of the entries `interest` names: one statement, all committed before it began. */
async function readKeys(session: PostgresSession, interest: Interest, schemaVersion: number): Promise<KeyIndex> {
  const index = new KeyIndex();
  if (interest.targets.size === 0) return index;
  for (const { service, key } of await selectKeysOf(session, [...interest.targets], schemaVersion)) index.add(service, key);
  return index;
}
