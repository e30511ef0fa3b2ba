/**
 * What apply's workers take, in this order: the organisations the listing behind the writes has
 * just read (their reads age while they wait), then the organisations read by id, then the
 * set-active changes whose organisation's changes have ended (never while a page is on its way: the
 * organisations it brings come first).
 */
import type { ApplicableChange } from '../plan/types.js';
import type { OrganisationGroups } from './organisation-groups.js';
import type { Decided } from './organisation-steps.js';
import { RereadListing, type ListingReread, type RereadListingOptions } from './reread-listing.js';
import type { WorkSource } from './scheduler.js';

export type Work =
  /** Every change of one organisation but set-active; `reread`: what the listing read of it, when it was read from it. */
  | { kind: 'organisation'; group: number; reread: ListingReread | undefined }
  /** A set-active change; `decided`: how it ends without being sent, when its organisation's changes say so. */
  | { kind: 'set-active'; index: number; decided: Decided | undefined };

/** What ended work says: for an organisation, how a set-active change waiting for it must end without being sent. */
export type WorkEnd = Decided | undefined;

export class WorkQueue implements WorkSource<Work, WorkEnd> {
  readonly size: number;
  /** Groups read by id (or not at all), in plan order, and the next to hand out. */
  private readonly immediate: Uint32Array;
  private nextImmediate = 0;
  private readonly listing: RereadListing | undefined;
  /** The set-active changes waiting for their organisation's group, by organisation. */
  private readonly activeBySlug = new Map<string, number[]>();
  /** Set-active changes that may start. */
  private readonly ready: Work[] = [];

  /** `listing`: how to read billing again from a listing streamed behind the writes; without it, each is read by id. */
  constructor(
    changes: readonly ApplicableChange[],
    private readonly groups: OrganisationGroups,
    listing?: RereadListingOptions,
  ) {
    this.size = groups.slugs.length + groups.active.length;
    const { waiting, immediate } = splitByReread(changes, groups, listing !== undefined);
    this.immediate = immediate;
    this.listing = listing === undefined ? undefined : new RereadListing(waiting, listing);
    const grouped = new Set(groups.slugs);
    for (const { index, slug } of groups.active) {
      if (!grouped.has(slug)) this.ready.push({ kind: 'set-active', index, decided: undefined });
      else this.activeBySlug.set(slug, [...(this.activeBySlug.get(slug) ?? []), index]);
    }
  }

  next(): Work | undefined {
    const arrived = this.listing?.take();
    if (arrived !== undefined) return { kind: 'organisation', group: arrived.group, reread: arrived.reread };
    if (this.nextImmediate < this.immediate.length) return { kind: 'organisation', group: this.immediate[this.nextImmediate++]!, reread: undefined };
    if (this.listing?.busy) return undefined;
    return this.ready.shift();
  }

  ended(work: Work, decided: WorkEnd): void {
    if (work.kind !== 'organisation') return;
    for (const index of this.activeBySlug.get(this.groups.slugs[work.group]!) ?? []) this.ready.push({ kind: 'set-active', index, decided });
  }

  wantsRead(): boolean {
    return this.listing?.wantsRead() ?? false;
  }

  readAhead(): Promise<void> {
    return this.listing?.readPage() ?? Promise.resolve();
  }

  get reading(): boolean {
    return this.listing?.busy ?? false;
  }

  arrival(): Promise<void> {
    return this.listing?.arrival() ?? Promise.resolve();
  }

  close(): void {
    this.listing?.close();
  }
}

/**
 * With a listing, the groups whose billing change is read again from it (by organisation id; not
 * billing known only after an accept, which is read once joined); the others, in plan order.
 */
function splitByReread(changes: readonly ApplicableChange[], groups: OrganisationGroups, listing: boolean): { waiting: Map<string, number>; immediate: Uint32Array } {
  const { order, starts } = groups;
  const waiting = new Map<string, number>();
  const immediate: number[] = [];
  for (let group = 0; group + 1 < starts.length; group++) {
    let listed: string | undefined;
    for (let at = starts[group]!; listing && at < starts[group + 1]!; at++) {
      const change = changes[order[at]!]!;
      if (change.kind === 'billing' && change.knownAfter === undefined) listed = change.organisation.id;
    }
    // An id met twice (never in a valid plan) is read by id rather than left waiting for ever.
    if (listed !== undefined && !waiting.has(listed)) waiting.set(listed, group);
    else immediate.push(group);
  }
  return { waiting, immediate: Uint32Array.from(immediate) };
}
