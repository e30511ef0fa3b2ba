/**
 * Who holds a PostgreSQL state. Each run holds session-level advisory locks on the one connection it
 * also writes through, and registers itself in `holders`, so that a refusal can name it:
 *
 * - an unsharded apply or a migrate: pg_try_advisory_lock(class, state), the whole state alone;
 * - a shard i/n: pg_try_advisory_lock_shared(class, state), so that shards run side by side, and an
 *   exclusive lock keyed by (schema, state, n, i), its partition alone.
 *
 * The count rule (no `1/3` while `1/2` runs) is no advisory lock: lock-matrix.ts decides it, over the
 * registered runs whose session still holds the state's lock. Lockers of one state go one at a time
 * (the state's row, FOR UPDATE), so deciding and registering are one step. A session's locks end
 * with it (a killed run, a dropped connection): its row is then dead, and deleted by the next locker.
 */
import { createHash, randomBytes } from 'node:crypto';
import { OrgformError } from '../../errors.js';
import { decideLock, lockRefusedError, type RefusalReason } from '../lock-matrix.js';
import { forceUnlockHint, noLockError, noLockWithIdError } from '../state-errors.js';
import { describeHolder, type LockHolder, type LockRequest, type Partition } from '../state-backend.js';
import { tableOf, type PostgresSession } from './postgres-session.js';

/** A registered run, and whether its session still holds the state. */
interface Registration {
  holder: LockHolder;
  backendPid: number;
  live: boolean;
  /** Registered by an older orgform, in `states.lock_*` rather than `holders`. */
  legacy?: true;
}

/** Who holds the state's advisory lock when no live run is registered for it (an older orgform that has not said who it is yet). */
const UNREGISTERED = {
  holder: { id: '(not registered)', who: 'a database session that has not said who it is (an older orgform)' },
  why: 'whole-state',
} as const;

/** A run's session names its lock in its application_name (SQL, for a row of `holders` as `h`). */
const RUN_NAME = "'orgform run ' || h.lock_id";

/** How long a locker waits for another locker of the same state (milliseconds of work each). */
const LOCKERS_WAIT = "SET LOCAL lock_timeout = '5s'";

export class PostgresLocks {
  constructor(
    private readonly session: PostgresSession,
    /** The schema's version: 1 has no `holders` yet (force-unlock of an older orgform's lock). */
    private readonly schemaVersion: number,
  ) {}

  /** Takes the state for `request` (its partition, or the whole state), or refuses naming a live holder. */
  async acquire(request: LockRequest): Promise<{ holder: LockHolder; replaced: LockHolder[]; stateId: number }> {
    const holder: LockHolder = { id: randomBytes(6).toString('hex'), ...request };
    return this.session.transaction(async () => {
      await this.session.query(LOCKERS_WAIT);
      const stateId = await this.lockStateRow();
      const taken = await this.tryAdvisory(stateId, request.partition);
      const registrations = await this.registrations(stateId);
      const live = registrations.filter((r) => r.live);
      const decision = decideLock(
        live.map((r) => r.holder),
        request.partition,
      );
      if (!taken || !decision.take) {
        if (taken) await this.unlockAdvisory(stateId, request.partition);
        throw this.refusal(decision.take ? UNREGISTERED : decision, request.partition);
      }
      const dead = registrations.filter((r) => !r.live && r.legacy === undefined);
      await this.session.query(`DELETE FROM ${tableOf(this.session.place, 'holders')} WHERE lock_id = ANY($1)`, [dead.map((r) => r.holder.id)]);
      await this.register(holder);
      return { holder, replaced: dead.map((r) => r.holder), stateId };
    });
  }

  /** Lets go of the state: the registration, then the locks (ending the session would free them all the same). */
  async release(holder: LockHolder, stateId: number): Promise<void> {
    await this.unregister(holder.id);
    await this.unlockAdvisory(stateId, holder.partition);
  }

  private async unregister(id: string): Promise<void> {
    await this.session.query(`DELETE FROM ${tableOf(this.session.place, 'holders')} WHERE lock_id = $1`, [id]);
  }

  /** The state's row id (made if missing), locked until the transaction ends: lockers of a state go one at a time. */
  async lockStateRow(): Promise<number> {
    const states = tableOf(this.session.place, 'states');
    await this.session.query(`INSERT INTO ${states} (name) VALUES ($1) ON CONFLICT (name) DO NOTHING`, [this.session.place.name]);
    const { rows } = await this.session.query<{ id: number }>(`SELECT id FROM ${states} WHERE name = $1 FOR UPDATE`, [this.session.place.name]);
    return rows[0]!.id;
  }

  /**
   * Breaks the lock `id` (only that run: other shards keep theirs), ending its session if it still
   * holds the state; says who held it.
   */
  async forceUnlock(id: string): Promise<LockHolder> {
    const stateId = await this.stateRowId();
    const registrations = stateId === undefined ? [] : await this.registrations(stateId);
    const target = registrations.find((r) => r.holder.id === id);
    const live = registrations.filter((r) => r.live);
    if (target === undefined) {
      const location = this.session.place.location;
      if (live.length === 0) throw noLockError(location);
      throw noLockWithIdError(location, id, live.map((r) => describeHolder(r.holder)).join('; '));
    }
    if (target.live) await this.terminate(target.backendPid);
    await this.forget(target);
    return target.holder;
  }

  /** Every run registered on the state, the older orgform's included, each with whether its session still holds the state. */
  private async registrations(stateId: number): Promise<Registration[]> {
    const place = this.session.place;
    const holdsState = (pid: string) => `EXISTS (SELECT 1 FROM pg_locks l
        WHERE l.locktype = 'advisory' AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
          AND l.classid::bigint = $2 AND l.objid::bigint = $1 AND l.objsubid = 2 AND l.granted AND l.pid = ${pid})`;
    const found: Registration[] = [];
    const legacy = await this.session.query<{ lock_id: string | null; lock_info: LockHolder | null; lock_pid: number | null; live: boolean }>(
      `SELECT lock_id, lock_info, lock_pid, ${holdsState('s.lock_pid')} AS live FROM ${tableOf(place, 'states')} s WHERE s.id = $1`,
      [stateId, place.klass >>> 0],
    );
    const old = legacy.rows[0];
    if (old?.lock_id != null && old.lock_pid !== null) found.push({ holder: old.lock_info ?? { id: old.lock_id }, backendPid: old.lock_pid, live: old.live, legacy: true });
    if (this.schemaVersion < 2) return found;
    // The session must also still be that run's (its application_name names the lock): a backend
    // pid reused by another session is never taken for the run, nor ended by a force-unlock.
    const { rows } = await this.session.query<{ info: LockHolder; backend_pid: number; live: boolean }>(
      `SELECT h.info, h.backend_pid, ${holdsState('h.backend_pid')}
              AND EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.pid = h.backend_pid AND a.application_name = ${RUN_NAME}) AS live
         FROM ${tableOf(place, 'holders')} h
        WHERE h.state = (SELECT name FROM ${tableOf(place, 'states')} WHERE id = $1) ORDER BY h.locked_at, h.lock_id`,
      [stateId, place.klass >>> 0],
    );
    for (const row of rows) found.push({ holder: row.info, backendPid: row.backend_pid, live: row.live });
    return found;
  }

  private async register(holder: LockHolder): Promise<void> {
    // Kept by the session once the transaction commits (and undone if it does not).
    await this.session.query("SELECT set_config('application_name', 'orgform run ' || $1, false)", [holder.id]);
    await this.session.query(
      `INSERT INTO ${tableOf(this.session.place, 'holders')} (lock_id, state, shard_index, shard_count, info, backend_pid) VALUES ($1, $2, $3, $4, $5, pg_backend_pid())`,
      [holder.id, this.session.place.name, holder.partition?.index ?? null, holder.partition?.count ?? null, JSON.stringify(holder)],
    );
  }

  private async forget(registration: Registration): Promise<void> {
    const place = this.session.place;
    if (registration.legacy) {
      await this.session.query(`UPDATE ${tableOf(place, 'states')} SET lock_id = NULL, lock_info = NULL, lock_pid = NULL, locked_at = NULL WHERE name = $1 AND lock_id = $2`, [
        place.name,
        registration.holder.id,
      ]);
    } else {
      await this.unregister(registration.holder.id);
    }
  }

  private async stateRowId(): Promise<number | undefined> {
    const { rows } = await this.session.query<{ id: number }>(`SELECT id FROM ${tableOf(this.session.place, 'states')} WHERE name = $1`, [this.session.place.name]);
    return rows[0]?.id;
  }

  private async tryAdvisory(stateId: number, partition: Partition | undefined): Promise<boolean> {
    const { klass } = this.session.place;
    if (partition === undefined) return this.ask('SELECT pg_try_advisory_lock($1, $2) AS ok', [klass, stateId]);
    if (!(await this.ask('SELECT pg_try_advisory_lock_shared($1, $2) AS ok', [klass, stateId]))) return false;
    if (await this.ask('SELECT pg_try_advisory_lock($1::bigint) AS ok', [this.partitionKey(partition)])) return true;
    await this.session.query('SELECT pg_advisory_unlock_shared($1, $2)', [klass, stateId]);
    return false;
  }

  private async unlockAdvisory(stateId: number, partition: Partition | undefined): Promise<void> {
    const { klass } = this.session.place;
    if (partition === undefined) {
      await this.session.query('SELECT pg_advisory_unlock($1, $2)', [klass, stateId]);
      return;
    }
    await this.session.query('SELECT pg_advisory_unlock($1::bigint)', [this.partitionKey(partition)]);
    await this.session.query('SELECT pg_advisory_unlock_shared($1, $2)', [klass, stateId]);
  }

  /**
   * A shard's own lock, in the single-key space (apart from the two-key one of the states): 64 bits
   * of a hash of where the state is and which partition. A collision could only refuse a shard.
   */
  private partitionKey(partition: Partition): string {
    const { schema, name } = this.session.place;
    const digest = createHash('sha256').update(`orgform\0${schema}\0${name}\0${partition.count}\0${partition.index}`).digest();
    return digest.readBigInt64BE(0).toString();
  }

  private async ask(text: string, values: unknown[]): Promise<boolean> {
    const { rows } = await this.session.query<{ ok: boolean }>(text, values);
    return rows[0]?.ok === true;
  }

  private refusal(decision: { holder: LockHolder; why: RefusalReason }, asked: Partition | undefined): OrgformError {
    return lockRefusedError(this.session.place.location, decision, asked, forceUnlockHint(decision.holder.id));
  }

  /** Ends a session and waits (up to 5 s, on PostgreSQL 14 and later) until it is gone, and its locks with it. */
  private async terminate(pid: number): Promise<void> {
    const ended = await this.ask('SELECT pg_terminate_backend($1, 5000) AS ok', [pid]).catch((err: unknown) => {
      if ((err as { code?: string }).code !== '42883') throw err;
      return this.ask('SELECT pg_terminate_backend($1) AS ok', [pid]);
    });
    if (ended) return;
    throw new OrgformError(
      'STATE_LOCKED',
      `Could not end the database session (backend pid ${pid}) that holds the lock on ${this.session.place.location}: this user may not. Ask a database administrator to run SELECT pg_terminate_backend(${pid}).`,
    );
  }
}
