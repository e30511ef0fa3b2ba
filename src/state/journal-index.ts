/**
 * What a run keeps of the journal: the keys of the entries it may ask about (its interest), one
 * string each in a set per service, and nothing of the others. Every entry of the state is still
 * visited, whatever the shard that wrote it: a plan sees every run's work.
 */
import { targetOfKey } from '../model/journal-key.js';
import type { LoggedEntry } from './journal-entry.js';
import type { Interest, JournalIndex } from './state-backend.js';

export class KeyIndex implements JournalIndex {
  private readonly services = new Map<string, Set<string>>();
  private count = 0;

  add(serviceKey: string, key: string): void {
    let keys = this.services.get(serviceKey);
    if (keys === undefined) {
      keys = new Set();
      this.services.set(serviceKey, keys);
    }
    if (keys.has(key)) return;
    keys.add(key);
    this.count += 1;
  }

  has(serviceKey: string, key: string): boolean {
    return this.services.get(serviceKey)?.has(key) === true;
  }

  get size(): number {
    return this.count;
  }
}

/** Whether a run with `interest` may ask about the entry keyed `key`. */
export function isOfInterest(interest: Interest, key: string): boolean {
  const target = targetOfKey(key);
  return target !== undefined && interest.targets.has(target);
}

/** The index of `entries` that `interest` may ask about. */
export function indexEntries(entries: Iterable<LoggedEntry>, interest: Interest): KeyIndex {
  const index = new KeyIndex();
  for (const { service, key } of entries) if (isOfInterest(interest, key)) index.add(service, key);
  return index;
}

/** No interest at all: nothing is kept (a run that declares no one-shot change). */
export const NO_INTEREST: Interest = { targets: new Set() };
