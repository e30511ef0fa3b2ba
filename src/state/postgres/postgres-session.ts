/**
 * One connection to the PostgreSQL that holds a state, and what is known about where the state is
 * in it (the schema, the state's name, the advisory lock class). A session is opened for one use
 * (a read, a lock held for a run, a force-unlock) and closed by whoever opened it.
 *
 * An advisory lock belongs to its session: when the connection fails or ends, every lock it held
 * is gone. `onLost` tells the holder so, once, unless the session was closed on purpose.
 */
import type { Client, ClientConfig, QueryConfig, QueryResult, QueryResultRow } from 'pg';
import { OrgformError } from '../../errors.js';
import { redactSecrets } from '../../redact.js';
import { describeSocketError } from '../../transport/describe-failure.js';
import type { StateSpec } from '../parse-state-spec.js';
import { stateUnavailableError } from '../state-backend.js';
import type { StateSettings } from '../state-settings.js';

export type PostgresSpec = Extract<StateSpec, { kind: 'postgres' }>;

/** Where a state is inside its database, and how to name things there. */
export interface PostgresPlace {
  location: string;
  /** The state's name (`?state=`). */
  name: string;
  /** The schema's own name, and quoted for SQL. */
  schema: string;
  quoted: string;
  /** The advisory lock class of the schema: another schema's states never contend. */
  klass: number;
}

export function placeOf(spec: PostgresSpec): PostgresPlace {
  return { location: spec.location, name: spec.name, schema: spec.schema, quoted: `"${spec.schema}"`, klass: lockClass(spec.schema) };
}

/** A table of the state's schema, quoted for SQL. */
export function tableOf(place: PostgresPlace, name: 'migrations' | 'states' | 'journal' | 'holders'): string {
  return `${place.quoted}.${name}`;
}

/** FNV-1a of the schema's name, as a signed 32-bit integer (the first key of a two-key advisory lock). */
function lockClass(schema: string): number {
  let hash = 0x811c9dc5;
  for (const char of `orgform:${schema}`) {
    hash ^= char.charCodeAt(0);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash | 0;
}

export class PostgresSession {
  private closing = false;
  /** Statements sent and not answered yet. */
  private running = 0;
  /** When the statements under way were last heard of: the first sent, or the last answered (performance.now()). */
  private heardAt = 0;
  private lostListener: ((why: string) => void) | undefined;

  private constructor(
    private readonly client: Client,
    readonly place: PostgresPlace,
    private readonly errors: PgErrorWords,
  ) {
    // An error on an idle connection is emitted, not thrown: without a listener it would end the process.
    client.on('error', (err) => this.lose(`the database connection failed (${this.errors.describe(err)}), and the lock went with it`));
    client.on('end', () => this.lose('the database connection closed, and the lock went with it'));
  }

  static async open(spec: PostgresSpec, settings: StateSettings): Promise<PostgresSession> {
    const errors = new PgErrorWords(spec, settings);
    const { default: pg } = await import('pg');
    const config: ClientConfig = {
      connectionString: spec.connectionString,
      connectionTimeoutMillis: settings.timeoutMs,
      statement_timeout: settings.timeoutMs,
      query_timeout: settings.timeoutMs + 1_000,
      application_name: 'orgform',
      keepAlive: true,
    };
    let client: Client;
    try {
      // Reads the files that sslrootcert, sslcert and sslkey name: a missing one fails here.
      client = new pg.Client(config);
    } catch (err) {
      throw errors.unavailable(err);
    }
    const session = new PostgresSession(client, placeOf(spec), errors);
    try {
      await client.connect();
    } catch (err) {
      await session.close();
      throw errors.unavailable(err);
    }
    return session;
  }

  query<T extends QueryResultRow = QueryResultRow>(text: string, values?: unknown[]): Promise<QueryResult<T>> {
    return this.counted(this.client.query<T>(text, values));
  }

  /**
   * A statement that may take long (the one-time move of a large journal to a new schema version):
   * it gets `timeoutMs` rather than ORGFORM_STATE_TIMEOUT_MS, and the transaction's statement_timeout
   * must be raised to match.
   */
  queryLong(text: string, timeoutMs: number): Promise<QueryResult> {
    // pg takes a query's own read timeout, though its types do not say so.
    return this.counted(this.client.query({ text, query_timeout: timeoutMs } as QueryConfig));
  }

  /**
   * Whether the server still answers for this session, within `timeoutMs` (a held session's
   * check): false when it does not hold the session any more. A statement under way holds the
   * connection (a probe queued behind it would wait for it): one heard of within `timeoutMs`
   * answers for the connection; past that, `elsewhere` asks through a connection of its own, for a
   * server that ended the session may let another run take its lock while this connection waits.
   */
  async probe(timeoutMs: number, elsewhere: () => Promise<boolean>): Promise<boolean> {
    if (this.running === 0) {
      await this.counted(this.client.query({ text: 'SELECT 1', query_timeout: timeoutMs } as QueryConfig));
      return true;
    }
    return performance.now() - this.heardAt < timeoutMs || elsewhere();
  }

  /** Runs `work` in one transaction: committed when it returns, rolled back when it throws. */
  async transaction<T>(work: () => Promise<T>, begin = 'BEGIN'): Promise<T> {
    await this.query(begin);
    try {
      const result = await work();
      await this.query('COMMIT');
      return result;
    } catch (err) {
      await this.query('ROLLBACK').catch(() => undefined);
      throw err;
    }
  }

  /** Told once when the connection fails or ends while the session is still wanted (its locks are gone). */
  onLost(listener: (why: string) => void): void {
    this.lostListener = listener;
  }

  describe(err: unknown): string {
    return this.errors.describe(err);
  }

  /** A database failure as the state being unusable (an orgform error passes as it is). */
  unavailable(err: unknown): OrgformError {
    return this.errors.unavailable(err);
  }

  /** Gives the connection up (it stopped answering): told as lost, and ended. */
  async abandon(why: string): Promise<void> {
    this.lose(why);
    await this.client.end().catch(() => undefined);
  }

  async close(): Promise<void> {
    this.closing = true;
    await this.client.end().catch(() => undefined);
  }

  private async counted<T>(query: Promise<T>): Promise<T> {
    if (this.running === 0) this.heardAt = performance.now();
    this.running += 1;
    try {
      return await query;
    } finally {
      this.running -= 1;
      this.heardAt = performance.now();
    }
  }

  private lose(why: string): void {
    if (this.closing) return;
    this.closing = true;
    this.lostListener?.(why);
  }
}

/** What went wrong with the database, in words, without the password, and with what to grant when a privilege is missing. */
export class PgErrorWords {
  private readonly secrets: string[];
  private readonly role: string;

  constructor(
    private readonly spec: PostgresSpec,
    private readonly settings: StateSettings,
  ) {
    this.secrets = secretsOf(spec, settings.postgres.password);
    this.role = roleOf(spec, settings.postgres.user);
  }

  unavailable(err: unknown): OrgformError {
    return err instanceof OrgformError ? err : stateUnavailableError(this.spec.location, this.describe(err));
  }

  describe(err: unknown): string {
    const e = err as { message?: string; code?: string };
    // pg's own words for its client-side deadlines ("timeout expired", "Query read timeout", …) and the server's statement_timeout.
    if (e?.code === '57014' || /timeout expired|connection timeout|query read timeout/i.test(e?.message ?? '')) {
      return `no answer in time (ORGFORM_STATE_TIMEOUT_MS is ${this.settings.timeoutMs} ms)`;
    }
    const socket = describeSocketError(err, { name: 'the database', address: 'the URL' }, 'never');
    if (socket !== undefined) return socket;
    const message = typeof e?.message === 'string' && e.message !== '' ? e.message : String(err);
    const hint = (e?.code !== undefined && this.hint(e.code, message)) || '';
    return redactSecrets(`${message}${e?.code && !message.includes(e.code) ? ` [${e.code}]` : ''}${hint}`, this.secrets);
  }

  private hint(code: string, message: string): string | undefined {
    const hints: Record<string, string> = {
      '28P01': ' (check the user and the password: in the URL, PGPASSWORD or ~/.pgpass)',
      '28000': ' (check the user and the password: in the URL, PGPASSWORD or ~/.pgpass)',
      '3D000': ' (create the database first, or name another one in the URL)',
      '53100': " (the database server's disk is full: its administrator must free space; nothing more was written)",
      '25006': ' (the database takes no writes: a standby, or default_transaction_read_only; point the URL at the primary)',
    };
    return code === '42501' ? privilegeHint(message, this.spec.schema, this.role) : hints[code];
  }
}

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

/** The statements docs/state.md lists for a role that does not own the schema (a test runs that list). */
export function schemaGrants(schema: string, role: string): string[] {
  const name = `"${schema}"`;
  return [
    `GRANT SELECT ON ${name}.migrations TO ${role}`,
    `GRANT SELECT, INSERT ON ${name}.journal TO ${role}`,
    `GRANT SELECT, INSERT, UPDATE ON ${name}.states TO ${role}`,
    `GRANT SELECT, INSERT, DELETE ON ${name}.holders TO ${role}`,
    `GRANT USAGE ON SEQUENCE ${name}.states_id_seq TO ${role}`,
  ];
}

/**
 * What a role that does not own the schema lacks, by what the server refused (its English words;
 * in another language, the whole list).
 */
export function privilegeHint(message: string, schema: string, role: string): string {
  if (/permission denied for database/i.test(message)) {
    return ` (the role may not create the schema: grant it CREATE on the database, or create the schema and its tables by running the first apply as a role that may, then grant this one what docs/state.md lists)`;
  }
  if (/permission denied for schema/i.test(message)) {
    return ` (grant the role the use of the schema: GRANT USAGE ON SCHEMA "${schema}" TO ${role}; and its tables, see docs/state.md. Creating the tables, as the first apply does, needs CREATE on the schema as well)`;
  }
  if (/permission denied for (table|relation|sequence)/i.test(message)) {
    return ` (grant the role the use of the schema's tables: ${schemaGrants(schema, role).join('; ')})`;
  }
  if (/terminate|signal/i.test(message)) {
    return ` (ending the session that holds the lock needs its role, or pg_signal_backend: GRANT pg_signal_backend TO ${role})`;
  }
  return ` (the role lacks a privilege: a role that does not own the schema needs USAGE on it, SELECT, INSERT, UPDATE and DELETE on its tables as docs/state.md lists, USAGE on its sequence, and pg_signal_backend for force-unlock; docs/state.md has the statements)`;
}
