/**
 * The PostgreSQL state's tests open it directly (no config, no CLI), each on a database of its own
 * on the run's one server (test/support/postgres.ts).
 */
import { parseStateSpec } from '../../../src/state/parse-state-spec.js';
import { PostgresState } from '../../../src/state/postgres/postgres-state.js';
import type { PostgresSpec } from '../../../src/state/postgres/postgres-session.js';
import type { JournalEntry } from '../../../src/state/journal-entry.js';
import type { Interest, LockRequest, Partition } from '../../../src/state/state-backend.js';
import { DEFAULT_STATE_SETTINGS, type StateSettings } from '../../../src/state/state-settings.js';

export const SERVICE = 'https://orgs.example.test';

export const entry = (organisation: string): JournalEntry => ({ kind: 'remove-channel', organisation, outcome: 'applied', at: '2025-01-02T03:04:05.678Z' });

/** The key of removing channel `n` of organisation `n`, and its target. */
export const keyOf = (n: number) => `remove-channel org_${n} chn_${n}`;
export const targetOf = (n: number) => `remove-channel chn_${n}`;

/** Batches written 10 ms after their first entry: a record is acknowledged soon after it is made. */
export const QUICK_SETTINGS: StateSettings = { ...DEFAULT_STATE_SETTINGS, batch: { maxEntries: 500, maxDelayMs: 10 } };

export function openPostgres(url: string, settings: StateSettings = QUICK_SETTINGS, heartbeatMs?: number): PostgresState {
  return new PostgresState(parseStateSpec(url, '/') as PostgresSpec, { settings, ...(heartbeatMs === undefined ? {} : { heartbeatMs }) });
}

export const withState = (url: string, name: string) => `${url}?state=${encodeURIComponent(name)}`;

export function request(command: string, partition?: Partition, pid = 4242): LockRequest {
  return { command, pid, host: 'runner-1', who: 'ci@runner-1', startedAt: '2025-03-04T05:06:07.000Z', ...(partition === undefined ? {} : { partition }) };
}

export const shard = (index: number, count: number): Partition => ({ index, count });

export function interest(...targets: string[]): Interest {
  return { targets: new Set(targets) };
}

/** Waits for a condition that an asynchronous write will make true (never a timed assertion). */
export async function until(condition: () => boolean | Promise<boolean>): Promise<void> {
  for (let i = 0; i < 1000 && !(await condition()); i++) await new Promise((r) => setTimeout(r, 10));
}

/** Whether a promise has settled by now (after the pending I/O callbacks have run). */
export async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  promise.then(
    () => (done = true),
    () => (done = true),
  );
  await new Promise((r) => setImmediate(r));
  return done;
}
