/**
 * `orgform state migrate`: copies every entry of one or more states into another, then reads the
 * target back afresh and checks that it holds them all. Every state is locked whole meanwhile, so
 * that no apply records into any of them half way; the sources are only read, and left as they
 * were. Several sources merge into one (states kept under a name per shard, from before shards
 * shared one state): where two hold the same key, the first recorded is kept, as every backend
 * keeps the first entry recorded for a key.
 */
import { OrgformError } from '../errors.js';
import { isSameEntry, type LoggedEntry } from './journal-entry.js';
import { NO_INTEREST } from './journal-index.js';
import type { HeldState, LockRequest, StateBackend } from './state-backend.js';

export interface MigrateResult {
  /** Entries written to the target. */
  copied: number;
  /** Entries of the sources the target already had, or that an earlier source gave it (kept as they were). */
  present: number;
  /** The sources' entries, all of which the target now holds. */
  total: number;
}

/** Entries recorded before the copy waits for them to be written: a bound on what is held in memory. */
const COPY_BATCH = 5_000;

/** A state to migrate from or to, and a way to open it again: every read goes through a backend of its own, not the one holding the lock. */
export interface MigratedState {
  state: StateBackend;
  reopen(): Promise<StateBackend>;
}

/** Copies `sources` into `target` under their locks, each taken whole with `request` (the caller closes the states it opened). */
export async function migrateStates(sources: readonly MigratedState[], target: MigratedState, request: LockRequest): Promise<MigrateResult> {
  const held: HeldState[] = [];
  try {
    for (const source of sources) held.push(await source.state.lock(request, NO_INTEREST));
    const to = await target.state.lock(request, NO_INTEREST);
    held.push(to);
    const copy = await withReaders([target, ...sources], ([before, ...from]) => copyInto(from, before!, to));
    held.pop();
    await to.release();
    // The check reads what the target holds now, again through a backend of its own.
    await withReaders([target, ...sources], ([after, ...from]) => verifyCopy(from, after!, copy.kept, target.state.location));
    return copy.result;
  } finally {
    // Let go in the reverse order of taking.
    for (const hold of held.reverse()) await hold.release();
  }
}

/** Runs `use` with each state opened again, then closes those. */
async function withReaders<T>(states: readonly MigratedState[], use: (readers: StateBackend[]) => Promise<T>): Promise<T> {
  const readers: StateBackend[] = [];
  try {
    for (const state of states) readers.push(await state.reopen());
    return await use(readers);
  } finally {
    for (const reader of readers) await reader.close();
  }
}

/**
 * Reads the target (`before`) and every source side by side (all sorted by service then key), and records
 * into `to` each key the target lacks, from the first source that has it. Returns the counts, and
 * the keys whose entry in the target rightly differs from the first source's (the target's own,
 * kept): only those are held in memory. Throws if the target's lock or journal is lost on the way.
 */
async function copyInto(sources: readonly StateBackend[], before: StateBackend, to: HeldState): Promise<{ result: MigrateResult; kept: Set<string> }> {
  let lost: OrgformError | undefined;
  to.onLost((error) => {
    lost = error;
  });
  const result: MigrateResult = { copied: 0, present: 0, total: 0 };
  const kept = new Set<string>();
  let writes: Array<Promise<void>> = [];
  for await (const [there, ...given] of mergeSorted([before.entries(), ...sources.map((s) => s.entries())])) {
    if (lost !== undefined) throw lost;
    const first = given.find((e) => e !== undefined)!;
    const count = given.filter((e) => e !== undefined).length;
    result.total += count;
    result.present += there === undefined ? count - 1 : count;
    if (there !== undefined) {
      if (!isSameEntry(there.entry, first.entry)) kept.add(keyOf(first));
      continue;
    }
    result.copied += 1;
    // As it was: an entry recorded before orgform recorded runs is not stamped with this copy's.
    writes.push(to.journal.record(first.service, first.key, { ...first.entry, run: first.entry.run }));
    if (writes.length >= COPY_BATCH) {
      await Promise.all(writes);
      writes = [];
    }
  }
  await Promise.all(writes);
  await to.journal.flush();
  if (lost !== undefined) throw lost;
  return { result, kept };
}

/** Every key of the sources must be in the fresh target, as the first source holds it unless the target kept its own. */
async function verifyCopy(sources: readonly StateBackend[], fresh: StateBackend, kept: ReadonlySet<string>, location: string): Promise<void> {
  const missing: string[] = [];
  let missingCount = 0;
  let total = 0;
  for await (const [there, ...given] of mergeSorted([fresh.entries(), ...sources.map((s) => s.entries())])) {
    const first = given.find((e) => e !== undefined);
    if (first === undefined) continue;
    total += given.filter((e) => e !== undefined).length;
    if (there !== undefined && (kept.has(keyOf(first)) || isSameEntry(there.entry, first.entry))) continue;
    missingCount += 1;
    if (missing.length < 20) missing.push(`${first.service} ${first.key}`);
  }
  if (missingCount > 0) {
    const from = sources.map((s) => s.location).join(', ');
    throw new OrgformError('STATE_INVALID', `The copy at ${location} does not hold ${missingCount} of the ${total} entries of ${from}, which ${sources.length === 1 ? 'is' : 'are'} unchanged. Run orgform state migrate again.`, {
      details: missing,
    });
  }
}

function keyOf(logged: LoggedEntry): string {
  return `${logged.service}\n${logged.key}`;
}

function compareEntries(a: LoggedEntry, b: LoggedEntry): number {
  if (a.service !== b.service) return a.service < b.service ? -1 : 1;
  return a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
}

/**
 * Walks sorted streams of entries side by side: for each service and key that any of them holds,
 * in order, one row with each stream's entry for it (undefined where a stream has none).
 */
export async function* mergeSorted(streams: ReadonlyArray<AsyncIterable<LoggedEntry>>): AsyncGenerator<Array<LoggedEntry | undefined>> {
  const iterators = streams.map((s) => s[Symbol.asyncIterator]());
  try {
    const heads = await Promise.all(iterators.map(async (it) => (await it.next()).value as LoggedEntry | undefined));
    for (;;) {
      let least: LoggedEntry | undefined;
      for (const head of heads) if (head !== undefined && (least === undefined || compareEntries(head, least) < 0)) least = head;
      if (least === undefined) return;
      const row = heads.map((head) => (head !== undefined && compareEntries(head, least) === 0 ? head : undefined));
      yield row;
      for (let i = 0; i < heads.length; i += 1) if (row[i] !== undefined) heads[i] = (await iterators[i]!.next()).value as LoggedEntry | undefined;
    }
  } finally {
    await Promise.all(iterators.map((it) => it.return?.()));
  }
}
