/**
 * The file state as tests use it: lock one as another run would, record into one, read one back
 * whole (base and logs, as any reader does), and a journal kept in memory for the engine's tests.
 */
import { hostname } from 'node:os';
import { FileState } from '../../src/state/file/file-state.js';
import type { JournalData, JournalEntry, LoggedEntry } from '../../src/state/journal-entry.js';
import { KeyIndex, NO_INTEREST } from '../../src/state/journal-index.js';
import { defaultLockEnvironment, type LockEnvironment } from '../../src/state/lock-environment.js';
import type { HeldState, Partition, StateJournal } from '../../src/state/state-backend.js';

/** The lock table beside the journal at `path` (no link followed). */
export function lockPathFor(path: string): string {
  return `${path}.lock`;
}

/** The file state at `path`, with this process as its lock sees it (or `env`). */
export function fileState(path: string, env: LockEnvironment = defaultLockEnvironment()): FileState {
  return new FileState(path, env);
}

/** The state at `path` locked as a run would: the whole of it, or `partition`. */
export function lockFileState(path: string, options: { command?: string; partition?: Partition; env?: LockEnvironment } = {}): Promise<HeldState> {
  const env = options.env ?? defaultLockEnvironment();
  const request = {
    command: options.command ?? 'orgform apply (test)',
    pid: env.pid,
    host: env.host ?? hostname(),
    who: 'test',
    startedAt: new Date(env.now()).toISOString(),
    ...(options.partition === undefined ? {} : { partition: options.partition }),
  };
  return fileState(path, env).lock(request, NO_INTEREST);
}

/** Records `entries` into the state at `path` under a lock of its own, as an apply would. */
export async function recordInFileState(path: string, entries: ReadonlyArray<LoggedEntry>): Promise<void> {
  const held = await lockFileState(path);
  try {
    await Promise.all(entries.map(({ service, key, entry }) => held.journal.record(service, key, entry)));
  } finally {
    await held.release();
  }
}

/** Every entry of the state at `path` (base and logs), grouped by service as a version 1 document groups them. */
export async function readJournalFile(path: string): Promise<JournalData> {
  const data: JournalData = { version: 1, services: {} };
  for await (const { service, key, entry } of fileState(path).entries()) (data.services[service] ??= {})[key] = entry;
  return data;
}

/** A journal kept in memory: records at once, and answers `has` for what it recorded. */
export function memoryJournal(): StateJournal & { entries: LoggedEntry[] } {
  const index = new KeyIndex();
  const entries: LoggedEntry[] = [];
  return {
    entries,
    has: (service, key) => index.has(service, key),
    async record(service: string, key: string, entry: JournalEntry) {
      index.add(service, key);
      entries.push({ service, key, entry });
    },
    flush: async () => undefined,
  };
}
