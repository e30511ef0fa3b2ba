/**
 * The backends as they were before issue 36 (one exclusive lock, the whole journal read into
 * memory), behind today's interface until each is rewritten: a shard then still takes the whole
 * state, as before. Each backend's rewrite drops its use of this; the last one deletes the file.
 */
import type { OrgformError } from '../errors.js';
import { entriesOfData, type JournalData, type LoggedEntry } from './journal-entry.js';
import { indexEntries } from './journal-index.js';
import type { HeldState, Interest, JournalIndex, LockHolder, StateBackend, StateJournal } from './state-backend.js';

export interface LegacyHeldState {
  lock: LockHolder;
  replaced?: LockHolder;
  data: JournalData;
  journal: StateJournal;
  onLost(listener: (error: OrgformError) => void): void;
  release(): Promise<void>;
}

export interface LegacyStateBackend {
  readonly kind: 'file' | 'postgres' | 'http';
  readonly location: string;
  read(): Promise<JournalData>;
  lock(command: string): Promise<LegacyHeldState>;
  forceUnlock(id: string): Promise<LockHolder>;
}

function byServiceThenKey(a: LoggedEntry, b: LoggedEntry): number {
  if (a.service !== b.service) return a.service < b.service ? -1 : 1;
  return a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
}

export function adaptLegacyBackend(legacy: LegacyStateBackend): StateBackend {
  return {
    kind: legacy.kind,
    location: legacy.location,
    async readIndex(interest: Interest): Promise<JournalIndex> {
      return indexEntries(entriesOfData(await legacy.read()), interest);
    },
    async *entries(): AsyncGenerator<LoggedEntry> {
      yield* [...entriesOfData(await legacy.read())].sort(byServiceThenKey);
    },
    async lock(request): Promise<HeldState> {
      const held = await legacy.lock(request.command);
      return {
        lock: request.partition === undefined ? held.lock : { ...held.lock, partition: request.partition },
        replaced: held.replaced === undefined ? [] : [held.replaced],
        journal: held.journal,
        onLost: (listener) => held.onLost(listener),
        release: () => held.release(),
      };
    },
    forceUnlock: (id) => legacy.forceUnlock(id),
    close: async () => undefined,
  };
}
