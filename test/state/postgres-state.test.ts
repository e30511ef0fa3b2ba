/**
 * The PostgreSQL state against a real server (test/support/postgres-global-setup.ts starts one per
 * run; each test gets a database of its own). No mock of the database anywhere.
 */
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import type { OrgformError } from '../../src/errors.js';
import type { JournalEntry } from '../../src/state/journal-entry.js';
import { openLegacyState as openState } from '../../src/state/open-state.js';
import { DEFAULT_STATE_SETTINGS, type StateSettings } from '../../src/state/state-settings.js';
import type { LegacyStateBackend as StateBackend } from '../../src/state/legacy-backend.js';
import { createTestDatabase, query } from '../support/postgres.js';
import { rejection } from '../support/rejection.js';

const SERVICE = 'https://orgs.example.test';
const entry = (organisation: string): JournalEntry => ({ kind: 'remove-channel', organisation, outcome: 'applied', at: '2025-01-02T03:04:05.678Z' });

function open(url: string, settings: StateSettings = DEFAULT_STATE_SETTINGS): Promise<StateBackend> {
  return openState({ state: url, defaultPath: '/nonexistent/state.json', cwd: '/', settings, lockEnvironment: { pid: 4242, host: 'runner-1', now: () => Date.parse('2025-03-04T05:06:07.000Z'), isAlive: () => true } });
}

const withState = (url: string, name: string) => `${url}?state=${encodeURIComponent(name)}`;

/** Waits for a condition that an asynchronous write will make true (never a timed assertion). */
async function until(condition: () => boolean | Promise<boolean>): Promise<void> {
  for (let i = 0; i < 500 && !(await condition()); i++) await new Promise((r) => setTimeout(r, 10));
}

describe('the PostgreSQL state', () => {
  it('reads a database without orgform’s schema as an empty journal, and creates nothing', async () => {
    const url = await createTestDatabase('pg_empty');
    const state = await open(withState(url, 'prod'));
    expect(await state.read()).toEqual({ version: 1, services: {} });
    expect(await query(url, "SELECT 1 FROM pg_namespace WHERE nspname = 'orgform'")).toEqual([]);
  });

  it('creates the schema once when two first applies start at the same moment, and records its version', async () => {
    const url = await createTestDatabase('pg_schema');
    const [a, b] = await Promise.all([open(withState(url, 'one')), open(withState(url, 'two'))]);
    const held = await Promise.all([a.lock('orgform apply'), b.lock('orgform apply')]);
    expect(await query(url, 'SELECT version, applied_by FROM orgform.migrations')).toEqual([{ version: 1, applied_by: 'orgform' }]);
    expect((await query(url, 'SELECT name FROM orgform.states ORDER BY name')).map((r) => r.name)).toEqual(['one', 'two']);
    await Promise.all(held.map((h) => h.release()));
  });

  it('writes entries in batches: a full batch at once, the rest after the delay or on flush, each entry once', async () => {
    const url = await createTestDatabase('pg_batch');
    const state = await open(withState(url, 'prod'), { ...DEFAULT_STATE_SETTINGS, batch: { maxEntries: 3, maxDelayMs: 60_000 } });
    const held = await state.lock('orgform apply');
    const journal = held.journal as unknown as { written: { batches: number; entries: number } } & typeof held.journal;
    for (let i = 1; i <= 7; i++) await held.journal.record(SERVICE, `remove-channel org_${i} chn_${i}`, entry(`org-${i}`));
    await until(() => journal.written.batches === 2);
    // Two full batches are in; the seventh waits for its batch to fill, its delay or the end.
    expect(await query(url, 'SELECT count(*)::int AS n FROM orgform.journal')).toEqual([{ n: 6 }]);
    expect(held.journal.has(SERVICE, 'remove-channel org_7 chn_7')).toBe(true);
    await held.journal.flush();
    expect(journal.written).toEqual({ batches: 3, entries: 7 });
    // Recorded again (a retried run): nothing changes.
    await held.journal.record(SERVICE, 'remove-channel org_1 chn_1', { ...entry('org-1'), outcome: 'already-done' });
    await held.release();
    const rows = await query(url, "SELECT key, kind, organisation, outcome, run FROM orgform.journal WHERE key = 'remove-channel org_1 chn_1'");
    expect(rows).toEqual([{ key: 'remove-channel org_1 chn_1', kind: 'remove-channel', organisation: 'org-1', outcome: 'applied', run: held.lock.id }]);
    const again = await (await open(withState(url, 'prod'))).read();
    expect(Object.keys(again.services[SERVICE]!)).toHaveLength(7);
    expect(again.services[SERVICE]!['remove-channel org_3 chn_3']).toEqual({ ...entry('org-3'), run: held.lock.id });
  });

  it('writes a batch that has not filled once its delay has passed', async () => {
    const url = await createTestDatabase('pg_delay');
    const state = await open(withState(url, 'prod'), { ...DEFAULT_STATE_SETTINGS, batch: { maxEntries: 500, maxDelayMs: 20 } });
    const held = await state.lock('orgform apply');
    await held.journal.record(SERVICE, 'remove-channel org_1 chn_1', entry('org-1'));
    await until(async () => (await query(url, 'SELECT count(*)::int AS n FROM orgform.journal'))[0]!.n === 1);
    expect(await query(url, 'SELECT count(*)::int AS n FROM orgform.journal')).toEqual([{ n: 1 }]);
    await held.release();
  });

  it('refuses a second apply on the same state name at once, naming the holder from its row', async () => {
    const url = await createTestDatabase('pg_lock');
    const first = await (await open(withState(url, 'prod'))).lock('orgform apply plan.json');
    const err = await rejection((await open(withState(url, 'prod'))).lock('orgform apply'));
    expect(err.code).toBe('STATE_LOCKED');
    expect(err.message).toContain('is locked by pid 4242 on runner-1');
    expect(err.message).toContain('running "orgform apply plan.json" since 2025-03-04T05:06:07.000Z');
    expect(err.message).toContain(`(lock ID ${first.lock.id})`);
    expect(err.message).toContain(`orgform force-unlock ${first.lock.id}`);
    await first.release();
    const after = await (await open(withState(url, 'prod'))).lock('orgform apply');
    await after.release();
  });

  it('lets states of other names be locked at the same time, each with only its own entries', async () => {
    const url = await createTestDatabase('pg_shards');
    const names = ['shard-1', 'shard-2', 'shard-3', 'shard-4'];
    const held = await Promise.all(names.map(async (name) => (await open(withState(url, name))).lock('orgform apply')));
    await Promise.all(held.map((h, i) => h.journal.record(SERVICE, `remove-channel org_${i} chn_${i}`, entry(`org-${i}`))));
    await Promise.all(held.map((h) => h.release()));
    for (const [i, name] of names.entries()) {
      expect(Object.keys((await (await open(withState(url, name))).read()).services[SERVICE]!)).toEqual([`remove-channel org_${i} chn_${i}`]);
    }
  });

  it('tells the holder that the lock is lost when its connection is ended, and writes nothing after', async () => {
    const url = await createTestDatabase('pg_lost');
    const held = await (await open(withState(url, 'prod'))).lock('orgform apply');
    const lost = new Promise<OrgformError>((resolve) => held.onLost(resolve));
    const [{ lock_pid }] = (await query<{ lock_pid: number }>(url, "SELECT lock_pid FROM orgform.states WHERE name = 'prod'")) as [{ lock_pid: number }];
    await query(url, 'SELECT pg_terminate_backend($1, 5000)', [lock_pid]);
    const error = await lost;
    expect(error.code).toBe('STATE_LOCK_LOST');
    expect(error.message).toContain('Lost the lock on the state at');
    expect(error.message).toContain('the next plan shows them again');
    await held.journal.record(SERVICE, 'remove-channel org_1 chn_1', entry('org-1'));
    await held.journal.flush();
    await held.release();
    expect(await query(url, 'SELECT count(*)::int AS n FROM orgform.journal')).toEqual([{ n: 0 }]);
    // The lock went with the session: the next apply takes it.
    await (await (await open(withState(url, 'prod'))).lock('orgform apply')).release();
  });

  it('breaks a lock with force-unlock only when the ID matches, ending the holder’s session', async () => {
    const url = await createTestDatabase('pg_force');
    const held = await (await open(withState(url, 'prod'))).lock('orgform apply');
    const lost = new Promise<OrgformError>((resolve) => held.onLost(resolve));
    const wrong = await rejection((await open(withState(url, 'prod'))).forceUnlock('0123456789ab'));
    expect(wrong.message).toContain(`has ID ${held.lock.id}, not 0123456789ab`);
    const holder = await (await open(withState(url, 'prod'))).forceUnlock(held.lock.id);
    expect(holder).toMatchObject({ id: held.lock.id, pid: 4242, host: 'runner-1' });
    expect((await lost).code).toBe('STATE_LOCK_LOST');
    await held.release();
    expect(await query(url, "SELECT lock_id FROM orgform.states WHERE name = 'prod'")).toEqual([{ lock_id: null }]);
    const none = await rejection((await open(withState(url, 'prod'))).forceUnlock(held.lock.id));
    expect(none.message).toContain('There is no lock on the state');
  });

  it('refuses a schema that a newer orgform made', async () => {
    const url = await createTestDatabase('pg_newer');
    await (await (await open(url)).lock('orgform apply')).release();
    await query(url, "INSERT INTO orgform.migrations (version, applied_by) VALUES (2, 'orgform 9')");
    const err = await rejection((await open(url)).read());
    expect(err.code).toBe('STATE_INVALID');
    expect(err.message).toContain('schema version 2; this orgform knows version 1');
  });

  it('keeps states of other schemas apart, locks included', async () => {
    const url = await createTestDatabase('pg_schemas');
    const a = await (await open(`${url}?state=prod&schema=team_a`)).lock('orgform apply');
    const b = await (await open(`${url}?state=prod&schema=team_b`)).lock('orgform apply');
    await a.journal.record(SERVICE, 'k1', entry('org-1'));
    await Promise.all([a.release(), b.release()]);
    expect((await (await open(`${url}?state=prod&schema=team_b`)).read()).services).toEqual({});
    expect(Object.keys((await (await open(`${url}?state=prod&schema=team_a`)).read()).services[SERVICE]!)).toEqual(['k1']);
  });

  it('fails clearly, as the state being unusable, when a TLS file the URL names is missing', async () => {
    const err = await rejection((await open('postgres://ada:s3cret-pass@127.0.0.1:5432/ops?sslmode=verify-full&sslrootcert=/nonexistent/ca.pem')).read());
    expect(err.code).toBe('STATE_UNAVAILABLE');
    expect(err.message).toContain('/nonexistent/ca.pem');
    expect(err.message).not.toContain('s3cret-pass');
  });

  it('fails clearly when the database cannot be reached, without the password', async () => {
    const state = await open('postgres://ada:s3cret-pass@127.0.0.1:1/ops?state=prod', { ...DEFAULT_STATE_SETTINGS, timeoutMs: 2_000 });
    expect(state.location).toBe('postgres://[REDACTED]@127.0.0.1:1/ops?state=prod');
    for (const attempt of [() => state.read(), () => state.lock('orgform apply')]) {
      const err = await rejection(attempt());
      expect(err.code).toBe('STATE_UNAVAILABLE');
      expect(err.message).toContain('Cannot use the state at postgres://[REDACTED]@127.0.0.1:1/ops?state=prod');
      expect(err.message).toContain('connection refused');
      expect(err.message).not.toContain('s3cret-pass');
    }
  });

  it('says that a server which takes the connection but never answers gave no answer in time (ORGFORM_STATE_TIMEOUT_MS)', async () => {
    const silent = createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const port = (silent.address() as { port: number }).port;
      const state = await open(`postgres://ada:s3cret-pass@127.0.0.1:${port}/ops?state=prod`, { ...DEFAULT_STATE_SETTINGS, timeoutMs: 300 });
      for (const attempt of [() => state.read(), () => state.lock('orgform apply'), () => state.forceUnlock('0123456789ab')]) {
        const err = await rejection(attempt());
        expect(err.code).toBe('STATE_UNAVAILABLE');
        expect(err.message).toContain('no answer in time (ORGFORM_STATE_TIMEOUT_MS is 300 ms)');
      }
    } finally {
      silent.close();
    }
  });
});

describe('a role that does not own the schema', () => {
  /** The grants docs/state.md lists (its role orgform_app replaced by `role`), one statement each. */
  async function documentedGrants(role: string): Promise<string[]> {
    const doc = await readFile(new URL('../../docs/state.md', import.meta.url), 'utf8');
    const block = /\*\*A role that does not own the schema\*\*[\s\S]*?```sql\n([\s\S]*?)```/.exec(doc)?.[1];
    if (block === undefined) throw new Error('docs/state.md lists no grants for a role that does not own the schema');
    return block
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line.startsWith('GRANT '))
      .map((line) => line.replaceAll('orgform_app', role));
  }

  /** A login role of its own (roles are the server's, not the database's), and the URL that connects as it. */
  async function createRole(url: string, grants: string[] = []): Promise<{ role: string; url: string }> {
    const role = `orgform_role_${randomBytes(4).toString('hex')}`;
    await query(url, `CREATE ROLE ${role} LOGIN`);
    for (const grant of grants) await query(url, grant.replaceAll('ROLE', role));
    const as = new URL(url);
    as.username = role;
    return { role, url: as.toString() };
  }

  /** The schema and its tables, made as the owner (the postgres superuser) by a first apply. */
  async function databaseWithSchema(prefix: string): Promise<string> {
    const url = await createTestDatabase(prefix);
    await (await (await open(withState(url, 'prod'))).lock('orgform apply')).release();
    return url;
  }

  it('with CREATE on the database but no USAGE on the schema, is told to grant USAGE on the schema, not CREATE on the database', async () => {
    const url = await databaseWithSchema('pg_no_usage');
    const database = new URL(url).pathname.slice(1);
    const app = await createRole(url, [`GRANT CREATE ON DATABASE "${database}" TO ROLE`]);
    const err = await rejection((await open(withState(app.url, 'prod'))).lock('orgform apply'));
    expect(err.code).toBe('STATE_UNAVAILABLE');
    expect(err.message).toContain('permission denied for schema orgform');
    expect(err.message).toContain(`GRANT USAGE ON SCHEMA "orgform" TO "${app.role}"`);
    expect(err.message).not.toContain('CREATE on the database');
  });

  it('with USAGE on the schema only, is told the grants its tables need', async () => {
    const url = await databaseWithSchema('pg_no_tables');
    const app = await createRole(url, ['GRANT USAGE ON SCHEMA orgform TO ROLE']);
    const err = await rejection((await open(withState(app.url, 'prod'))).read());
    expect(err.message).toContain('permission denied for table');
    expect(err.message).toContain(`GRANT SELECT, INSERT ON "orgform".journal TO "${app.role}"`);
    expect(err.message).toContain(`GRANT USAGE ON SEQUENCE "orgform".states_id_seq TO "${app.role}"`);
  });

  it('with the grants docs/state.md lists, plans, applies, and breaks the lock of another role’s session', async () => {
    const url = await databaseWithSchema('pg_grants');
    const grants = await documentedGrants('ROLE');
    expect(grants.some((g) => g.includes('pg_signal_backend'))).toBe(true);
    const app = await createRole(url, grants);
    const other = await createRole(url, grants.filter((g) => !g.includes('pg_signal_backend')));

    const held = await (await open(withState(app.url, 'prod'))).lock('orgform apply');
    await held.journal.record(SERVICE, 'remove-channel org_1 chn_1', entry('org-1'));
    await held.release();
    expect(Object.keys((await (await open(withState(app.url, 'prod'))).read()).services[SERVICE]!)).toEqual(['remove-channel org_1 chn_1']);

    const theirs = await (await open(withState(other.url, 'prod'))).lock('orgform apply');
    const lost = new Promise<OrgformError>((resolve) => theirs.onLost(resolve));
    expect((await (await open(withState(app.url, 'prod'))).forceUnlock(theirs.lock.id)).id).toBe(theirs.lock.id);
    expect((await lost).code).toBe('STATE_LOCK_LOST');
    await theirs.release();
  });

  it('without pg_signal_backend, is told that force-unlock of another role’s session needs it', async () => {
    const url = await databaseWithSchema('pg_no_signal');
    const grants = (await documentedGrants('ROLE')).filter((g) => !g.includes('pg_signal_backend'));
    const app = await createRole(url, grants);
    const other = await createRole(url, grants);
    const theirs = await (await open(withState(other.url, 'prod'))).lock('orgform apply');
    try {
      const err = await rejection((await open(withState(app.url, 'prod'))).forceUnlock(theirs.lock.id));
      expect(err.message).toContain(`GRANT pg_signal_backend TO "${app.role}"`);
    } finally {
      await theirs.release();
    }
  });
});
