/**
 * The states that shards share, as the shared-state tests (e2e and the property) use them: a fresh
 * address, the runs holding it now, and every key it holds. The file state is here; PostgreSQL's
 * arm is added beside it.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { readJournalFile } from './file-state.js';

export interface SharedStateBackend {
  name: string;
  /** A fresh state address for a test, in or beside the workspace `cwd`. */
  state(cwd: string, name?: string): Promise<string>;
  /** The runs holding the state now: lock ID, and the shard held (`1/2`), if any. */
  holders(state: string): Promise<Array<{ id: string; shard?: string }>>;
  /** Every `SERVICE KEY` the state holds. */
  keys(state: string): Promise<Set<string>>;
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
};

export const SHARED_STATE_BACKENDS: SharedStateBackend[] = [FILE_BACKEND];
