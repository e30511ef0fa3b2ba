/**
 * The emulator's state and the logic of the eight operations, free of HTTP: each operation takes
 * the caller's token and returns data or a typed failure. Every lookup is a Map; listing reads a
 * per-user list sorted once and kept until that user's memberships or the organisations change.
 */
import type { Billing, Organisation, SlugAvailability } from '../api/types.js';
import { createCursorCodec, type CursorCodec } from './cursor-codec.js';
import type { EmulatorData } from './data.js';
import { fail, organisationNotFound, succeed, type StoreResult } from './failure.js';
import { paginateOrganisations } from './paginate-organisations.js';
import { parseBillingUpdate } from './parse-billing-update.js';
import { checkSlug } from './slug-rules.js';
import { UserListing } from './user-listing.js';

export interface EmulatorUser {
  token: string;
  email: string;
  memberships: Set<string>;
  active?: string;
}

export interface EmulatorInvitation {
  id: string;
  organisationId: string;
  email: string;
  pending: boolean;
}

export interface EmulatorChannel {
  id: string;
  organisationId: string;
}

export interface ListQuery {
  filter?: string;
  limit: number;
  cursor?: string;
}

/** A page with its `next`/`prev` as cursors; routes turn them into the configured link form. */
export interface OrganisationPage {
  organisations: Organisation[];
  totalCount: number;
  next?: string;
  prev?: string;
}

const unauthenticated = () => fail(401, 'unauthenticated', 'A valid bearer token is required.');

export class EmulatorStore {
  readonly users = new Map<string, EmulatorUser>();
  readonly organisations = new Map<string, Organisation>();
  readonly invitations = new Map<string, EmulatorInvitation>();
  readonly channels = new Map<string, EmulatorChannel>();
  private readonly slugs = new Map<string, string>();
  private readonly listings = new Map<string, UserListing>();
  private readonly cursors: CursorCodec = createCursorCodec();

  constructor(data?: EmulatorData) {
    if (data) this.load(data);
  }

  /** Replaces the whole state with a copy of `data`. */
  load(data: EmulatorData): void {
    this.users.clear();
    this.organisations.clear();
    this.invitations.clear();
    this.channels.clear();
    this.slugs.clear();
    this.listings.clear();
    for (const org of data.organisations) this.putOrganisation(org);
    for (const user of data.users) this.putUser(user);
    for (const inv of data.invitations ?? []) this.invitations.set(inv.id, { ...inv, pending: inv.pending !== false });
    for (const ch of data.channels ?? []) this.channels.set(ch.id, { ...ch });
  }

  /** A deep copy of the state in the seed format. */
  dump(): EmulatorData {
    return structuredClone({
      users: [...this.users.values()].map((u) => ({
        token: u.token,
        email: u.email,
        memberships: [...u.memberships],
        ...(u.active === undefined ? {} : { active: u.active }),
      })),
      organisations: [...this.organisations.values()],
      invitations: [...this.invitations.values()].map((i) => ({
        id: i.id,
        organisationId: i.organisationId,
        email: i.email,
        ...(i.pending ? {} : { pending: false }),
      })),
      channels: [...this.channels.values()],
    });
  }

  // ---- direct manipulation, for tests --------------------------------------------------------

  /** Adds or replaces an organisation (a copy of it). */
  putOrganisation(org: Organisation): Organisation {
    const previous = this.organisations.get(org.id);
    if (previous && this.slugs.get(previous.slug.toLowerCase()) === previous.id) this.slugs.delete(previous.slug.toLowerCase());
    const copy = structuredClone(org);
    this.organisations.set(copy.id, copy);
    this.slugs.set(copy.slug.toLowerCase(), copy.id);
    this.listings.clear();
    return copy;
  }

  removeOrganisation(id: string): boolean {
    const org = this.organisations.get(id);
    if (!org) return false;
    this.organisations.delete(id);
    if (this.slugs.get(org.slug.toLowerCase()) === id) this.slugs.delete(org.slug.toLowerCase());
    this.listings.clear();
    return true;
  }

  /** Adds or replaces a user (a copy of it). */
  putUser(user: { token: string; email: string; memberships: Iterable<string>; active?: string }): EmulatorUser {
    const record: EmulatorUser = { token: user.token, email: user.email, memberships: new Set(user.memberships) };
    if (user.active !== undefined) record.active = user.active;
    this.users.set(record.token, record);
    this.listings.delete(record.token);
    return record;
  }

  addMembership(token: string, organisationId: string): void {
    const user = this.users.get(token);
    if (!user) throw new Error('addMembership: no such user');
    user.memberships.add(organisationId);
    this.listings.delete(token);
  }

  putInvitation(inv: { id: string; organisationId: string; email: string; pending?: boolean }): void {
    this.invitations.set(inv.id, { ...inv, pending: inv.pending !== false });
  }

  putChannel(ch: EmulatorChannel): void {
    this.channels.set(ch.id, { ...ch });
  }

  isSlugTaken(slug: string): boolean {
    return this.slugs.has(slug.toLowerCase());
  }

  // ---- the eight operations ------------------------------------------------------------------

  listOrganisations(token: string, query: ListQuery): StoreResult<OrganisationPage> {
    const user = this.users.get(token);
    if (!user) return unauthenticated();
    let filter = query.filter ? query.filter.toLowerCase() : null;
    let cursor = null;
    if (query.cursor !== undefined) {
      cursor = this.cursors.decode(query.cursor) ?? null;
      if (!cursor) return fail(400, 'invalid_request', 'The cursor was not issued by this service.', 'cursor');
      if (filter !== null && filter !== cursor.filter) {
        return fail(400, 'invalid_request', 'The filter differs from the one the cursor was issued for.', 'filter');
      }
      filter = cursor.filter;
    }
    const page = paginateOrganisations({
      list: this.listingOf(user).matching(filter),
      active: user.active === undefined ? undefined : this.memberOrganisation(user, user.active),
      filter,
      limit: query.limit,
      cursor,
      findMember: (id) => this.memberOrganisation(user, id),
    });
    return succeed({
      organisations: page.organisations,
      totalCount: page.totalCount,
      ...(page.next ? { next: this.cursors.encode(page.next) } : {}),
      ...(page.prev ? { prev: this.cursors.encode(page.prev) } : {}),
    });
  }

  getOrganisation(token: string, id: string): StoreResult<Organisation> {
    const user = this.users.get(token);
    if (!user) return unauthenticated();
    const org = this.memberOrganisation(user, id);
    return org ? succeed(org) : organisationNotFound(id);
  }

  setActiveOrganisation(token: string, id: string): StoreResult<Organisation> {
    const user = this.users.get(token);
    if (!user) return unauthenticated();
    const org = this.memberOrganisation(user, id);
    if (!org) return organisationNotFound(id);
    user.active = org.id;
    return succeed(org);
  }

  updateBillingDetails(token: string, id: string, body: unknown): StoreResult<Organisation> {
    const user = this.users.get(token);
    if (!user) return unauthenticated();
    const org = this.memberOrganisation(user, id);
    if (!org) return organisationNotFound(id);
    const changes = parseBillingUpdate(body);
    if (!changes.ok) return changes;
    org.billing = { ...(org.billing ?? {}), ...changes.value } satisfies Billing;
    return succeed(org);
  }

  /** Without the deliberate slowness: that is the server's to add. */
  getSlugAvailability(token: string, slug: string): StoreResult<SlugAvailability> {
    if (!this.users.has(token)) return unauthenticated();
    return succeed(checkSlug(slug, (s) => this.isSlugTaken(s)));
  }

  acceptInvitation(token: string, organisationId: string, invitationId: string): StoreResult<void> {
    const user = this.users.get(token);
    if (!user) return unauthenticated();
    // Membership is not required here: accepting is how one becomes a member.
    if (!this.organisations.has(organisationId)) return organisationNotFound(organisationId);
    const inv = this.invitations.get(invitationId);
    if (!inv || !inv.pending || inv.organisationId !== organisationId) return invitationNotFound(invitationId);
    if (inv.email.toLowerCase() !== user.email.toLowerCase()) {
      return fail(403, 'invitation_email_mismatch', 'This invitation was sent to another e-mail address.');
    }
    inv.pending = false;
    this.addMembership(user.token, organisationId);
    return succeed(undefined);
  }

  deleteInvitation(token: string, organisationId: string, invitationId: string): StoreResult<void> {
    const user = this.users.get(token);
    if (!user) return unauthenticated();
    if (!this.memberOrganisation(user, organisationId)) return organisationNotFound(organisationId);
    const inv = this.invitations.get(invitationId);
    if (!inv || !inv.pending || inv.organisationId !== organisationId) return invitationNotFound(invitationId);
    this.invitations.delete(invitationId);
    return succeed(undefined);
  }

  deleteNotificationChannel(token: string, organisationId: string, channelId: string): StoreResult<void> {
    const user = this.users.get(token);
    if (!user) return unauthenticated();
    if (!this.memberOrganisation(user, organisationId)) return organisationNotFound(organisationId);
    const channel = this.channels.get(channelId);
    if (!channel || channel.organisationId !== organisationId) {
      return fail(404, 'channel_not_found', 'No notification channel with this identifier exists in the organisation.', `channel ${channelId}`);
    }
    this.channels.delete(channelId);
    return succeed(undefined);
  }

  // ---- internals ------------------------------------------------------------------------------

  private memberOrganisation(user: EmulatorUser, id: string): Organisation | undefined {
    return user.memberships.has(id) ? this.organisations.get(id) : undefined;
  }

  private listingOf(user: EmulatorUser): UserListing {
    let listing = this.listings.get(user.token);
    if (!listing) {
      const members: Organisation[] = [];
      for (const id of user.memberships) {
        const org = this.organisations.get(id);
        if (org) members.push(org);
      }
      listing = new UserListing(members);
      this.listings.set(user.token, listing);
    }
    return listing;
  }
}

function invitationNotFound(id: string) {
  return fail(404, 'invitation_not_found', 'No pending invitation with this identifier exists in the organisation.', `invitation ${id}`);
}
