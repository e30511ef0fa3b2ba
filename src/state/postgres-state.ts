/**
 * The state in PostgreSQL (`postgres://…?state=NAME&schema=orgform`), through `pg`, loaded only
 * when such a URL is used.
 *
 * One schema holds a `journal` table of entries keyed by (state name, service, change key), a
 * `states` table with one row per state name (its lock's holder, so that a refusal can name it),
 * and `migrations`, the schema's version. The schema is created by the first apply that needs it,
 * under a transaction-level advisory lock so that two first runs create it once; a plan only reads,
 * and reads a missing schema as an empty journal.
 *
 * An apply holds a session-level advisory lock per state name (pg_try_advisory_lock, so a second
 * apply is refused at once, naming the holder) on the one connection it also writes through: while
 * that connection lives, the lock is held, and every insert is made under it. A dropped connection
 * (a network failure, pg_terminate_backend, force-unlock) releases the lock: the apply is told, and
 * halts. Entries go in in batches (batched-journal.ts); inserting one twice changes nothing.
 */
import { randomBytes } from 'node:crypto';
import type { Client, ClientConfig } from 'pg';
import { OrgformError } from '../errors.js';
import { redactSecrets } from '../redact.js';
import { describeSocketError } from '../transport/describe-failure.js';
import { BatchedJournal, holdRemoteState, LockLoss, type PendingEntry } from './batched-journal.js';
import type { JournalData, JournalEntry } from './journal.js';
import type { StateSettings } from './state-settings.js';
import type { StateSpec } from './parse-state-spec.js';
import { lockLostError, stateLockedError, stateUnavailableError, type HeldState, type LockHolder, type LockRequest, type StateBackend } from './state-backend.js';

export const SCHEMA_VERSION = 1;

type PostgresSpec = Extract<StateSpec, { kind: 'postgres' }>;

export interface PostgresStateOptions {
  settings: StateSettings;
  describe(command: string): LockRequest;
  signal?: AbortSignal;
}

/** The advisory lock space of one schema: FNV-1a of its name (another schema's states never contend). */
function lockClass(schema: string): number {
  let hash = 0x811c9dc5;
  for (const char of `orgform:${schema}`) {
    hash ^= char.charCodeAt(0);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash | 0;
}

/** The schema's migrations are made one at a time under (class, 0); a state's lock is (class, its row id ≥ 1). */
const MIGRATION_OBJECT = 0;

function secretsOf(spec: PostgresSpec, pgPassword: string | undefined): string[] {
  const secrets: string[] = [];
  try {
    const url = new URL(spec.connectionString);
    if (url.password !== '') secrets.push(decodeURIComponent(url.password), url.password);
    const inQuery = url.searchParams.get('password');
    if (inQuery) secrets.push(inQuery);
  } catch {
    // parseStateSpec has already checked the URL.
  }
  if (pgPassword) secrets.push(pgPassword);
  return secrets;
}

/** The role orgform connects as, as pg chooses it (the URL's user, else PGUSER, else the login name), quoted for SQL. */
function roleOf(spec: PostgresSpec, pgUser: string | undefined): string {
  let user: string | undefined;
  try {
    user = decodeURIComponent(new URL(spec.connectionString).username) || undefined;
  } catch {
    // parseStateSpec has already checked the URL.
  }
  user ??= pgUser;
  return user === undefined ? 'ROLE' : `"${user.replace(/"/g, '""')}"`;
}

/**
 * What a role that does not own the schema lacks, by what the server refused (its English words;
 * in another language, the whole list). docs/state.md lists the same grants, and a test runs them.
 */
function privilegeHint(message: string, schema: string, role: string): string {
  const name = `"${schema}"`;
  if (/permission denied for database/i.test(message)) {
    return ` (the role may not create the schema: grant it CREATE on the database, or create the schema and its tables by running the first apply as a role that may, then grant this one what docs/state.md lists)`;
  }
  if (/permission denied for schema/i.test(message)) {
    return ` (grant the role the use of the schema: GRANT USAGE ON SCHEMA ${name} TO ${role}; and its tables, see docs/state.md. Creating the tables, as the first apply does, needs CREATE on the schema as well)`;
  }
  if (/permission denied for (table|relation|sequence)/i.test(message)) {
    const grants = [
      `GRANT SELECT ON ${name}.migrations TO ${role}`,
      `GRANT SELECT, INSERT ON ${name}.journal TO ${role}`,
      `GRANT SELECT, INSERT, UPDATE ON ${name}.states TO ${role}`,
      `GRANT USAGE ON SEQUENCE ${name}.states_id_seq TO ${role}`,
    ];
    return ` (grant the role the use of the schema's tables: ${grants.join('; ')})`;
  }
  if (/terminate|signal/i.test(message)) {
    return ` (ending the session that holds the lock needs its role, or pg_signal_backend: GRANT pg_signal_backend TO ${role})`;
  }
  return ` (the role lacks a privilege: a role that does not own the schema needs USAGE on it, SELECT, INSERT and UPDATE on its tables, USAGE on its sequence, and pg_signal_backend for force-unlock; docs/state.md has the statements)`;
}

/** What went wrong, in words, without the password (pg's messages do not carry it; this makes sure). */
function describePgError(err: unknown, secrets: readonly string[], timeoutMs: number, grants: { schema: string; role: string }): string {
  const e = err as { message?: string; code?: string };
  // pg's own words for its client-side deadlines ("timeout expired", "Query read timeout", …) and the server's statement_timeout.
  if (e?.code === '57014' || /timeout expired|connection timeout|query read timeout/i.test(e?.message ?? '')) return `no answer in time (ORGFORM_STATE_TIMEOUT_MS is ${timeoutMs} ms)`;
  const socket = describeSocketError(err, { name: 'the database', address: 'the URL' }, 'never');
  if (socket !== undefined) return socket;
  const message = typeof e?.message === 'string' && e.message !== '' ? e.message : String(err);
  const hints: Record<string, string> = {
    '28P01': ' (check the user and the password: in the URL, PGPASSWORD or ~/.pgpass)',
    '28000': ' (check the user and the password: in the URL, PGPASSWORD or ~/.pgpass)',
    '3D000': ' (create the database first, or name another one in the URL)',
    '42501': privilegeHint(message, grants.schema, grants.role),
    '53100': " (the database server's disk is full: its administrator must free space; nothing more was written)",
    '25006': ' (the database takes no writes: a standby, or default_transaction_read_only; point the URL at the primary)',
  };
  const hint = (e?.code !== undefined && hints[e.code]) || '';
  return redactSecrets(`${message}${e?.code && !message.includes(e.code) ? ` [${e.code}]` : ''}${hint}`, secrets);
}

export function openPostgresState(spec: PostgresSpec, options: PostgresStateOptions): StateBackend {
  const secrets = secretsOf(spec, options.settings.postgres.password);
  const location = spec.location;
  const schema = `"${spec.schema}"`;
  const table = (name: string) => `${schema}.${name}`;
  const klass = lockClass(spec.schema);
  const grants = { schema: spec.schema, role: roleOf(spec, options.settings.postgres.user) };
  const unavailable = (err: unknown) => (err instanceof OrgformError ? err : stateUnavailableError(location, describePgError(err, secrets, options.settings.timeoutMs, grants)));

  async function connect(): Promise<Client> {
    const { default: pg } = await import('pg');
    const config: ClientConfig = {
      connectionString: spec.connectionString,
      connectionTimeoutMillis: options.settings.timeoutMs,
      statement_timeout: options.settings.timeoutMs,
      query_timeout: options.settings.timeoutMs + 1_000,
      application_name: 'orgform',
      keepAlive: true,
    };
    let client: Client;
    try {
      // Reads the files that sslrootcert, sslcert and sslkey name: a missing one fails here.
      client = new pg.Client(config);
    } catch (err) {
      throw unavailable(err);
    }
    // An error on an idle connection is emitted, not thrown: without a listener it would end the process.
    client.on('error', () => undefined);
    try {
      await client.connect();
    } catch (err) {
      await client.end().catch(() => undefined);
      throw unavailable(err);
    }
    return client;
  }

  /** The schema's version, or 0 when it has not been created. */
  async function schemaVersion(client: Client): Promise<number> {
    try {
      const { rows } = await client.query<{ v: number | null }>(`SELECT max(version) AS v FROM ${table('migrations')}`);
      return rows[0]?.v ?? 0;
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (code === '42P01' || code === '3F000') return 0;
      throw err;
    }
  }

  function checkVersion(version: number): void {
    if (version > SCHEMA_VERSION) {
      throw new OrgformError(
        'STATE_INVALID',
        `The state at ${location} has schema version ${version}; this orgform knows version ${SCHEMA_VERSION} (a newer orgform has used it). Upgrade orgform; nothing was changed.`,
      );
    }
  }

  /** Creates the schema if it is missing, once, whoever else is creating it at the same moment. */
  async function ensureSchema(client: Client): Promise<void> {
    if ((await schemaVersion(client)) === SCHEMA_VERSION) return;
    await client.query('BEGIN');
    try {
      await client.query('SELECT pg_advisory_xact_lock($1, $2)', [klass, MIGRATION_OBJECT]);
      const exists = await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [spec.schema]);
      if (exists.rowCount === 0) await client.query(`CREATE SCHEMA ${schema}`);
      await client.query(
        `CREATE TABLE IF NOT EXISTS ${table('migrations')} (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now(), applied_by text NOT NULL)`,
      );
      const version = await schemaVersion(client);
      checkVersion(version);
      if (version < 1) {
        await client.query(
          `CREATE TABLE ${table('states')} (
             id serial UNIQUE,
             name text PRIMARY KEY,
             lock_id text,
             lock_info jsonb,
             lock_pid integer,
             locked_at timestamptz
           )`,
        );
        await client.query(
          `CREATE TABLE ${table('journal')} (
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
        await client.query(`INSERT INTO ${table('migrations')} (version, applied_by) VALUES (1, 'orgform')`);
      }
      await client.query('COMMIT');
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    }
  }

  async function readEntries(client: Client): Promise<JournalData> {
    const data: JournalData = { version: 1, services: {} };
    const version = await schemaVersion(client);
    checkVersion(version);
    if (version === 0) return data;
    const { rows } = await client.query<{ service: string; key: string; kind: JournalEntry['kind']; organisation: string; outcome: JournalEntry['outcome']; at: Date; run: string | null }>(
      `SELECT service, key, kind, organisation, outcome, at, run FROM ${table('journal')} WHERE state = $1 ORDER BY service, key`,
      [spec.name],
    );
    for (const row of rows) {
      const entry: JournalEntry = { kind: row.kind, organisation: row.organisation, outcome: row.outcome, at: row.at.toISOString() };
      if (row.run !== null) entry.run = row.run;
      (data.services[row.service] ??= {})[row.key] = entry;
    }
    return data;
  }

  async function insertBatch(client: Client, batch: readonly PendingEntry[]): Promise<void> {
    const column = <T>(pick: (p: PendingEntry) => T) => batch.map(pick);
    await client.query(
      `INSERT INTO ${table('journal')} (state, service, key, kind, organisation, outcome, at, run)
       SELECT $1, * FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::timestamptz[], $8::text[])
       ON CONFLICT (state, service, key) DO NOTHING`,
      [
        spec.name,
        column((p) => p.serviceKey),
        column((p) => p.key),
        column((p) => p.entry.kind),
        column((p) => p.entry.organisation),
        column((p) => p.entry.outcome),
        column((p) => p.entry.at),
        column((p) => p.entry.run ?? null),
      ],
    );
  }

  /** The state's row (made if missing) and who holds its advisory lock right now, if anyone. */
  async function stateRow(client: Client): Promise<{ id: number; lockId: string | null; info: LockHolder | null; lockPid: number | null; holderPid: number | null } | undefined> {
    const { rows } = await client.query<{ id: number; lock_id: string | null; lock_info: LockHolder | null; lock_pid: number | null; holder_pid: number | null }>(
      `SELECT s.id, s.lock_id, s.lock_info, s.lock_pid,
              (SELECT l.pid FROM pg_locks l
                WHERE l.locktype = 'advisory' AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
                  AND l.classid::bigint = $2 AND l.objid::bigint = s.id AND l.objsubid = 2 AND l.granted LIMIT 1) AS holder_pid
         FROM ${table('states')} s WHERE s.name = $1`,
      [spec.name, klass >>> 0],
    );
    const row = rows[0];
    return row && { id: row.id, lockId: row.lock_id, info: row.lock_info, lockPid: row.lock_pid, holderPid: row.holder_pid };
  }

  /** The holder as recorded, when the recorded session is the one holding the lock. */
  function holderOf(row: NonNullable<Awaited<ReturnType<typeof stateRow>>>): LockHolder {
    if (row.info !== null && row.lockPid !== null && row.lockPid === row.holderPid) return row.info;
    return { id: row.lockId ?? '(not yet recorded)', who: `a database session (backend pid ${row.holderPid ?? '?'}) that has not said who it is yet` };
  }

  return {
    kind: 'postgres',
    location,

    async read() {
      const client = await connect();
      try {
        return await readEntries(client);
      } catch (err) {
        throw unavailable(err);
      } finally {
        await client.end().catch(() => undefined);
      }
    },

    async lock(command: string): Promise<HeldState> {
      const client = await connect();
      let closing = false;
      const loss = new LockLoss();
      const markLost = (why: string) => {
        if (!closing) loss.report(lockLostError(location, why));
      };
      client.on('error', (err) => markLost(`the database connection failed (${describePgError(err, secrets, options.settings.timeoutMs, grants)}), and the lock went with it`));
      client.on('end', () => markLost('the database connection closed, and the lock went with it'));
      try {
        await ensureSchema(client);
        await client.query(`INSERT INTO ${table('states')} (name) VALUES ($1) ON CONFLICT (name) DO NOTHING`, [spec.name]);
        const row = (await stateRow(client))!;
        const taken = await client.query<{ taken: boolean }>('SELECT pg_try_advisory_lock($1, $2) AS taken', [klass, row.id]);
        if (taken.rows[0]?.taken !== true) {
          const now = (await stateRow(client)) ?? row;
          throw stateLockedError(location, holderOf(now), `orgform force-unlock ${now.lockId ?? 'ID'} with the same --state (or ORGFORM_STATE)`);
        }
        const request = options.describe(command);
        const holder: LockHolder = { id: randomBytes(6).toString('hex'), ...request };
        await client.query(`UPDATE ${table('states')} SET lock_id = $2, lock_info = $3, lock_pid = pg_backend_pid(), locked_at = now() WHERE name = $1`, [
          spec.name,
          holder.id,
          JSON.stringify(holder),
        ]);
        const data = await readEntries(client);
        const journal = new BatchedJournal({
          data,
          run: holder.id,
          policy: options.settings.batch,
          write: (batch) => insertBatch(client, batch),
          onFailure: (err, unwritten) => markLost(`writing to the database failed (${describePgError(err, secrets, options.settings.timeoutMs, grants)}); ${unwritten} recorded entr${unwritten === 1 ? 'y is' : 'ies are'} not written, nor any recorded after (the changes in flight)`),
        });
        return holdRemoteState({
          lock: holder,
          data,
          journal,
          loss,
          ...(options.signal === undefined ? {} : { signal: options.signal }),
          async unlock() {
            // A failure here needs no report: closing the connection next lets go of the lock all the same.
            try {
              await client.query(`UPDATE ${table('states')} SET lock_id = NULL, lock_info = NULL, lock_pid = NULL, locked_at = NULL WHERE name = $1 AND lock_id = $2`, [spec.name, holder.id]);
              await client.query('SELECT pg_advisory_unlock($1, $2)', [klass, row.id]);
            } catch {
              // The session's end releases its advisory lock, and a stale holder row is read as no holder.
            }
          },
          async close() {
            closing = true;
            await client.end();
          },
        });
      } catch (err) {
        closing = true;
        await client.end().catch(() => undefined);
        throw unavailable(err);
      }
    },

    async forceUnlock(id: string): Promise<LockHolder> {
      const client = await connect();
      try {
        const row = (await schemaVersion(client)) === 0 ? undefined : await stateRow(client);
        if (row === undefined || (row.lockId === null && row.holderPid === null)) {
          throw new OrgformError('STATE_LOCKED', `There is no lock on the state at ${location}; nothing was changed.`);
        }
        const holder = holderOf(row);
        if (row.lockId !== id) {
          throw new OrgformError('STATE_LOCKED', `The lock on the state at ${location} has ID ${row.lockId ?? '(not yet recorded)'}, not ${id}; it is held by ${describeHolderShort(holder)}. Nothing was changed.`);
        }
        if (row.holderPid !== null) {
          // The lock belongs to a session: ending it is the only way to break it (its apply halts).
          const ended = await terminate(client, row.holderPid);
          if (!ended) {
            throw new OrgformError(
              'STATE_LOCKED',
              `Could not end the database session (backend pid ${row.holderPid}) that holds the lock on ${location}: this user may not. Ask a database administrator to run SELECT pg_terminate_backend(${row.holderPid}).`,
            );
          }
        }
        await client.query(`UPDATE ${table('states')} SET lock_id = NULL, lock_info = NULL, lock_pid = NULL, locked_at = NULL WHERE name = $1 AND lock_id = $2`, [spec.name, id]);
        return holder;
      } catch (err) {
        throw unavailable(err);
      } finally {
        await client.end().catch(() => undefined);
      }
    },
  };
}

function describeHolderShort(holder: LockHolder): string {
  return [holder.who, holder.command && `"${holder.command}"`, holder.startedAt && `since ${holder.startedAt}`].filter(Boolean).join(', ') || 'another session';
}

/** Ends a session and waits (up to 5 s, on PostgreSQL 14 and later) until it is gone, and its locks with it. */
async function terminate(client: Client, pid: number): Promise<boolean> {
  try {
    const { rows } = await client.query<{ ended: boolean }>('SELECT pg_terminate_backend($1, 5000) AS ended', [pid]);
    return rows[0]?.ended === true;
  } catch (err) {
    if ((err as { code?: string }).code !== '42883') throw err;
    const { rows } = await client.query<{ ended: boolean }>('SELECT pg_terminate_backend($1) AS ended', [pid]);
    return rows[0]?.ended === true;
  }
}
