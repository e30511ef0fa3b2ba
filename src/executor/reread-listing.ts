/**
 * The organisations' billing read again after approval, as the writes go: one listing of your
 * organisations, streamed a page at a time just ahead of the writes built from it. A page is read
 * only when the organisations already read are running out (backpressure), so that reads neither
 * pile up nor age while they wait; each page's organisations are handed over with what the page
 * showed and when it was read. `chooseRereadMode` decides whether that listing is worth it, or
 * each organisation is better read by id just before its write. Why these sizes and marks:
 * docs/performance.md, "Reading billing again behind the writes".
 */
import type { ListingPage, OrganisationsClient } from '../api/client.js';
import type { Organisation } from '../api/types.js';
import { observeBilling } from '../api/observe-billing.js';
import type { BillingValues } from '../model/billing.js';

/**
 * How billing changes are read again after approval: by one listing streamed behind the writes, or
 * each organisation by id just before its write (cheaper for a few changes among many organisations).
 */
export type RereadMode = { kind: 'listing'; pageSize: number } | { kind: 'by-id' };

/**
 * What the listing read again of a billing change's organisation. Without one, the organisation is
 * read by id just before the write.
 */
export type ListingReread =
  /** Listed when `readAt`: its slug, and its billing when the listing shows it (null: it does not). */
  | { kind: 'listed'; slug: string; billing: BillingValues | null; readAt: number }
  /** The listing, read to its end, does not show it: it may have left your organisations. */
  | { kind: 'unlisted' }
  /** The listing failed before it reached the organisation. */
  | { kind: 'unreadable'; error: unknown };

/** The oldest read a billing write may be built from (ORGFORM_READ_MAX_AGE_MS); older, it is read again. */
export const DEFAULT_READ_MAX_AGE_MS = 5_000;

/** The least time a write may take to go out after its read, whatever ORGFORM_READ_MAX_AGE_MS says. */
const MIN_SEND_WINDOW_MS = 1_000;

/** How long after its read a billing write may still be sent: the read age bound, at least MIN_SEND_WINDOW_MS. */
export function sendWindowMs(maxReadAgeMs: number | undefined): number {
  return Math.max(maxReadAgeMs ?? DEFAULT_READ_MAX_AGE_MS, MIN_SEND_WINDOW_MS);
}

export interface RereadModeInputs {
  /** Billing changes to be read again (not those of organisations joined by this apply: they are read after the accept). */
  changes: number;
  /** Organisations the plan's listing held, or undefined when it read none whole. */
  listed: number | undefined;
  parallelism: number;
  /** The request rate the client holds itself to now, when known. */
  rps: number | undefined;
  maxReadAgeMs: number;
  /** The largest page to ask for (the client's page size). */
  maxPageSize: number;
}

/** The smallest page asked for: fewer organisations a page cost a request each for little freshness. */
const MIN_PAGE_SIZE = 50;

/**
 * By listing when its pages cost fewer requests than reading each organisation by id. Its page size
 * brings about two changes per worker a page: enough to keep every worker busy while the next is
 * read (it is asked for while up to twice the parallelism still wait), few enough that none waits
 * long, whatever rate the run meets later (the size is chosen once, often before any 429 says what
 * the rate is). Fewer when a known request rate would make a page's writes outlast a quarter of the
 * read age bound; larger where only a few of the listed organisations change. A quarter, not half:
 * the groups still waiting when the page is read, the writes held at the rate limiter and a 429's
 * pause all age the same reads.
 */
export function chooseRereadMode(inputs: RereadModeInputs): RereadMode {
  const { changes, listed, parallelism, rps, maxReadAgeMs, maxPageSize } = inputs;
  if (changes === 0 || listed === undefined || listed === 0 || maxReadAgeMs === 0) return { kind: 'by-id' };
  let perPage = 2 * parallelism;
  if (rps !== undefined && rps > 0) perPage = Math.min(perPage, Math.max(1, Math.floor((rps * maxReadAgeMs) / 4_000)));
  const density = Math.min(1, changes / listed);
  const pageSize = Math.max(Math.min(MIN_PAGE_SIZE, maxPageSize), Math.min(maxPageSize, Math.ceil(perPage / density)));
  const pages = Math.ceil(listed / pageSize);
  return pages < changes ? { kind: 'listing', pageSize } : { kind: 'by-id' };
}

/**
 * How few groups may be left waiting before the next page is read: twice the parallelism, enough to
 * keep every worker busy while the page comes, but at the rate the client holds itself to, no more
 * than the writes of the time a page takes to come (the fastest so far: the one read before the
 * writes, or with no write ahead of it at the rate limiter) plus half a second. The groups waiting
 * age with their page: at a limited rate, more of them would outlast the read age bound before their
 * turn. Half a second alone would leave the workers idle at every page of a slow service.
 *
 * And, once pages have been read, fewer still when the page to come brings many: those waiting and
 * the page's own (`pageYield`, as many as the pages so far brought) are written within half the send
 * window at that rate. The page size asked for is only a wish (a service may send 100 whatever is
 * asked, or fewer and fewer): what the pages brought is what counts, so the read ahead fits the
 * pages actually sent. Half, not all: a 429's pause and the cut rate after it age the same reads.
 */
export function lowWaterMark(parallelism: number, rps: number | undefined, pageMs = 0, pageYield = 0, windowMs = DEFAULT_READ_MAX_AGE_MS): number {
  const busy = 2 * parallelism;
  if (rps === undefined) return busy;
  const ahead = Math.ceil((rps * (500 + pageMs)) / 1000);
  const room = Math.floor((rps * windowMs) / 2000) - pageYield;
  return Math.max(1, Math.min(busy, ahead, room));
}

/** A group whose organisation the listing reached (or could not), with what it read. */
export interface Arrival {
  group: number;
  /** Undefined when apply was interrupted before the listing reached it: the group then does not start. */
  reread: ListingReread | undefined;
}

export interface RereadListingOptions {
  client: OrganisationsClient;
  pageSize: number;
  /**
   * The read age bound (ORGFORM_READ_MAX_AGE_MS): a group taken with less than a quarter of it left
   * is read again with its page, when the page holds others in the same case.
   */
  maxReadAgeMs: number;
  /**
   * The next page is read once fewer groups than this are waiting to run; asked before each read (it
   * follows the rate), with the fastest a page has come so far and the most groups one of the last
   * pages brought (both undefined before the first).
   */
  lowWater: (fastestPageMs: number | undefined, pageYield: number | undefined) => number;
  now: () => number;
}

/** How many of the last pages' yields predict the next one's. */
const YIELDS_KEPT = 3;

const UNLISTED: ListingReread = Object.freeze({ kind: 'unlisted' });

/** Taken places at the head of the queue before it is cut down to the groups still waiting. */
const COMPACT_AFTER = 1_024;

/** What a page shows of an organisation, read when its request was sent. */
function listedRead(org: Organisation, readAt: number): ListingReread {
  const billing = observeBilling(org.billing, false);
  return { kind: 'listed', slug: org.slug, billing: billing.known ? billing.values : null, readAt };
}

/** A listed read without its billing, which is then read by id just before the write (write-billing.ts). */
function byId(reread: ListingReread | undefined): ListingReread | undefined {
  return reread?.kind === 'listed' ? { ...reread, billing: null } : reread;
}

/**
 * The organisations a page shows, by id, but those it shows twice: which of the two would be the
 * billing the service holds? (The listing refuses such a page; read again, the group goes as it was.)
 */
function shownOnce(organisations: readonly Organisation[]): Map<string, Organisation> {
  const shown = new Map<string, Organisation>();
  const twice = new Set<string>();
  for (const org of organisations) {
    if (shown.has(org.id)) twice.add(org.id);
    shown.set(org.id, org);
  }
  for (const id of twice) shown.delete(id);
  return shown;
}

/** A group read, with where it was read: its organisation's id and page, and whether that page was read again for it. */
interface Entry extends Arrival {
  id?: string;
  page?: ListingPage;
  again?: boolean;
}

/**
 * The listing behind the writes. A worker calls `readPage` when `wantsRead` says so (a read holds
 * one of the `parallelism` places, as a write does), `take`s the groups whose organisation has been
 * read, and may wait while a page is on its way (`busy`): more groups may come with it.
 */
export class RereadListing {
  /** The groups read, from `head` on; those before it are taken, their places emptied. */
  private queue: Array<Entry | undefined> = [];
  private head = 0;
  /** Groups taken too old to write from, oldest first, to be read again with their page. */
  private stale: Entry[] = [];
  private pages: AsyncIterator<ListingPage> | undefined;
  private reading = false;
  private ended = false;
  private closing = false;
  /** The least time a page took from being asked for to arriving. */
  private fastestPageMs: number | undefined;
  /** How many groups each of the last pages brought, the latest last. */
  private readonly yields: number[] = [];

  /** `waiting`: the group of each organisation (by id) whose billing is read from the listing; taken over. */
  constructor(
    private readonly waiting: Map<string, number>,
    private readonly options: RereadListingOptions,
  ) {
    if (waiting.size === 0) this.ended = true;
  }

  /** Whether the caller should read a page now: none is on its way, and groups wait to be read again, or the groups read are running out. */
  wantsRead(): boolean {
    if (this.reading) return false;
    return this.stale.length > 0 || (!this.ended && this.queue.length - this.head < this.options.lowWater(this.fastestPageMs, this.pageYield()));
  }

  /** Whether a page is on its way. */
  get busy(): boolean {
    return this.reading;
  }

  /**
   * The next group read, oldest read first. One whose read is too old to write from soon (the rate
   * fell, or a 429 paused the run while its page waited) is set aside, to be read again with its
   * page: one request for them all rather than a read by id each.
   */
  take(): Arrival | undefined {
    for (;;) {
      if (this.head >= this.queue.length) return undefined;
      const entry = this.queue[this.head]!;
      // Let go at once: the next page comes while groups still wait, so the queue may never run
      // empty, and its taken entries (an observation each) were held to the end of the apply,
      // about 25 MB at 100,000 changes.
      this.queue[this.head] = undefined;
      this.head += 1;
      if (this.head === this.queue.length) {
        this.queue.length = 0;
        this.head = 0;
      } else if (this.head >= COMPACT_AFTER && this.head * 2 >= this.queue.length) {
        this.queue = this.queue.slice(this.head);
        this.head = 0;
      }
      if (this.ageing(entry)) this.stale.push(entry);
      else return { group: entry.group, reread: entry.reread };
    }
  }

  /**
   * Listed, with less than a quarter of the read age bound left, on a page that can be read again,
   * and not read again already; and pages come within a quarter of the bound (one slower to come
   * would bring reads as old: each is read by id instead).
   */
  private ageing(entry: Entry): boolean {
    const { reread } = entry;
    const quarter = this.options.maxReadAgeMs / 4;
    if (entry.again === true || entry.page?.again === undefined || reread?.kind !== 'listed' || reread.billing === null) return false;
    return (this.fastestPageMs ?? Infinity) < quarter && this.options.now() - reread.readAt > 3 * quarter;
  }

  /**
   * How many groups the next page may bring: the most one of the last pages brought (a page's yield
   * varies with where the changes fall; pages that shrink lower it within a few pages).
   */
  private pageYield(): number | undefined {
    return this.yields.length === 0 ? undefined : Math.max(...this.yields);
  }

  /** Reads one page and hands over the groups of the organisations on it. Never throws: a failure ends the listing. */
  async readPage(): Promise<void> {
    if (!this.wantsRead()) return;
    this.reading = true;
    if (this.stale.length > 0) return this.readAgain();
    try {
      this.pages ??= this.options.client.listOrganisationPages({ pageSize: this.options.pageSize, lookup: true })[Symbol.asyncIterator]();
      const askedAt = this.options.now();
      const page = await this.pages.next();
      if (page.done === true) this.end(UNLISTED);
      else this.handOver(page.value, askedAt);
    } catch (error) {
      this.end({ kind: 'unreadable', error });
    } finally {
      this.reading = false;
      if (this.closing) this.stop();
    }
  }

  /** Reads nothing more (an interrupt): the groups not reached yet are handed over without a read, and do not start. */
  close(): void {
    if (this.reading) this.closing = true;
    else this.stop();
  }

  /**
   * Reads again the page of the oldest groups set aside, and hands them over with what it shows now.
   * Alone on its page, a group is read by id before its write: the page would cost as much. Those
   * the page no longer shows (or shows twice), or all when it fails, are read by id too: set aside
   * as too old to write from, a group is never written from its old read (still within the bound,
   * it would write back what was renewed since).
   */
  private async readAgain(): Promise<void> {
    const page = this.stale[0]!.page!;
    const batch = this.stale.filter((e) => e.page === page);
    this.stale = this.stale.filter((e) => e.page !== page);
    try {
      const fresh = batch.length > 1 ? await page.again!() : undefined;
      const shown = shownOnce(fresh?.organisations ?? []);
      for (const entry of batch) {
        const org = shown.get(entry.id!);
        this.queue.push({ ...entry, reread: org === undefined ? byId(entry.reread) : listedRead(org, fresh!.sentAt), again: true });
      }
    } catch {
      for (const entry of batch) this.queue.push({ ...entry, reread: byId(entry.reread), again: true });
    } finally {
      this.reading = false;
      if (this.closing) this.stop();
    }
  }

  /** The interrupt: nothing more is read, and what waits for a read (set aside included) does not start. */
  private stop(): void {
    this.end(undefined);
    for (const entry of this.stale) this.queue.push({ group: entry.group, reread: undefined });
    this.stale = [];
  }

  private handOver(page: ListingPage, askedAt: number): void {
    this.fastestPageMs = Math.min(this.fastestPageMs ?? Infinity, Math.max(0, this.options.now() - askedAt));
    // As old as its sending: the service may have taken it then and answered long after, and what
    // was renewed in between it does not show. (A pause for a 429 or a retry before the attempt
    // that was answered does not age it.)
    const readAt = page.sentAt;
    const before = this.queue.length;
    for (const org of page.organisations) {
      const group = this.waiting.get(org.id);
      if (group === undefined) continue;
      this.waiting.delete(org.id);
      this.queue.push({ group, reread: listedRead(org, readAt), id: org.id, page });
    }
    this.yields.push(this.queue.length - before);
    if (this.yields.length > YIELDS_KEPT) this.yields.shift();
    // Every organisation found: the rest of the listing is not needed.
    if (this.waiting.size === 0) this.end(undefined);
  }

  /** No page is read after this: what still waits is handed over with `reread`. */
  private end(reread: ListingReread | undefined): void {
    if (this.ended) return;
    this.ended = true;
    for (const group of this.waiting.values()) this.queue.push({ group, reread });
    this.waiting.clear();
    const pages = this.pages;
    this.pages = undefined;
    // Lets the listing's generator finish; nothing of it is read any more.
    if (pages?.return !== undefined) void pages.return().catch(() => undefined);
  }
}
