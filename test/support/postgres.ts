/**
 * A database of its own for each test file, on the run's one PostgreSQL server
 * (postgres-global-setup.ts). No server means the test fails, saying why: these tests never skip.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';

export function postgresAdminUrl(): string {
  const server = inject('postgres');
  if ('error' in server) throw new Error(`PostgreSQL for the tests could not be started: ${server.error}`);
  return server.url;
}

/** Creates a fresh database and returns its URL (postgres://postgres@127.0.0.1:PORT/NAME). */
export async function createTestDatabase(prefix: string): Promise<string> {
  const admin = postgresAdminUrl();
  const name = `${prefix.replace(/[^a-z0-9_]/g, '_')}_${randomBytes(4).toString('hex')}`;
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE "${name}"`);
  } finally {
    await client.end();
  }
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return url.toString();
}

/** Runs one query on its own connection. */
export async function query<T extends pg.QueryResultRow = pg.QueryResultRow>(url: string, text: string, values: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(text, values)).rows;
  } finally {
    await client.end();
  }
}
