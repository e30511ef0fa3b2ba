/**
 * What apply's workers take, in this order: the changes of the organisations already started (what
 * they were read from ages while they wait, and an organisation's changes run at once, each in a
 * worker of its own, once its accepts have ended); then the organisations the listing behind the
 * writes has just read; then those read by id; then the set-active changes whose organisation's
 * changes have ended (never while a page is on its way: the organisations it brings come first).
 */
import type { ApplicableChange } from '../plan/types.js';
import type { Outcome } from './events.js';
import type { SharedMembership } from './membership.js';
import { groupIndexes, type OrganisationGroups } from './organisation-groups.js';
import { OrganisationSteps, type Decided, type OrganisationChange } from './organisation-steps.js';
import { RereadListing, type ListingReread, type RereadListingOptions } from './reread-listing.js';
import type { WorkSource } from './scheduler.js';

/** An organisation whose changes have started: what was read of it, and where its changes stand. */
export interface OpenOrganisation {
  group: number;
  /** What the listing read of it, when it was read from it. */
  reread: ListingReread | undefined;
  steps: OrganisationSteps;
  /** Its membership, shared by its changes: set by the runner when the first of them asks. */
  membership: SharedMembership | undefined;
  /** Whether it is among the organisations asked for their next change. */
  queued: boolean;
}

export type Work =
  /** One change of an organisation (any but set-active); `decided`: how it ends without being sent, when its organisation's steps say so. */
  | { kind: 'change'; organisation: OpenOrganisation; index: number; decided: Decided | undefined }
  /** A set-active change; `decided`: as above, from its organisation's changes. */
  | { kind: 'set-active'; index: number; decided: Decided | undefined };

/** What ended work says: how the change ended. */
export type WorkEnd = Outcome;

export class WorkQueue implements WorkSource<Work, WorkEnd> {
  readonly size: number;
  /** Groups read by id (or not at all), in plan order, and the next to hand out. */
  private readonly immediate: Uint32Array;
  private nextImmediate = 0;
  private readonly listing: RereadListing | undefined;
  /** Organisations started that may have a change to hand out, oldest first. */
  private readonly open: OpenOrganisation[] = [];
  /** The set-active changes waiting for their organisation's group, by organisation. */
  private readonly activeBySlug = new Map<string, number[]>();
  /** Set-active changes that may start. */
  private readonly ready: Work[] = [];

  /** `listing`: how to read billing again from a listing streamed behind the writes; without it, each is read by id. */
  constructor(
    private readonly changes: ReadonlyArray<ApplicableChange | undefined>,
    private readonly groups: OrganisationGroups,
    listing?: RereadListingOptions,
  ) {
    this.size = changes.length;
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
    for (;;) {
      const change = this.nextOfOpen();
      if (change !== undefined) return change;
      const started = this.start();
      if (started === undefined) break;
      this.queue(started);
    }
    if (this.listing?.busy) return undefined;
    return this.ready.shift();
  }

  ended(work: Work, outcome: WorkEnd): void {
    if (work.kind !== 'change') return;
    const organisation = work.organisation;
    organisation.steps.ended(work.index, outcome);
    if (!organisation.steps.done) {
      // An accept that ended lets the next step go.
      this.queue(organisation);
      return;
    }
    const decided = organisation.steps.blocked();
    for (const index of this.activeBySlug.get(this.groups.slugs[organisation.group]!) ?? []) this.ready.push({ kind: 'set-active', index, decided });
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

  close(): void {
    this.listing?.close();
  }

  /** The next change of the organisations started, oldest first; those with none to hand out now leave the queue. */
  private nextOfOpen(): Work | undefined {
    while (this.open.length > 0) {
      const organisation = this.open[0]!;
      const step = organisation.steps.take();
      if (step !== undefined) return { kind: 'change', organisation, index: step.index, decided: step.decided };
      organisation.queued = false;
      this.open.shift();
    }
    return undefined;
  }

  private queue(organisation: OpenOrganisation): void {
    if (organisation.queued) return;
    organisation.queued = true;
    this.open.push(organisation);
  }

  /** The next organisation to start: one the listing has read, else one read by id. */
  private start(): OpenOrganisation | undefined {
    const arrived = this.listing?.take();
    if (arrived !== undefined) return this.organisation(arrived.group, arrived.reread);
    if (this.nextImmediate < this.immediate.length) return this.organisation(this.immediate[this.nextImmediate++]!, undefined);
    return undefined;
  }

  private organisation(group: number, reread: ListingReread | undefined): OpenOrganisation {
    const steps: OrganisationChange[] = [];
    for (const index of groupIndexes(this.groups, group)) {
      const { kind, address } = this.changes[index]!;
      steps.push({ index, kind, address });
    }
    return { group, reread, steps: new OrganisationSteps(steps), membership: undefined, queued: false };
  }
}

/**
 * With a listing, the groups whose billing change is read again from it (by organisation id; not
 * billing known only after an accept, which is read once joined); the others, in plan order.
 */
function splitByReread(changes: ReadonlyArray<ApplicableChange | undefined>, groups: OrganisationGroups, listing: boolean): { waiting: Map<string, number>; immediate: Uint32Array } {
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
