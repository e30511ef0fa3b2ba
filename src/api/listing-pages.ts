/**
 * The listing, page after page as its `next` links lead, whole or stopped saying where: the pages
 * its `next` links lead to, an empty page's included, until a page has none. It stops with the reason when the links
 * lead back over pages already read (an organisation listed again, or a link to a page read before:
 * a service that encrypts its cursors may hand out a fresh one for the first page; the active
 * organisation heading an unfiltered listing may be listed once more, at its place), when pages keep
 * coming empty, or when an empty page points on though the listing already holds every organisation
 * its `totalCount` counts; and a listing that ends holding fewer organisations than the least
 * `totalCount` its pages gave is not whole either (organisations that come while it is read only
 * raise the count, those that go lower it on the pages after). A listing stopped part way is never
 * taken for a whole one. A caller that only looks organisations up in it (`lookup`) gets a listing
 * that moved while it was read (an offset-paged service, an organisation added ahead) with the
 * organisations it listed again left out, rather than refused.
 */
import { channel } from 'node:diagnostics_channel';
import type { Redactor } from '../redact.js';
import { ListedIds } from './listed-ids.js';
import { resolveNextPage, type NextPage } from './next-page-url.js';
import { badShape, checkOrganisation } from './service-answer.js';
import type { Organisation, OrganisationList } from './types.js';

/**
 * A page of the listing, and when the request that brought it was sent (the client's clock, the
 * attempt that was answered): the page shows the service as it was at that moment or later, so a
 * read's age counts from then, however long the answer took or waited (read ahead) to be used.
 */
export interface ListingPage extends OrganisationList {
  sentAt: number;
  /**
   * Reads the same page again (its address as followed, its organisations checked): for a caller
   * whose reads of it aged before their use, one request instead of one read by id each. Not a step
   * of the chain: nothing is followed from it. The page may have moved (organisations added or
   * removed before it); the caller looks its organisations up by id.
   */
  again?: () => Promise<ListingPage>;
}

/** Where the pages come from: the client, which reads one page (an object with an `organisations` array, checked). */
export interface PageReader {
  readonly redactor: Redactor;
  readPage(url: URL, number: number, target: string, hooks?: PageHooks): Promise<ListingPage>;
}

/** What a page's reader tells the listing as the page comes. */
export interface PageHooks {
  /** The request was handed to undici (past the gate), each attempt. */
  onSent?: () => void;
  /** The answer's text, a success's, before it is parsed; the page is parsed once what it returns settles. */
  onText?: (text: string) => Promise<void> | undefined;
  /** Aborted when the listing will not use the page: its read is let go, wherever it is. */
  letGo?: AbortSignal;
}

/**
 * Where each page of a listing is (its number, and the step it reached), for whoever subscribes:
 * the bench's per-page timeline (scripts/bench/probe.mjs), beside undici's own channels for when
 * the request went out and its answer came. Nothing is published when nobody listens.
 */
export const listingTimeline = channel('orgform:listing-page');

/** A step of a page: read (answer parsed, shape checked), next (the next page decided, and sent when read ahead), checked (its organisations checked), used (the caller came back for more). */
export type ListingStep = 'read' | 'next' | 'checked' | 'used';

function mark(page: number, step: ListingStep): void {
  if (listingTimeline.hasSubscribers) listingTimeline.publish({ page, step });
}

/** Empty pages in a row (each with a `next`) before the listing is taken for one without end. */
export const MAX_EMPTY_PAGES_IN_A_ROW = 100;
/** Pages a listing may have before orgform suspects a loop the other checks did not catch. */
export const MAX_PAGES = 100_000;

interface PageSeen {
  organisations: readonly unknown[];
  totalCount?: unknown;
}

class ListingGuard {
  /** The page last read (1 for the first). */
  private page = 0;
  private organisations = 0;
  private emptyInARow = 0;
  /** The totalCount of the page last read, when it gave one. */
  private total: number | undefined;
  /** The least totalCount a page gave. */
  private least: number | undefined;
  /** Each organisation listed on the pages before this one, with the page it came on. */
  private readonly ids = new ListedIds();
  /** Each page asked for after the first, by address, with its number. */
  private readonly addresses = new Map<string, number>();
  /** The organisation heading the first page of a listing headed by the active organisation, until it is listed again. */
  private head: string | undefined;

  /**
   * `headed`: an unfiltered listing, whose first item is the active organisation (interface §4), which
   * a service may put there besides its place in the order: seen there once more, it is left out.
   * `first`: the first page's address (read before any other).
   * `lookup`: see ListingRead.lookup.
   */
  constructor(
    private readonly headed = false,
    private readonly first?: URL,
    private readonly lookup = false,
  ) {}

  /** A page has been read (before its `next` is looked at). */
  read(listing: PageSeen): void {
    this.page += 1;
    this.emptyInARow = listing.organisations.length === 0 ? this.emptyInARow + 1 : 0;
    this.total = typeof listing.totalCount === 'number' && listing.totalCount >= 0 ? listing.totalCount : undefined;
    if (this.total !== undefined) this.least = Math.min(this.least ?? Infinity, this.total);
  }

  /** The page just read ends the listing (no `next`), its organisations recorded: why the listing is not whole, if it is not. */
  end(): string | undefined {
    // Looked up in, a listing that moved may come short: what it did not show, the caller asks after.
    if (this.lookup || this.least === undefined || this.organisations >= this.least) return undefined;
    return this.where(`page ${this.page} ends the listing (it has no "next") after ${this.organisations} organisations, though every page's totalCount counted at least ${this.least}: pages are missing`);
  }

  /**
   * Whether the page after the one being read (not read here yet) may be asked for before that one
   * is parsed, at `next`: not when it was read before. `follow` decides, once the page is read.
   */
  mayAskEarly(next: URL): boolean {
    const address = next.toString();
    return this.page + 1 < MAX_PAGES && !this.addresses.has(address) && address !== this.first?.toString();
  }

  /** Whether to follow the `next` of the page just read: the page to read, or why the listing stops here. */
  follow(next: URL): NextPage {
    if (this.emptyInARow > 0 && this.total !== undefined && this.organisations >= this.total) {
      return this.stop(`page ${this.page} is empty and its "next" points to another page, though the listing already holds the ${this.total} organisations its totalCount counts: more pages than totalCount allows`);
    }
    if (this.emptyInARow >= MAX_EMPTY_PAGES_IN_A_ROW) {
      return this.stop(`pages ${this.page - MAX_EMPTY_PAGES_IN_A_ROW + 1} to ${this.page} all came empty, each with a "next" link, so the listing would never end`);
    }
    if (this.page >= MAX_PAGES) return this.stop(`it has more than ${MAX_PAGES} pages, so the links may lead round in a circle`);
    const address = next.toString();
    const earlier = this.addresses.get(address);
    if (earlier !== undefined) return this.stop(`the "next" link of page ${this.page} leads back to page ${earlier}, already read (a cycle), so the listing would never end`);
    this.addresses.set(address, this.page + 1);
    return { kind: 'url', url: next };
  }

  /**
   * Notes the organisations of the page just read (after `follow`): those to take (the active
   * organisation's second listing left out), or why the listing stops, when one was listed before.
   * Looked up in, one listed on an earlier page is left out (the listing moved: an organisation added
   * ahead of an offset), unless every one of a page that links on was: the links lead round.
   */
  record<T extends { id: string }>(organisations: T[], linksOn: boolean): { kept: T[] } | { stop: string } {
    if (this.headed && this.page === 1 && organisations.length > 0) this.head = organisations[0]!.id;
    const left = new Set<T>();
    let again: { id: string; page: number } | undefined;
    const onThisPage = new Set<string>();
    for (const org of organisations) {
      const earlier = onThisPage.has(org.id) ? this.page : this.ids.pageOf(org.id);
      if (earlier !== undefined && org.id === this.head) {
        this.head = undefined;
        left.add(org);
        continue;
      }
      if (earlier === this.page) return { stop: this.where(`organisation ${JSON.stringify(org.id)} is listed twice on page ${this.page}`) };
      if (earlier !== undefined && this.lookup) {
        again ??= { id: org.id, page: earlier };
        left.add(org);
        continue;
      }
      if (earlier !== undefined) {
        return {
          stop: this.where(
            `organisation ${JSON.stringify(org.id)} is listed again on page ${this.page}, after page ${earlier}: the "next" links lead back over pages already read (a cycle), or the listing moved while it was read (organisations added or removed before the place it had reached)`,
          ),
        };
      }
      onThisPage.add(org.id);
    }
    if (again !== undefined && linksOn && onThisPage.size === 0) {
      return {
        stop: this.where(`organisation ${JSON.stringify(again.id)} is listed again on page ${this.page}, after page ${again.page}: so is every organisation on the page, and it links on, so the "next" links lead back over pages already read (a cycle)`),
      };
    }
    const kept = left.size === 0 ? organisations : organisations.filter((o) => !left.has(o));
    this.ids.addPage([...onThisPage]);
    this.organisations += kept.length;
    return { kept };
  }

  private stop(why: string): NextPage {
    return { kind: 'refused', reason: this.where(why) };
  }

  /** The reason, and where the listing stopped: no plan or export is made from the pages read. */
  private where(why: string): string {
    return `${why}. The listing stopped at page ${this.page}, after ${this.organisations} organisations; nothing is made from a partial listing. Run again; if it happens again, the service's pagination is at fault`;
  }
}

/** How a listing is read: what messages call it, and whether it is filtered and read ahead. */
export interface ListingRead {
  /** What messages call the listing: `(all pages)`, `(filter "acme")`. */
  target: string;
  /** Unfiltered, its first item is the active organisation, which may be listed once more at its place. */
  headed: boolean;
  /**
   * The next page is asked for as soon as this one is read, while the caller works through it: for
   * a caller that reads every page (the plan's listing), whose pages are a chain of requests.
   */
  readAhead: boolean;
  /**
   * The caller looks its organisations up in the listing, needing neither all of them nor each
   * once (apply's listing behind the writes): an organisation listed again (an offset-paged listing
   * that moved) is left out, not refused, and a listing that ends short is not refused.
   */
  lookup?: boolean;
}

/** Every page from `first` on, whole, or failing where the listing stopped. */
export async function* listPages(reader: PageReader, first: URL, { target, headed, readAhead, lookup = false }: ListingRead): AsyncIterable<ListingPage> {
  const request = { operation: 'getOrganisations', target } as const;
  const guard = new ListingGuard(headed, first, lookup);
  const early = readAhead ? new EarlyNext(reader, guard, target) : undefined;
  let url = first;
  let ahead: ReadAhead | undefined;
  try {
    for (let number = 1; ; number += 1) {
      const read = ahead ?? readAheadOf(reader, url, number, target, early);
      early?.waitFor(read);
      const listing = await read.page;
      mark(number, 'read');
      // What comes after this page, decided before the caller sees it (so that the next page can be
      // on its way meanwhile), acted on after, as if decided then.
      guard.read(listing);
      const next = resolveNextPage(listing.next, url);
      const after = next.kind === 'url' ? guard.follow(next.url) : next;
      ahead = undefined;
      if (readAhead && after.kind === 'url') {
        ahead = early?.take(number + 1, after.url) ?? readAheadOf(reader, after.url, number + 1, target, early);
        mark(number, 'next');
        await ahead.onItsWay;
      } else {
        early?.take(number + 1, undefined);
        mark(number, 'next');
      }
      // Each organisation checked once the next page is on its way: the checks are not on the chain of
      // pages, which can only be read one after another.
      listing.organisations = checkAll(listing.organisations, request, reader.redactor);
      // An organisation listed again: the links lead back over pages already read.
      const recorded = guard.record(listing.organisations, after.kind === 'url');
      if ('stop' in recorded) throw badShape(request, recorded.stop, reader.redactor);
      listing.organisations = recorded.kept;
      mark(number, 'checked');
      const address = url;
      listing.again = () => readAgain(reader, address, number, target);
      yield listing;
      mark(number, 'used');
      if (after.kind === 'end') {
        const short = guard.end();
        if (short !== undefined) throw badShape(request, short, reader.redactor);
        return;
      }
      if (after.kind === 'refused') throw badShape(request, after.reason, reader.redactor);
      url = after.url;
    }
  } finally {
    // Stopped (refused, failed, or the caller took no more): a page asked for and not taken is let
    // go, not left on the wire for the run's end to wait for.
    ahead?.letGo();
    early?.take(0, undefined);
  }
}

/**
 * The next page asked for from the cursor a page's text gives, before the page is parsed (parsing
 * a page takes about as long as the rest of the client's part of the chain of pages). Only a guess:
 * it is taken only where the page, parsed and checked, leads to the same address (and the guard
 * follows it); otherwise its answer is let go unread, and the page the parsed page leads to is
 * asked for as ever. Asked only on the same origin and path (resolveNextPage), never for a page
 * read before, and only for the page the listing waits for, one page ahead at most.
 */
class EarlyNext {
  /** The read the listing waits for (the one whose text may give the next page). */
  private awaited: ReadAhead | undefined;
  private early: { number: number; address: string; read: ReadAhead } | undefined;

  constructor(
    private readonly reader: PageReader,
    private readonly guard: ListingGuard,
    private readonly target: string,
  ) {}

  /** `read` is now the one the listing waits for. */
  waitFor(read: ReadAhead): void {
    this.awaited = read;
  }

  /**
   * The text of page `number` (at `url`) has come, by `read`: what to wait for before it is parsed
   * (the next page on the wire: undici writes it only once the event loop gets to it).
   */
  seen(read: ReadAhead, text: string, number: number, url: URL): Promise<void> | undefined {
    if (read !== this.awaited || this.early !== undefined) return undefined;
    const cursor = cursorIn(text);
    if (cursor === undefined) return undefined;
    const next = resolveNextPage(cursor, url);
    if (next.kind !== 'url' || !this.guard.mayAskEarly(next.url)) return undefined;
    const early = readAheadOf(this.reader, next.url, number + 1, this.target, this);
    this.early = { number: number + 1, address: next.url.toString(), read: early };
    mark(number, 'next');
    return early.onItsWay;
  }

  /** The read of page `number` at `url` if it was asked for early; one asked for another page, or another address, is let go. */
  take(number: number, url: URL | undefined): ReadAhead | undefined {
    const early = this.early;
    this.early = undefined;
    if (early === undefined) return undefined;
    if (early.number === number && url !== undefined && early.address === url.toString()) return early.read;
    early.read.letGo();
    return undefined;
  }
}

/**
 * The `next` a page's text gives, found without parsing it: the string after its last `"next"`
 * key, when it is a plain one (no escapes). A guess, which the page parsed confirms or not.
 */
export function cursorIn(text: string): string | undefined {
  const key = text.lastIndexOf('"next"');
  if (key < 0) return undefined;
  let at = skipSpace(text, key + 6);
  if (text.charCodeAt(at) !== 0x3a) return undefined;
  at = skipSpace(text, at + 1);
  if (text.charCodeAt(at) !== 0x22) return undefined;
  const end = text.indexOf('"', at + 1);
  if (end <= at + 1) return undefined;
  const value = text.slice(at + 1, end);
  return value.includes('\\') ? undefined : value;
}

function skipSpace(text: string, at: number): number {
  let code = text.charCodeAt(at);
  while (code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09) code = text.charCodeAt(++at);
  return at;
}

interface ReadAhead {
  page: Promise<ListingPage>;
  /** Settles once the request is on the wire (or has failed, or waits at the gate): see readAheadOf. */
  onItsWay: Promise<void>;
  /** The listing will not use it: its request is let go (its answer, a failure or a 429 included, is nobody's). */
  letGo(): void;
}

/**
 * A page, asked for at once (read ahead: while the page before it is still to be used). undici writes a request on a kept-alive connection only in the
 * event loop's check phase (it first lets the connection show whether the server closed it), after
 * all that runs before: were this page checked and handed to the caller first, the caller's work on
 * it (planning it) would lie on the chain of pages. So `onItsWay` settles on the turn after undici
 * has been handed the request, which is after it has written it; or when the read fails. A request
 * held at the gate (a rate limit) holds this page as long: the caller's work on a page is short
 * beside the answer it then waits for, so the chain loses nothing by it.
 */
function readAheadOf(reader: PageReader, url: URL, number: number, target: string, early?: EarlyNext): ReadAhead {
  let handed!: () => void;
  const sent = new Promise<void>((resolve) => (handed = resolve));
  const read = {} as ReadAhead;
  const onText = early === undefined ? undefined : (text: string) => early.seen(read, text, number, url);
  const unwanted = new AbortController();
  read.letGo = () => unwanted.abort();
  read.page = reader.readPage(url, number, target, { onSent: handed, onText, letGo: unwanted.signal });
  // Its failure is the caller's when it asks for that page; until then it is not unhandled.
  read.page.catch(() => undefined);
  const settled = read.page.then(
    () => undefined,
    () => undefined,
  );
  read.onItsWay = Promise.race([sent.then(afterCheckPhase), settled]);
  return read;
}

/** Resolves on the event loop's next check phase, after the callbacks already queued for it (undici's write). */
function afterCheckPhase(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

async function readAgain(reader: PageReader, url: URL, number: number, target: string): Promise<ListingPage> {
  const page = await reader.readPage(url, number, target);
  page.organisations = checkAll(page.organisations, { operation: 'getOrganisations', target }, reader.redactor);
  return page;
}

function checkAll(organisations: readonly unknown[], request: { operation: 'getOrganisations'; target: string }, redactor: Redactor): Organisation[] {
  const checked = new Array<Organisation>(organisations.length);
  for (let i = 0; i < organisations.length; i += 1) checked[i] = checkOrganisation(organisations[i], request, redactor);
  return checked;
}
