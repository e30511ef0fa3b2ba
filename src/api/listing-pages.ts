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
 * taken for a whole one.
 */
import type { Redactor } from '../redact.js';
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
  readPage(url: URL, number: number, target: string): Promise<ListingPage>;
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
  /** Each organisation listed so far, with the page it came on. */
  private readonly ids = new Map<string, number>();
  /** Each page asked for after the first, by address, with its number. */
  private readonly addresses = new Map<string, number>();
  /** The organisation heading the first page of a listing headed by the active organisation, until it is listed again. */
  private head: string | undefined;

  /**
   * `headed`: an unfiltered listing, whose first item is the active organisation (interface §4), which
   * a service may put there besides its place in the order: seen there once more, it is left out.
   */
  constructor(private readonly headed = false) {}

  /** A page has been read (before its `next` is looked at). */
  read(listing: PageSeen): void {
    this.page += 1;
    this.emptyInARow = listing.organisations.length === 0 ? this.emptyInARow + 1 : 0;
    this.total = typeof listing.totalCount === 'number' && listing.totalCount >= 0 ? listing.totalCount : undefined;
    if (this.total !== undefined) this.least = Math.min(this.least ?? Infinity, this.total);
  }

  /** The page just read ends the listing (no `next`), its organisations recorded: why the listing is not whole, if it is not. */
  end(): string | undefined {
    if (this.least === undefined || this.organisations >= this.least) return undefined;
    return this.where(`page ${this.page} ends the listing (it has no "next") after ${this.organisations} organisations, though every page's totalCount counted at least ${this.least}: pages are missing`);
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
   */
  record<T extends { id: string }>(organisations: T[]): { kept: T[] } | { stop: string } {
    if (this.headed && this.page === 1 && organisations.length > 0) this.head = organisations[0]!.id;
    let kept = organisations;
    for (const org of organisations) {
      const earlier = this.ids.get(org.id);
      if (earlier !== undefined && org.id === this.head) {
        this.head = undefined;
        kept = kept.filter((o) => o !== org);
        continue;
      }
      if (earlier === this.page) return { stop: this.where(`organisation ${JSON.stringify(org.id)} is listed twice on page ${this.page}`) };
      if (earlier !== undefined) {
        return {
          stop: this.where(
            `organisation ${JSON.stringify(org.id)} is listed again on page ${this.page}, after page ${earlier}: the "next" links lead back over pages already read (a cycle), or the listing moved while it was read (organisations added or removed before the place it had reached)`,
          ),
        };
      }
      this.ids.set(org.id, this.page);
    }
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
}

/** Every page from `first` on, whole, or failing where the listing stopped. */
export async function* listPages(reader: PageReader, first: URL, { target, headed, readAhead }: ListingRead): AsyncIterable<ListingPage> {
  const request = { operation: 'getOrganisations', target } as const;
  const guard = new ListingGuard(headed);
  let url = first;
  let ahead: Promise<ListingPage> | undefined;
  for (let number = 1; ; number += 1) {
    const listing = await (ahead ?? reader.readPage(url, number, target));
    ahead = undefined;
    // What comes after this page, decided before the caller sees it (so that the next page can be
    // on its way meanwhile), acted on after, as if decided then.
    guard.read(listing);
    const next = resolveNextPage(listing.next, url);
    const after = next.kind === 'url' ? guard.follow(next.url) : next;
    if (readAhead && after.kind === 'url') {
      ahead = reader.readPage(after.url, number + 1, target);
      // Its failure is the caller's when it asks for that page; until then it is not unhandled.
      ahead.catch(() => undefined);
    }
    // Each organisation checked once the next page is on its way: the checks are not on the chain of
    // pages, which can only be read one after another.
    listing.organisations = checkAll(listing.organisations, request, reader.redactor);
    // An organisation listed again: the links lead back over pages already read.
    const recorded = guard.record(listing.organisations);
    if ('stop' in recorded) throw badShape(request, recorded.stop, reader.redactor);
    listing.organisations = recorded.kept;
    const address = url;
    listing.again = () => readAgain(reader, address, number, target);
    yield listing;
    if (after.kind === 'end') {
      const short = guard.end();
      if (short !== undefined) throw badShape(request, short, reader.redactor);
      return;
    }
    if (after.kind === 'refused') throw badShape(request, after.reason, reader.redactor);
    url = after.url;
  }
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
