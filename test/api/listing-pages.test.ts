/**
 * The listing read ahead asks for the next page from the cursor in a page's text, before the page
 * is parsed: taken only where the parsed page leads to the same address, never to another origin
 * or back to a page read before. A fake reader stands for the service here, so that a page's text
 * can say something else than the page (what a real service never sends, but a hostile one may).
 */
import { createServer, type IncomingMessage, type ServerResponse, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createClient, type OrganisationsClient } from '../../src/api/client.js';
import { cursorIn, listPages, type ListingPage, type PageHooks, type PageReader } from '../../src/api/listing-pages.js';
import { Redactor } from '../../src/redact.js';
import { collect } from '../support/collect.js';

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
      // The text comes two turns of the event loop later: after the listing has handed the page
      // before over and come back to wait for this one, as a page from the network does.
      for (let turn = 0; turn < 2; turn += 1) await new Promise((resolve) => setImmediate(resolve));
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
    const reader = fakeReader({ '': { textNext: 'https://evil.example/api/organisations/v1/organisations', next: 'b' }, b: { textNext: `${FIRST}`, next: 'c' }, c: { textNext: cursor('b'), next: 'd' }, d: {} });
    expect(await readAll(reader)).toBe(4);
    expect(reader.asked).toEqual([FIRST.toString(), cursor('b'), cursor('c'), cursor('d')]);
  });

  it.each([
    ['another origin, scheme-relative', '//evil.example/api/organisations/v1/organisations?cursor=x'],
    ['another port', 'https://orgs.example:8443/api/organisations/v1/organisations?cursor=x'],
    ['another path', '/api/organisations/v1/organisations/org_1?cursor=x'],
  ])('never asks %s for a guess', async (_what, textNext) => {
    const reader = fakeReader({ '': { textNext, next: 'b' }, b: {} });
    expect(await readAll(reader)).toBe(2);
    expect(reader.asked).toEqual([FIRST.toString(), cursor('b')]);
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

describe('the listing read ahead, a read it will not use', () => {
  /** A fake reader that records, for each request, the signal that lets it go. */
  function watchingReader(pages: Record<string, FakePage>): PageReader & { letGo: Map<string, AbortSignal | undefined> } {
    const inner = fakeReader(pages);
    const letGo = new Map<string, AbortSignal | undefined>();
    return {
      letGo,
      redactor: inner.redactor,
      readPage(url, number, target, hooks = {}) {
        letGo.set(url.toString(), hooks.letGo);
        return inner.readPage(url, number, target, hooks);
      },
    };
  }

  it('lets go of the page read ahead when the caller stops taking pages', async () => {
    const reader = watchingReader({ '': { next: 'b' }, b: { next: 'c' }, c: {} });
    for await (const _ of listPages(reader, FIRST, { target: '(all pages)', headed: false, readAhead: true })) break;
    expect(reader.letGo.get(cursor('b'))?.aborted).toBe(true);
    expect(reader.letGo.get(FIRST.toString())?.aborted).toBe(false);
  });

  it('lets go of the page read ahead when the listing stops on a page already read', async () => {
    // Page b lists org again: the listing stops, page c already asked for.
    const reader = watchingReader({ '': { next: 'b' }, b: { next: 'c' }, c: {} });
    const withIds: PageReader = {
      redactor: reader.redactor,
      async readPage(url, number, target, hooks) {
        const page = await reader.readPage(url, number, target, hooks);
        return { ...page, organisations: [{ id: 'org_1', slug: 'one' }] };
      },
    };
    await expect(readAll(withIds)).rejects.toThrow(/listed again on page 2/);
    expect(reader.letGo.get(cursor('c'))?.aborted).toBe(true);
  });
});

/** A request as a loopback service saw it: its address, and whether orgform hung up before it was answered. */
interface Seen {
  path: string;
  authorization: string | undefined;
  /** Resolves when orgform closes the request unanswered (lets it go). */
  hungUp: Promise<void>;
}

const running: Array<{ server: Server; client: OrganisationsClient; base: string }> = [];
afterEach(async () => {
  for (const { server, client } of running.splice(0)) {
    server.closeAllConnections();
    // A test may have closed it already.
    await client.close().catch(() => undefined);
    await new Promise((done) => server.close(done));
  }
});

/**
 * A service over loopback whose listing `answer` scripts by cursor ('' for the first page): a text
 * to send, or undefined to hold the request unanswered (until orgform lets go of it).
 */
async function loopbackListing(answer: (cursor: string) => string | Promise<string> | undefined) {
  const seen: Seen[] = [];
  const waiting: Array<{ count: number; resolve: () => void }> = [];
  let base = '';
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', base);
    let hungUp!: () => void;
    seen.push({ path: `${url.pathname}${url.search}`, authorization: req.headers.authorization, hungUp: new Promise((resolve) => (hungUp = resolve)) });
    res.on('close', () => (res.writableFinished ? undefined : hungUp()));
    for (const w of waiting) if (seen.length >= w.count) w.resolve();
    void Promise.resolve(answer(url.searchParams.get('cursor') ?? '')).then((text) => {
      if (text === undefined) return;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(text);
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const client = createClient({ baseUrl: base, token: 'loopback-token', retryPolicy: { baseDelayMs: 5, maxDelayMs: 20 } });
  running.push({ server, client, base });
  const pages = (): AsyncIterable<unknown> => client.listOrganisationPages({ readAhead: true });
  /** Resolves once the service has seen `count` requests (they may still be on their way when orgform's own promise settles). */
  const arrived = (count: number) => new Promise<void>((resolve) => (seen.length >= count ? resolve() : waiting.push({ count, resolve })));
  return { seen, client, pages, arrived, asked: () => seen.map((s) => s.path) };
}

const PATH = '/api/organisations/v1/organisations';
const org = (n: number, extra: object = {}) => JSON.stringify({ id: `org_${n}`, slug: `o${n}`, ...extra });

describe('the listing read ahead over loopback, a guess not taken', () => {
  it('is let go at once, not left on the wire: a cursor in an organisation, which the page itself does not lead to', async () => {
    // The page's own `next` comes first, an organisation's field named `next` last: the guess is
    // that one, held by the service; the listing ends after page b.
    const { seen, client, pages, asked } = await loopbackListing((c) => (c === '' ? `{"next":"b","organisations":[${org(1, { links: { next: 'guess' } })}]}` : c === 'b' ? `{"organisations":[${org(2)}]}` : undefined));
    expect(await collect(pages())).toHaveLength(2);
    // Held by the service, the guess would keep the client open until its deadline: it is let go
    // (before it reached the service, or hung up on there).
    await client.close();
    expect([`${PATH}?limit=500`, `${PATH}?limit=500&cursor=b`, `${PATH}?limit=500&cursor=guess`]).toEqual(expect.arrayContaining(asked()));
    expect(asked()).toEqual(expect.arrayContaining([`${PATH}?limit=500`, `${PATH}?limit=500&cursor=b`]));
    await Promise.all(seen.filter((s) => s.path.endsWith('cursor=guess')).map((s) => s.hungUp));
  });

  it('is let go at once when the page, checked, leads nowhere: an empty page beyond its totalCount', async () => {
    const { seen, client, pages, asked, arrived } = await loopbackListing((c) =>
      c === '' ? `{"organisations":[${org(1)}],"totalCount":1,"next":"2"}` : c === '2' ? '{"organisations":[],"totalCount":1,"next":"3"}' : undefined,
    );
    await expect(collect(pages())).rejects.toThrow(/more pages than totalCount allows/);
    await arrived(3);
    expect(asked()).toEqual([`${PATH}?limit=500`, `${PATH}?limit=500&cursor=2`, `${PATH}?limit=500&cursor=3`]);
    // The run ends at once: closing the client does not wait for the request's deadline.
    await Promise.all([seen[2]!.hungUp, client.close()]);
  });

  it('is never the first page again, which the listing has read', async () => {
    // Page b's text leads back to the first page (an organisation's field, after the page's own
    // `next`), the page itself to c. Page b is answered once the listing waits for it, as a page
    // from the network is.
    let answerB!: (text: string) => void;
    const b = new Promise<string>((resolve) => (answerB = resolve));
    const { asked, pages } = await loopbackListing((c) => (c === '' ? `{"next":"b","organisations":[${org(1)}]}` : c === 'b' ? b : c === 'c' ? `{"organisations":[${org(3)}]}` : undefined));
    const listing = pages()[Symbol.asyncIterator]();
    expect((await listing.next()).done).toBe(false);
    const second = listing.next();
    const first = asked()[0]!;
    answerB(`{"next":"c","organisations":[${org(2, { links: { next: first } })}]}`);
    expect((await second).done).toBe(false);
    expect((await listing.next()).done).toBe(false);
    expect((await listing.next()).done).toBe(true);
    expect(asked()).toEqual([`${PATH}?limit=500`, `${PATH}?limit=500&cursor=b`, `${PATH}?limit=500&cursor=c`]);
  });

  it('never sends credentials a link carries: the service gets orgform\'s token alone', async () => {
    let at = '';
    const { seen, pages, asked } = await loopbackListing((c) => (c === '' ? `{"organisations":[${org(1)}],"next":"${at.replace('//', '//someone:secret@')}${PATH}?cursor=b"}` : c === 'b' ? `{"organisations":[${org(2)}]}` : undefined));
    at = running.at(-1)!.base;
    expect(await collect(pages())).toHaveLength(2);
    expect(asked()).toEqual([`${PATH}?limit=500`, `${PATH}?cursor=b`]);
    expect(seen.map((s) => s.authorization)).toEqual(['Bearer loopback-token', 'Bearer loopback-token']);
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
