/**
 * The state's schema in PostgreSQL, and its migrations. Version 1 (orgform 0.1): `states` (one row
 * per state name, with its lock's holder), `journal` (one row per entry, keyed by state, service and
 * change key) and `migrations`. Version 2 adds the journal's `target` (the change's kind and target,
 * indexed with the state, so that a plan reads only the entries its configuration names) and
 * `holders` (one row per run holding the state: shards hold it together); `states.lock_*` are left
 * for an older orgform, which refuses version 2 anyway.
 *
 * The schema is created, or moved to the current version, by the first apply that needs it, under a
 * transaction-level advisory lock so that two first runs do it once. A plan only reads, and reads a
 * missing schema as an empty journal and a version-1 schema as it is.
 */
import { OrgformError } from '../../errors.js';
import { tableOf, type PostgresSession } from './postgres-session.js';

export const SCHEMA_VERSION = 2;

/**
 * How long the move of a version-1 journal may take: its rows are each given a target (about 20 s
 * a million rows on a quiet server), once, whatever ORGFORM_STATE_TIMEOUT_MS says.
 */
const MIGRATION_TIMEOUT_MS = 60 * 60_000;

/** The schema's migrations are made one at a time under (class, 0); a state's lock is (class, its row id ≥ 1). */
const MIGRATION_OBJECT = 0;

/** SQL for a row's `target`, from its key (`kind organisation target`, each part without spaces): what a version-1 row lacks. */
export function targetOfKey(column = 'key'): string {
  return `split_part(${column}, ' ', 1) || ' ' || split_part(${column}, ' ', 3)`;
}

export class PostgresSchema {
  constructor(private readonly session: PostgresSession) {}

  /** The schema's version, or 0 when it has not been created; refused when a newer orgform made it. */
  async version(): Promise<number> {
    let version: number;
    try {
      const { rows } = await this.session.query<{ v: number | null }>(`SELECT max(version) AS v FROM ${tableOf(this.session.place, 'migrations')}`);
      version = rows[0]?.v ?? 0;
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (code === '42P01' || code === '3F000') return 0;
      throw err;
    }
    this.check(version);
    return version;
  }

  /** Creates the schema, or moves it to SCHEMA_VERSION, once, whoever else is doing so at the same moment. */
  async ensure(): Promise<void> {
    if ((await this.version()) === SCHEMA_VERSION) return;
    const place = this.session.place;
    await this.session.transaction(async () => {
      await this.session.query('SELECT pg_advisory_xact_lock($1, $2)', [place.klass, MIGRATION_OBJECT]);
      const exists = await this.session.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [place.schema]);
      if (exists.rowCount === 0) await this.session.query(`CREATE SCHEMA ${place.quoted}`);
      await this.session.query(
        `CREATE TABLE IF NOT EXISTS ${tableOf(place, 'migrations')} (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now(), applied_by text NOT NULL)`,
      );
      const version = await this.version();
      if (version < 1) await this.migrateTo1();
      if (version === 1) await this.refuseWhileOlderRunsHold();
      if (version < 2) await this.migrateTo2(version);
    });
  }

  private check(version: number): void {
    if (version > SCHEMA_VERSION) {
      throw new OrgformError(
        'STATE_INVALID',
        `The state at ${this.session.place.location} has schema version ${version}; this orgform knows version ${SCHEMA_VERSION} (a newer orgform has used it). Upgrade orgform; nothing was changed.`,
      );
    }
  }

  private async migrateTo1(): Promise<void> {
    const place = this.session.place;
    await this.session.query(
      `CREATE TABLE ${tableOf(place, 'states')} (
         id serial UNIQUE,
         name text PRIMARY KEY,
         lock_id text,
         lock_info jsonb,
         lock_pid integer,
         locked_at timestamptz
       )`,
    );
    await this.session.query(
      `CREATE TABLE ${tableOf(place, 'journal')} (
         state text NOT NULL,
         service text NOT NULL,
         key text NOT NULL,
         kind text NOT NULL,
         organisation text NOT NULL,
         outcome text NOT NULL,
         at timestamptz NOT NULL,
         run text,
         recorded_at timestamptz NOT NULL DEFAULT now(),
         PRIMARY KEY (state, service, key)
       )`,
    );
    await this.session.query(`INSERT INTO ${tableOf(place, 'migrations')} (version, applied_by) VALUES (1, 'orgform')`);
  }

  /**
   * An apply of an older orgform holds its state's advisory lock while it writes rows without a
   * target: the schema is not changed under it. (Readers also take rows without a target.)
   */
  private async refuseWhileOlderRunsHold(): Promise<void> {
    const place = this.session.place;
    const { rows } = await this.session.query<{ pid: number; name: string | null }>(
      `SELECT l.pid, s.name FROM pg_locks l LEFT JOIN ${tableOf(place, 'states')} s ON s.id = l.objid::bigint
        WHERE l.locktype = 'advisory' AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
          AND l.classid::bigint = $1 AND l.objsubid = 2 AND l.objid::bigint <> $2 AND l.granted
        LIMIT 1`,
      [place.klass >>> 0, MIGRATION_OBJECT],
    );
    const held = rows[0];
    if (held === undefined) return;
    throw new OrgformError(
      'STATE_LOCKED',
      `The state schema at ${place.location} is at version 1, and an older orgform (database backend pid ${held.pid}) holds the state ${held.name ?? '(unknown)'}: this orgform moves the schema to version ${SCHEMA_VERSION} only when no older run holds a state. Wait for it to finish, then run again; nothing was changed.`,
    );
  }

  private async migrateTo2(from: number): Promise<void> {
    const place = this.session.place;
    const journal = tableOf(place, 'journal');
    try {
      await this.session.query(`ALTER TABLE ${journal} ADD COLUMN target text`);
      await this.session.query(`SET LOCAL statement_timeout = ${MIGRATION_TIMEOUT_MS}`);
      if (from === 1) await this.session.queryLong(`UPDATE ${journal} SET target = ${targetOfKey()}`, MIGRATION_TIMEOUT_MS);
      await this.session.queryLong(`CREATE INDEX journal_state_target ON ${journal} (state, target)`, MIGRATION_TIMEOUT_MS);
      await this.session.query(
        `CREATE TABLE ${tableOf(place, 'holders')} (
           lock_id text PRIMARY KEY,
           state text NOT NULL,
           shard_index integer,
           shard_count integer,
           info jsonb NOT NULL,
           backend_pid integer NOT NULL,
           locked_at timestamptz NOT NULL DEFAULT now()
         )`,
      );
      await this.session.query(`CREATE INDEX holders_state ON ${tableOf(place, 'holders')} (state)`);
      await this.session.query(`INSERT INTO ${tableOf(place, 'migrations')} (version, applied_by) VALUES (2, 'orgform')`);
    } catch (err) {
      if (from === 1 && (err as { code?: string }).code === '42501') throw this.notOwner(err);
      throw err;
    }
  }

  private notOwner(err: unknown): OrgformError {
    return new OrgformError(
      'STATE_UNAVAILABLE',
      `The state schema at ${this.session.place.location} is at version 1, and moving it to version ${SCHEMA_VERSION} needs its owner (${this.session.describe(err)}). Run one orgform apply as the role that created the schema, then grant this role what docs/state.md lists; nothing was changed.`,
      { cause: err },
    );
  }
}
