/**
 * The PostgreSQL state used by a role that does not own its schema, with the grants docs/state.md
 * lists (the test reads them from there), and what it is told when one is missing.
 */
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import type { OrgformError } from '../../../src/errors.js';
import { createTestDatabase, query } from '../../support/postgres.js';
import { rejection } from '../../support/rejection.js';
import { entry, interest, keyOf, openPostgres, request, SERVICE, targetOf, withState } from './postgres-fixtures.js';

describe('a role that does not own the schema', () => {
  /** The grants docs/state.md lists (its role orgform_app replaced by `role`), one statement each. */
  async function documentedGrants(role: string): Promise<string[]> {
    const doc = await readFile(new URL('../../../docs/state.md', import.meta.url), 'utf8');
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
    await (await openPostgres(withState(url, 'prod')).lock(request('orgform apply'), interest())).release();
    return url;
  }

  it('with CREATE on the database but no USAGE on the schema, is told to grant USAGE on the schema, not CREATE on the database', async () => {
    const url = await databaseWithSchema('pg_no_usage');
    const database = new URL(url).pathname.slice(1);
    const app = await createRole(url, [`GRANT CREATE ON DATABASE "${database}" TO ROLE`]);
    const err = await rejection(openPostgres(withState(app.url, 'prod')).lock(request('orgform apply'), interest()));
    expect(err.code).toBe('STATE_UNAVAILABLE');
    expect(err.message).toContain('permission denied for schema orgform');
    expect(err.message).toContain(`GRANT USAGE ON SCHEMA "orgform" TO "${app.role}"`);
    expect(err.message).not.toContain('CREATE on the database');
  });

  it('with USAGE on the schema only, is told the grants its tables need', async () => {
    const url = await databaseWithSchema('pg_no_tables');
    const app = await createRole(url, ['GRANT USAGE ON SCHEMA orgform TO ROLE']);
    const err = await rejection(openPostgres(withState(app.url, 'prod')).readIndex(interest('x')));
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

    const held = await openPostgres(withState(app.url, 'prod')).lock(request('orgform apply --shard 1/2', { index: 1, count: 2 }), interest());
    await held.journal.record(SERVICE, keyOf(1), entry('org-1'));
    await held.release();
    expect((await openPostgres(withState(app.url, 'prod')).readIndex(interest(targetOf(1)))).has(SERVICE, keyOf(1))).toBe(true);

    const theirs = await openPostgres(withState(other.url, 'prod')).lock(request('orgform apply'), interest());
    const lost = new Promise<OrgformError>((resolve) => theirs.onLost(resolve));
    expect((await openPostgres(withState(app.url, 'prod')).forceUnlock(theirs.lock.id)).id).toBe(theirs.lock.id);
    expect((await lost).code).toBe('STATE_LOCK_LOST');
    await theirs.release();
  });

  it('without pg_signal_backend, is told that force-unlock of another role’s session needs it', async () => {
    const url = await databaseWithSchema('pg_no_signal');
    const grants = (await documentedGrants('ROLE')).filter((g) => !g.includes('pg_signal_backend'));
    const app = await createRole(url, grants);
    const other = await createRole(url, grants);
    const theirs = await openPostgres(withState(other.url, 'prod')).lock(request('orgform apply'), interest());
    try {
      const err = await rejection(openPostgres(withState(app.url, 'prod')).forceUnlock(theirs.lock.id));
      expect(err.message).toContain(`GRANT pg_signal_backend TO "${app.role}"`);
    } finally {
      await theirs.release();
    }
  });
});
