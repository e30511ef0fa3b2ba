import { describe, expect, it } from 'vitest';
import { hashId, ListedIds } from '../../src/api/listed-ids.js';

/** Two different ids with the same 32-bit hash under `seed`, found by a birthday search. */
function collidingPair(seed: number): [string, string] {
  const seen = new Map<number, string>();
  for (let n = 0; ; n += 1) {
    const id = `org_${n}`;
    const hash = hashId(id, seed);
    const other = seen.get(hash);
    if (other !== undefined) return [other, id];
    seen.set(hash, id);
  }
}

describe('the ids a listing has given', () => {
  it('finds each id on the page it came on, and no id that was not listed', () => {
    const ids = new ListedIds(7);
    ids.addPage(['org_1', 'org_2', 'org_3']);
    ids.addPage(['org_10', 'org_20']);
    ids.addPage(['org_100']);
    expect([ids.pageOf('org_1'), ids.pageOf('org_3'), ids.pageOf('org_20'), ids.pageOf('org_100')]).toEqual([1, 1, 2, 3]);
    expect([ids.pageOf('org_4'), ids.pageOf('org_'), ids.pageOf('org_1000'), ids.pageOf('')]).toEqual([undefined, undefined, undefined, undefined]);
    expect(ids.size).toBe(6);
  });

  it('never takes one id for another whose characters run on from it across the concatenation', () => {
    const ids = new ListedIds(3);
    // Concatenated, page 1 reads "abcd": "abc", "bc", "cd" and "abcd" are not its ids.
    ids.addPage(['ab', 'cd']);
    expect(['abc', 'bc', 'cd', 'abcd', 'ab'].map((id) => ids.pageOf(id))).toEqual([undefined, undefined, 1, undefined, 1]);
  });

  it('counts empty pages, so that later pages keep their numbers', () => {
    const ids = new ListedIds(5);
    ids.addPage(['a']);
    ids.addPage([]);
    ids.addPage([]);
    ids.addPage(['b', '']);
    ids.addPage([]);
    expect([ids.pageOf('a'), ids.pageOf('b'), ids.pageOf('')]).toEqual([1, 4, 4]);
  });

  it('keeps ids of any characters exactly: accents, astral characters, long ids', () => {
    const ids = new ListedIds(11);
    const long = 'x'.repeat(5_000);
    ids.addPage(['é', 'e\u0301', '😀', long]);
    expect([ids.pageOf('é'), ids.pageOf('e\u0301'), ids.pageOf('😀'), ids.pageOf(long), ids.pageOf(`${long}x`), ids.pageOf('e')]).toEqual([1, 1, 1, 1, undefined, undefined]);
  });

  it('tells apart two ids whose hashes collide: the one not listed is not found, and each listed one is found on its own page', () => {
    const seed = 12345;
    const [first, second] = collidingPair(seed);
    expect(first).not.toBe(second);
    expect(hashId(first, seed)).toBe(hashId(second, seed));

    const ids = new ListedIds(seed);
    ids.addPage([first]);
    expect(ids.pageOf(second)).toBeUndefined();
    ids.addPage(['org_x', second]);
    expect([ids.pageOf(first), ids.pageOf(second)]).toEqual([1, 2]);
  });

  it('finds every one of 300,000 ids over 600 pages after the table has grown many times, and none of as many others', () => {
    const ids = new ListedIds(99);
    for (let page = 0; page < 600; page += 1) ids.addPage(Array.from({ length: 500 }, (_, i) => `org_${page * 500 + i}`));
    let found = 0;
    let wrong = 0;
    for (let n = 0; n < 300_000; n += 1) {
      if (ids.pageOf(`org_${n}`) === Math.floor(n / 500) + 1) found += 1;
      if (ids.pageOf(`org_${n + 300_000}`) !== undefined) wrong += 1;
    }
    expect({ found, wrong, size: ids.size }).toEqual({ found: 300_000, wrong: 0, size: 300_000 });
  });
});
