/**
 * The listing read ahead asks for the next page from the cursor in a page's text, before the page
 * is parsed: taken only where the parsed page leads to the same address, never to another origin
 * or back to a page read before. A fake reader stands for the service here, so that a page's text
 * can say something else than the page (what a real service never sends, but a hostile one may).
 */
import { describe, expect, it } from 'vitest';
import { cursorIn, listPages, type ListingPage, type PageHooks, type PageReader } from '../../src/api/listing-pages.js';
import { Redactor } from '../../src/redact.js';

const FIRST = new URL('https://orgs.example/api/organisations/v1/organisations?limit=2');

interface FakePage {
  /** What the page's text gives as `next` (where it differs from the page's own). */
  textNext?: string;
  next?: string;
}

/** Pages by cursor ('' for the first); every request it gets, by address. */
function fakeReader(pages: Record<string, FakePage>): PageReader & { asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    redactor: new Redactor([]),
    async readPage(url: URL, _number: number, _target: string, hooks: PageHooks = {}): Promise<ListingPage> {
      asked.push(url.toString());
      const page = pages[url.searchParams.get('cursor') ?? ''];
      if (page === undefined) throw new Error(`no page at ${url}`);
      hooks.onSent?.();
      await new Promise((resolve) => setImmediate(resolve));
      const textNext = 'textNext' in page ? page.textNext : page.next;
      hooks.onText?.(JSON.stringify({ organisations: [], ...(textNext === undefined ? {} : { next: textNext }) }));
      return { organisations: [], ...(page.next === undefined ? {} : { next: page.next }), sentAt: 0 };
    },
  };
}

async function readAll(reader: PageReader, readAhead = true): Promise<number> {
  let pages = 0;
  for await (const _ of listPages(reader, FIRST, { target: '(all pages)', headed: false, readAhead })) pages += 1;
  return pages;
}

const cursor = (c: string) => `${FIRST}&cursor=${c}`;

describe('the listing read ahead', () => {
  it('asks for each page once, from the cursor its text gives, when the page parsed says the same', async () => {
    const reader = fakeReader({ '': { next: 'b' }, b: { next: 'c' }, c: {} });
    expect(await readAll(reader)).toBe(3);
    expect(reader.asked).toEqual([FIRST.toString(), cursor('b'), cursor('c')]);
  });

  it('follows the page parsed where its text said another cursor, and lets the guess go', async () => {
    const reader = fakeReader({ '': { textNext: 'wrong', next: 'b' }, wrong: {}, b: {} });
    expect(await readAll(reader)).toBe(2);
    // The guess was asked for, and its answer not used: the listing went on from the page parsed.
    expect(reader.asked).toEqual([FIRST.toString(), cursor('wrong'), cursor('b')]);
  });

  it('never asks another origin for a guess, nor a page read before', async () => {
    const reader = fakeReader({ '': { textNext: 'https://evil.example/api/organisations/v1/organisations', next: 'b' }, b: { textNext: `${FIRST}`, next: 'c' }, c: {} });
    expect(await readAll(reader)).toBe(3);
    expect(reader.asked).toEqual([FIRST.toString(), cursor('b'), cursor('c')]);
  });

  it('makes no guess when not read ahead', async () => {
    const reader = fakeReader({ '': { textNext: 'wrong', next: 'b' }, b: {} });
    expect(await readAll(reader, false)).toBe(2);
    expect(reader.asked).toEqual([FIRST.toString(), cursor('b')]);
  });
});

describe('cursorIn', () => {
  it('finds the last "next" key\'s plain string value', () => {
    expect(cursorIn('{"organisations":[{"next":"x"}],"next" : "abc.DEF-1"}')).toBe('abc.DEF-1');
    expect(cursorIn('{"next":"/api/organisations/v1/organisations?cursor=1","organisations":[]}')).toBe('/api/organisations/v1/organisations?cursor=1');
  });

  it('gives nothing for a value it cannot read without parsing, or none', () => {
    expect(cursorIn('{"organisations":[],"next":null}')).toBeUndefined();
    expect(cursorIn('{"organisations":[],"next":""}')).toBeUndefined();
    expect(cursorIn('{"organisations":[],"next":"a\\"b"}')).toBeUndefined();
    expect(cursorIn('{"organisations":[],"next":7}')).toBeUndefined();
    expect(cursorIn('{"organisations":["next"]}')).toBeUndefined();
    expect(cursorIn('{"organisations":[]}')).toBeUndefined();
  });
});

describe('a listing looked up in (apply’s listing behind the writes)', () => {
  const org = (id: string) => ({ id, slug: id });
  /** Pages by cursor, each with its organisations' ids and its next cursor. */
  function orgReader(pages: Record<string, { ids: string[]; next?: string; totalCount?: number }>): PageReader {
    return {
      redactor: new Redactor([]),
      async readPage(url: URL): Promise<ListingPage> {
        const page = pages[url.searchParams.get('cursor') ?? '']!;
        return { organisations: page.ids.map(org), ...(page.next === undefined ? {} : { next: page.next }), ...(page.totalCount === undefined ? {} : { totalCount: page.totalCount }), sentAt: 0 };
      },
    };
  }
  const read = async (reader: PageReader, lookup: boolean) => {
    const ids: string[][] = [];
    for await (const page of listPages(reader, FIRST, { target: '(all pages)', headed: false, readAhead: false, lookup })) ids.push(page.organisations.map((o) => o.id));
    return ids;
  };

  it('leaves out an organisation listed again on a later page (an offset-paged listing that moved), where a whole listing is refused', async () => {
    const shifted = { '': { ids: ['a', 'b'], next: 'p2' }, p2: { ids: ['b', 'c'], next: 'p3' }, p3: { ids: ['c', 'd'] } };
    expect(await read(orgReader(shifted), true)).toEqual([['a', 'b'], ['c'], ['d']]);
    await expect(read(orgReader(shifted), false)).rejects.toThrow(/"b" is listed again on page 2, after page 1/);
  });

  it('still stops where every organisation of a page that links on was listed before (the links lead round), or one is listed twice on a page', async () => {
    await expect(read(orgReader({ '': { ids: ['a', 'b'], next: 'p2' }, p2: { ids: ['b', 'a'], next: 'p3' }, p3: { ids: ['e'] } }), true)).rejects.toThrow(/"b" is listed again on page 2, after page 1: so is every organisation on the page.*\(a cycle\)/);
    await expect(read(orgReader({ '': { ids: ['a', 'c', 'a'] } }), true)).rejects.toThrow(/"a" is listed twice on page 1/);
  });

  it('ends where a last page shows only organisations listed before, and is not refused for coming short of its totalCount (what it did not show, apply asks after)', async () => {
    expect(await read(orgReader({ '': { ids: ['a', 'b'], next: 'p2', totalCount: 4 }, p2: { ids: ['b'], totalCount: 4 } }), true)).toEqual([['a', 'b'], []]);
    await expect(read(orgReader({ '': { ids: ['a', 'b'], next: 'p2', totalCount: 4 }, p2: { ids: ['c'], totalCount: 4 } }), false)).rejects.toThrow(/pages are missing/);
  });
});
