import { describe, expect, it } from 'vitest';
import { BatchedJournal } from '../../src/state/batched-journal.js';
import type { JournalEntry, LoggedEntry } from '../../src/state/journal-entry.js';
import { KeyIndex } from '../../src/state/journal-index.js';

const SERVICE = 'https://orgs.example.test';
const entry = (organisation: string): JournalEntry => ({ kind: 'remove-channel', organisation, outcome: 'applied', at: '2025-01-01T00:00:00.000Z' });

/** A journal whose writes each wait until the test lets them finish (`release`), or fail (`fail`). */
function setup(maxEntries: number, maxDelayMs = 60_000) {
  const batches: LoggedEntry[][] = [];
  const waiting: Array<() => void> = [];
  let failNext: Error | undefined;
  const failures: Array<[unknown, number]> = [];
  const journal = new BatchedJournal({
    index: new KeyIndex(),
    run: 'run-1',
    policy: { maxEntries, maxDelayMs },
    async write(batch) {
      batches.push([...batch]);
      if (failNext) throw failNext;
      await new Promise<void>((resolve) => waiting.push(resolve));
    },
    rejection: (error) => new Error(`not recorded: ${(error as Error).message}`),
    onFailure: (error, unwritten) => failures.push([error, unwritten]),
  });
  const keys = () => batches.map((b) => b.map((p) => p.key));
  return { journal, batches, keys, failures, release: () => waiting.shift()?.(), fail: (e: Error) => (failNext = e) };
}

/** Lets the journal's callbacks run. */
const tick = () => new Promise((r) => setImmediate(r));

/** Which of `promises` have settled by now, and how. */
async function states(promises: Array<Promise<void>>): Promise<string[]> {
  const seen = promises.map(() => 'pending');
  promises.forEach((p, i) =>
    p.then(
      () => (seen[i] = 'written'),
      () => (seen[i] = 'rejected'),
    ),
  );
  await tick();
  return seen;
}

describe('BatchedJournal', () => {
  it('writes a batch as soon as it is full, one write at a time, never more than the batch size at once', async () => {
    const { journal, keys, release } = setup(2);
    const recorded = ['a', 'b', 'c', 'd', 'e'].map((k) => journal.record(SERVICE, k, entry(k)));
    expect(keys()).toEqual([['a', 'b']]); // the next full batch waits for this write
    release();
    await tick();
    expect(keys()).toEqual([['a', 'b'], ['c', 'd']]);
    const flushed = journal.flush();
    release();
    await tick();
    release();
    await flushed;
    await Promise.all(recorded);
    expect(keys()).toEqual([['a', 'b'], ['c', 'd'], ['e']]);
    expect(journal.written).toEqual({ batches: 3, entries: 5 });
  });

  it('acknowledges an entry only once the write of its batch has finished', async () => {
    const { journal, release } = setup(2);
    const recorded = ['a', 'b', 'c'].map((k) => journal.record(SERVICE, k, entry(k)));
    expect(await states(recorded)).toEqual(['pending', 'pending', 'pending']);
    release();
    expect(await states(recorded)).toEqual(['written', 'written', 'pending']);
    const flushed = journal.flush();
    await tick();
    release();
    await flushed;
    expect(await states(recorded)).toEqual(['written', 'written', 'written']);
  });

  it('answers has() for what is recorded at once, written or not, and stamps the run on entries that name none', async () => {
    const { journal, batches, release } = setup(10);
    const recorded = [journal.record(SERVICE, 'a', entry('a')), journal.record(SERVICE, 'b', { ...entry('b'), run: 'older' })];
    expect(journal.has(SERVICE, 'a')).toBe(true);
    expect(journal.has(SERVICE, 'z')).toBe(false);
    const flushed = journal.flush();
    release();
    await flushed;
    await Promise.all(recorded);
    expect(batches[0]!.map((p) => p.entry.run)).toEqual(['run-1', 'older']);
  });

  it('writes a batch that has not filled once its delay has passed', async () => {
    const { journal, keys, release } = setup(100, 5);
    const recorded = journal.record(SERVICE, 'a', entry('a'));
    expect(keys()).toEqual([]);
    for (let i = 0; i < 200 && keys().length === 0; i++) await new Promise((r) => setTimeout(r, 5));
    expect(keys()).toEqual([['a']]);
    release();
    await recorded;
  });

  it('on a failed write rejects every entry not written, reports the loss once, and writes nothing more', async () => {
    const { journal, keys, failures, fail } = setup(2);
    const boom = new Error('connection reset');
    fail(boom);
    const recorded = ['a', 'b', 'c'].map((k) => journal.record(SERVICE, k, entry(k)));
    await journal.flush();
    const later = journal.record(SERVICE, 'd', entry('d'));
    await journal.flush();
    expect(await states([...recorded, later])).toEqual(['rejected', 'rejected', 'rejected', 'rejected']);
    await expect(later).rejects.toThrow('not recorded: connection reset');
    expect(keys()).toEqual([['a', 'b']]);
    expect(failures).toEqual([[boom, 3]]); // a and b in the batch, c waiting; d was recorded after the loss
    expect(journal.unwrittenCount).toBe(4);
    expect(journal.has(SERVICE, 'd')).toBe(true);
  });

  it('when stopped (the lock is lost), rejects what waits and what comes, and lets the write under way finish', async () => {
    const { journal, keys, failures, release } = setup(2);
    const recorded = ['a', 'b', 'c'].map((k) => journal.record(SERVICE, k, entry(k)));
    journal.stop(new Error('the connection closed'));
    release();
    expect(await states(recorded)).toEqual(['written', 'written', 'rejected']);
    await expect(journal.record(SERVICE, 'd', entry('d'))).rejects.toThrow('not recorded: the connection closed');
    expect(keys()).toEqual([['a', 'b']]);
    expect(failures).toHaveLength(1);
  });
});
