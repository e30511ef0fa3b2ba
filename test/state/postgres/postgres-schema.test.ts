/**
 * The PostgreSQL state's schema moves from version 1 (orgform 0.1: a lock per state name in
 * `states`, no `target` on the journal's rows) to version 2 in place, once no older run holds a
 * state; until then a plan reads version 1 as it is.
 */
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { parseStateSpec } from '../../../src/state/parse-state-spec.js';
import { placeOf, type PostgresSpec } from '../../../src/state/postgres/postgres-session.js';
import { createTestDatabase, query } from '../../support/postgres.js';
import { rejection } from '../../support/rejection.js';
import { interest, keyOf, openPostgres, request, SERVICE, targetOf, withState } from './postgres-fixtures.js';

/** The schema orgform 0.1 made, with two entries and a state row, as it left them. */
async function versionOneSchema(url: string): Promise<void> {
  await query(url, 'CREATE SCHEMA orgform');
  await query(url, 'CREATE TABLE orgform.migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now(), applied_by text NOT NULL)');
  await query(url, 'CREATE TABLE orgform.states (id serial UNIQUE, name text PRIMARY KEY, lock_id text, lock_info jsonb, lock_pid integer, locked_at timestamptz)');
  await query(
    url,
    `CREATE TABLE orgform.journal (state text NOT NULL, service text NOT NULL, key text NOT NULL, kind text NOT NULL, organisation text NOT NULL,
       outcome text NOT NULL, at timestamptz NOT NULL, run text, recorded_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (state, service, key))`,
  );
  await query(url, "INSERT INTO orgform.migrations (version, applied_by) VALUES (1, 'orgform')");
  await query(url, "INSERT INTO orgform.states (name) VALUES ('prod')");
  await query(
    url,
    `INSERT INTO orgform.journal (state, service, key, kind, organisation, outcome, at, run) VALUES
       ('prod', $1, $2, 'remove-channel', 'org-1', 'applied', '2025-01-02T03:04:05Z', 'aaaaaaaaaaaa'),
       ('prod', $1, 'revoke-invitation org_2 inv%20two', 'revoke-invitation', 'org-2', 'already-done', '2025-01-02T03:04:05Z', NULL)`,
    [SERVICE, keyOf(1)],
  );
}

/** An apply of orgform 0.1 holding the state `prod`: its advisory lock and its row, on a connection of its own. */
async function olderApply(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const { klass } = placeOf(parseStateSpec(withState(url, 'prod'), '/') as PostgresSpec);
  await client.query("SELECT pg_advisory_lock($1, (SELECT id FROM orgform.states WHERE name = 'prod'))", [klass]);
  const info = { id: 'bbbbbbbbbbbb', pid: 99, host: 'old-runner', who: 'ci@old-runner', command: 'orgform apply', startedAt: '2025-01-01T00:00:00.000Z' };
  await client.query("UPDATE orgform.states SET lock_id = $1, lock_info = $2, lock_pid = pg_backend_pid(), locked_at = now() WHERE name = 'prod'", [info.id, JSON.stringify(info)]);
  client.on('error', () => undefined);
  return client;
}

const versions = async (url: string) => (await query<{ version: number }>(url, 'SELECT version FROM orgform.migrations ORDER BY version')).map((r) => r.version);

describe('the PostgreSQL state’s schema', () => {
  it('is read at version 1 by a plan without changing it, its targets worked out from the keys', async () => {
    const url = await createTestDatabase('pg_v1_read');
    await versionOneSchema(url);
    const index = await openPostgres(withState(url, 'prod')).readIndex(interest(targetOf(1), 'revoke-invitation inv%20two'));
    expect(index.has(SERVICE, keyOf(1))).toBe(true);
    expect(index.has(SERVICE, 'revoke-invitation org_2 inv%20two')).toBe(true);
    expect(await versions(url)).toEqual([1]);
  });

  it('moves from version 1 to 2 in place at the first apply: every entry kept, its target filled in, and readable by target', async () => {
    const url = await createTestDatabase('pg_v1_migrate');
    await versionOneSchema(url);
    const state = openPostgres(withState(url, 'prod'));
    const held = await state.lock(request('orgform apply'), interest(targetOf(1)));
    expect(held.journal.has(SERVICE, keyOf(1))).toBe(true);
    await held.release();
    expect(await versions(url)).toEqual([1, 2]);
    expect(await query(url, 'SELECT key, target, run FROM orgform.journal ORDER BY key')).toEqual([
      { key: keyOf(1), target: targetOf(1), run: 'aaaaaaaaaaaa' },
      { key: 'revoke-invitation org_2 inv%20two', target: 'revoke-invitation inv%20two', run: null },
    ]);
    const index = await state.readIndex(interest('revoke-invitation inv%20two'));
    expect([index.has(SERVICE, keyOf(1)), index.has(SERVICE, 'revoke-invitation org_2 inv%20two')]).toEqual([false, true]);
  });

  it('reads rows that an older orgform inserted without a target after the move', async () => {
    const url = await createTestDatabase('pg_v1_late_row');
    await versionOneSchema(url);
    await (await openPostgres(withState(url, 'prod')).lock(request('orgform apply'), interest())).release();
    await query(url, "INSERT INTO orgform.journal (state, service, key, kind, organisation, outcome, at) VALUES ('prod', $1, $2, 'remove-channel', 'org-3', 'applied', now())", [SERVICE, keyOf(3)]);
    expect((await openPostgres(withState(url, 'prod')).readIndex(interest(targetOf(3)))).has(SERVICE, keyOf(3))).toBe(true);
  });

  it('is not moved while an older orgform holds a state: the apply is refused naming it, and force-unlock breaks that lock by its ID', async () => {
    const url = await createTestDatabase('pg_v1_busy');
    await versionOneSchema(url);
    const older = await olderApply(url);
    const state = openPostgres(withState(url, 'prod'));
    const err = await rejection(state.lock(request('orgform apply'), interest()));
    expect(err.code).toBe('STATE_LOCKED');
    expect(err.message).toMatch(/is at version 1, and an older orgform \(database backend pid \d+\) holds the state prod/);
    expect(await versions(url)).toEqual([1]);

    const holder = await state.forceUnlock('bbbbbbbbbbbb');
    expect(holder).toMatchObject({ id: 'bbbbbbbbbbbb', host: 'old-runner' });
    await older.end().catch(() => undefined);
    await (await state.lock(request('orgform apply'), interest())).release();
    expect(await versions(url)).toEqual([1, 2]);
  });
});
