import { describe, expect, it } from 'vitest';
import { BatchedJournal, type PendingEntry } from '../../src/state/batched-journal.js';
import type { JournalData, JournalEntry } from '../../src/state/journal-entry.js';

const SERVICE = 'https://orgs.example.test';
const entry = (organisation: string): JournalEntry => ({ kind: 'remove-channel', organisation, outcome: 'applied', at: '2025-01-01T00:00:00.000Z' });

function setup(maxEntries: number, maxDelayMs = 60_000) {
  const data: JournalData = { version: 1, services: {} };
  const batches: string[][] = [];
  let release: (() => void) | undefined;
  let failNext: Error | undefined;
  const failures: Array<[unknown, number]> = [];
  const journal = new BatchedJournal({
    data,
    run: 'run-1',
    policy: { maxEntries, maxDelayMs },
    async write(batch: readonly PendingEntry[]) {
      batches.push(batch.map((p) => p.key));
      if (failNext) throw failNext;
      await new Promise<void>((resolve) => (release = resolve));
    },
    onFailure: (error, unwritten) => failures.push([error, unwritten]),
  });
  return { data, journal, batches, failures, release: () => release?.(), fail: (e: Error) => (failNext = e) };
}

describe('BatchedJournal', () => {
  it('writes a batch as soon as it is full, one write at a time, never more than the batch size at once', async () => {
    const { journal, batches, release } = setup(2);
    for (const k of ['a', 'b', 'c', 'd', 'e']) await journal.record(SERVICE, k, entry(k));
    expect(batches).toEqual([['a', 'b']]); // the next full batch waits for this write
    release();
    await new Promise((r) => setImmediate(r));
    expect(batches).toEqual([['a', 'b'], ['c', 'd']]);
    const flushed = journal.flush();
    release();
    await new Promise((r) => setImmediate(r));
    release();
    await flushed;
    expect(batches).toEqual([['a', 'b'], ['c', 'd'], ['e']]);
    expect(journal.written).toEqual({ batches: 3, entries: 5 });
  });

  it('answers has() for what is recorded at once, written or not, and stamps the run on entries that name none', async () => {
    const { journal, data } = setup(10);
    await journal.record(SERVICE, 'a', entry('a'));
    await journal.record(SERVICE, 'b', { ...entry('b'), run: 'older' });
    expect(journal.has(SERVICE, 'a')).toBe(true);
    expect(journal.has(SERVICE, 'z')).toBe(false);
    expect(data.services[SERVICE]).toEqual({ a: { ...entry('a'), run: 'run-1' }, b: { ...entry('b'), run: 'older' } });
  });

  it('writes a batch that has not filled once its delay has passed', async () => {
    const { journal, batches, release } = setup(100, 5);
    await journal.record(SERVICE, 'a', entry('a'));
    expect(batches).toEqual([]);
    for (let i = 0; i < 200 && batches.length === 0; i++) await new Promise((r) => setTimeout(r, 5));
    expect(batches).toEqual([['a']]);
    release();
  });

  it('on a failed write reports the loss once, with how many entries are not written, and writes nothing more', async () => {
    const { journal, batches, failures, fail } = setup(2);
    const boom = new Error('connection reset');
    fail(boom);
    for (const k of ['a', 'b', 'c']) await journal.record(SERVICE, k, entry(k));
    await journal.flush();
    await journal.record(SERVICE, 'd', entry('d'));
    await journal.flush();
    expect(batches).toEqual([['a', 'b']]);
    expect(failures).toEqual([[boom, 2]]); // a and b; c and d were recorded after the loss
    expect(journal.unwrittenCount).toBe(4);
    expect(journal.has(SERVICE, 'd')).toBe(true);
  });
});
