/**
 * The states that shards share, as the shared-state tests (e2e and the property) use them: a fresh
 * address, the runs holding it now, and every key it holds, for the file state, PostgreSQL and a
 * Terraform HTTP backend (test/support/terraform-http-backend.mjs, one a state, open to anyone).
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { readJournalFile } from './file-state.js';
import { createTestDatabase, query } from './postgres.js';
import { startBackend } from './terraform-backends.js';

export interface SharedStateBackend {
  name: string;
  /** A fresh state address for a test, in or beside the workspace `cwd`. */
  state(cwd: string, name?: string): Promise<string>;
  /** The runs holding the state now: lock ID, and the shard held (`1/2`), if any. */
  holders(state: string): Promise<Array<{ id: string; shard?: string }>>;
  /** Every `SERVICE KEY` the state holds. */
  keys(state: string): Promise<Set<string>>;
  /** The address as orgform shows it (a PostgreSQL URL without its user). */
  shown(state: string): string;
  /** Once every run has ended (or been killed): waits until the state knows it (a PostgreSQL session ends a moment after its process). */
  settle(state: string): Promise<void>;
}

export const FILE_BACKEND: SharedStateBackend = {
  name: 'file',
  state: async (cwd, name = 'state') => join(cwd, `${name}.json`),
  holders: async (state) => {
    if (!existsSync(`${state}.lock`)) return [];
    const table = JSON.parse(await readFile(`${state}.lock`, 'utf8')) as { holders: Array<{ id: string; partition?: { index: number; count: number } }> };
    return table.holders.map((h) => ({ id: h.id, ...(h.partition === undefined ? {} : { shard: `${h.partition.index}/${h.partition.count}` }) }));
  },
  keys: async (state) => {
    const keys = new Set<string>();
    for (const [service, entries] of Object.entries((await readJournalFile(state)).services)) for (const key of Object.keys(entries)) keys.add(`${service} ${key}`);
    return keys;
  },
  shown: (state) => state,
  // A run's hold on a file ends with its process: the next run sees the pid gone.
  settle: async () => undefined,
};

/** The rows of a state that may not have been made yet: none then. */
async function rowsOf<T extends Record<string, unknown>>(state: string, text: string): Promise<T[]> {
  const url = new URL(state);
  const name = url.searchParams.get('state') ?? 'default';
  url.search = '';
  return query<T>(url.toString(), text, [name]).catch((err: { code?: string }) => {
    if (err.code === '42P01' || err.code === '3F000') return [];
    throw err;
  });
}

export const POSTGRES_BACKEND: SharedStateBackend = {
  name: 'postgres',
  state: async (_cwd, name = 'state') => `${await createTestDatabase('shared_state')}?state=${name}`,
  // The runs whose session still holds the state (a killed run's row stays until the next locker drops it).
  holders: async (state) => {
    const rows = await rowsOf<{ lock_id: string; shard: string | null }>(
      state,
      "SELECT h.lock_id, h.shard_index || '/' || h.shard_count AS shard FROM orgform.holders h JOIN pg_stat_activity a ON a.pid = h.backend_pid WHERE h.state = $1 ORDER BY h.locked_at, h.lock_id",
    );
    return rows.map((r) => ({ id: r.lock_id, ...(r.shard === null ? {} : { shard: r.shard }) }));
  },
  keys: async (state) => new Set((await rowsOf<{ k: string }>(state, "SELECT service || ' ' || key AS k FROM orgform.journal WHERE state = $1")).map((r) => r.k)),
  shown: (state) => state.replace('postgres://postgres@', 'postgres://[REDACTED]@'),
  settle: async (state) => {
    const url = new URL(state);
    url.search = '';
    const held = async () => (await query<{ n: number }>(url.toString(), "SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"))[0]!.n;
    while ((await held()) > 0) await new Promise((resolve) => setTimeout(resolve, 10));
  },
};

/** The document an HTTP state holds now, as orgform wrote it (none yet: nothing in it). */
async function documentOf(state: string): Promise<{ orgform?: { services?: Record<string, Record<string, unknown>>; runs?: Record<string, { partition?: { index: number; count: number } }> } }> {
  const answer = await fetch(state);
  return answer.status === 200 ? ((await answer.json()) as object) : {};
}

export const HTTP_BACKEND: SharedStateBackend = {
  name: 'http',
  state: async (_cwd, name = 'state') => `${(await startBackend({ anonymous: true })).url}/api/v4/projects/42/terraform/state/${name}`,
  // The runs registered in the document (a killed run's stays until the next run on this host sees its pid gone).
  holders: async (state) =>
    Object.entries((await documentOf(state)).orgform?.runs ?? {}).map(([id, run]) => ({ id, ...(run.partition === undefined ? {} : { shard: `${run.partition.index}/${run.partition.count}` }) })),
  keys: async (state) => {
    const keys = new Set<string>();
    for (const [service, entries] of Object.entries((await documentOf(state)).orgform?.services ?? {})) for (const key of Object.keys(entries)) keys.add(`${service} ${key}`);
    return keys;
  },
  shown: (state) => state,
  // A run's registration is taken out before it ends; a killed one's, by the next run.
  settle: async () => undefined,
};

export const SHARED_STATE_BACKENDS: SharedStateBackend[] = [FILE_BACKEND, POSTGRES_BACKEND, HTTP_BACKEND];
