/**
 * The emulator's state and the logic of the eight operations, free of HTTP: each operation takes
 * the caller's token and returns data or a typed failure. Every lookup is a Map; listing reads a
 * per-user list sorted once and kept until that user's memberships or the organisations change.
 */
import { BILLING_RESPONSE_FIELD, type Billing, type Organisation, type SlugAvailability } from '../api/types.js';
import { PROFILES, type Behaviour } from './behaviour.js';
import { createCursorCodec, type CursorCodec, type ListCursor } from './cursor-codec.js';
import type { EmulatorData } from './data.js';
import { fail, organisationNotFound, succeed, type StoreResult } from './failure.js';
import { paginateOrganisations, shrinkingPageSize } from './paginate-organisations.js';
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
  /** Left out by a listing that cycles (the `cycle` fault). */
  totalCount?: number;
  next?: string;
  prev?: string;
}

const unauthenticated = () => fail(401, 'unauthenticated', 'A valid bearer token is required.');
const RENEWALS_KEPT = 10_000;

export class EmulatorStore {
  readonly users = new Map<string, EmulatorUser>();
  readonly organisations = new Map<string, Organisation>();
  readonly invitations = new Map<string, EmulatorInvitation>();
  readonly channels = new Map<string, EmulatorChannel>();
  private readonly slugs = new Map<string, string>();
  private readonly listings = new Map<string, UserListing>();
  private readonly cursors: CursorCodec = createCursorCodec();
  private cursorsIssued = 0;
  /** Channels deleted so far (id -> organisation), for the `gone-channel` point. */
  private readonly deletedChannels = new Map<string, string>();
  /** Invitations deleted so far (id -> organisation), for the `repeat-delete` point. */
  private readonly deletedInvitations = new Map<string, string>();
  /** Per user token, per organisation: reads left that do not show a new membership yet (`membership-lag`). */
  private readonly lags = new Map<string, Map<string, number>>();
  /** Subscriptions renewed by renewNextSubscription, in order (the last RENEWALS_KEPT). */
  readonly renewals: Array<{ organisation: string; subscriptionId: string; customerId: string }> = [];
  private renewed = 0;

  /** `behaviour` decides the open points the store plays (billing-put, repeat-delete, gone-channel, non-member-reads, membership-lag). */
  constructor(
    data?: EmulatorData,
    readonly behaviour: Readonly<Behaviour> = PROFILES.lenient,
  ) {
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
    this.deletedChannels.clear();
    this.deletedInvitations.clear();
    this.lags.clear();
    for (const org of data.organisations) this.putOrganisation(org);
    for (const user of data.users) this.putUser(user);
    for (const inv of data.invitations ?? []) this.invitations.set(inv.id, { ...inv, pending: inv.pending !== false });
    for (const ch of data.channels ?? []) this.channels.set(ch.id, { ...ch });
  }

  /** A deep copy of the state in the seed format. */
  dump(): EmulatorData {
    return structuredClone({
      users: Array.from(this.users.values(), (u) => ({
        token: u.token,
        email: u.email,
        memberships: Array.from(u.memberships),
        ...(u.active === undefined ? {} : { active: u.active }),
      })),
      organisations: Array.from(this.organisations.values()),
      invitations: Array.from(this.invitations.values(), (i) => ({
        id: i.id,
        organisationId: i.organisationId,
        email: i.email,
        ...(i.pending ? {} : { pending: false }),
      })),
      channels: Array.from(this.channels.values()),
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

  /**
   * An invitation accepted earlier, pending again: what a restored environment or a membership
   * removed by someone else looks like. The invitation is pending, and its invitee (every user
   * with its e-mail address) is no longer a member of its organisation, nor has it active.
   * Undefined when there is no such invitation (a deleted one is gone for good).
   */
  reopenInvitation(invitationId: string): { organisationId: string; removedFrom: string[] } | undefined {
    const inv = this.invitations.get(invitationId);
    if (!inv) return undefined;
    inv.pending = true;
    const removedFrom: string[] = [];
    for (const user of this.users.values()) {
      if (user.email.toLowerCase() !== inv.email.toLowerCase() || !user.memberships.delete(inv.organisationId)) continue;
      removedFrom.push(user.email);
      if (user.active === inv.organisationId) delete user.active;
      this.lags.get(user.token)?.delete(inv.organisationId);
      this.listings.delete(user.token);
    }
    return { organisationId: inv.organisationId, removedFrom };
  }

  putChannel(ch: EmulatorChannel): void {
    this.channels.set(ch.id, { ...ch });
  }

  /**
   * Someone else writing billing, as a billing system or an administrator does: `fields` in the
   * response spelling (customerId, ...), each value set as given, null removing the field (an empty
   * string is stored as such). Undefined when there is no such organisation.
   */
  changeBilling(id: string, fields: Readonly<Record<string, unknown>>): Organisation | undefined {
    const org = this.organisations.get(id);
    if (!org) return undefined;
    const billing: Record<string, unknown> = { ...(org.billing ?? {}) };
    for (const [field, value] of Object.entries(fields)) {
      if (value === null) delete billing[field];
      else billing[field] = value;
    }
    org.billing = billing as Billing;
    return org;
  }

  /**
   * A billing system renewing a subscription: the next organisation that has billing (in the order
   * they were added, round robin) gets a new subscriptionId and customerId. Undefined when none has billing.
   */
  renewNextSubscription(): { organisation: string; subscriptionId: string; customerId: string } | undefined {
    const withBilling = Array.from(this.organisations.values()).filter((org) => org.billing !== undefined);
    if (withBilling.length === 0) return undefined;
    return this.renewSubscription(withBilling[this.renewed % withBilling.length]!.id);
  }

  /** Renews one organisation's subscription (a new subscriptionId and customerId); undefined when it has no billing. */
  renewSubscription(id: string): { organisation: string; subscriptionId: string; customerId: string } | undefined {
    if (this.organisations.get(id)?.billing === undefined) return undefined;
    this.renewed += 1;
    const renewal = { organisation: id, subscriptionId: `sub_renewed_${this.renewed}`, customerId: `cus_renewed_${this.renewed}` };
    this.changeBilling(id, { subscriptionId: renewal.subscriptionId, customerId: renewal.customerId });
    if (this.renewals.length >= RENEWALS_KEPT) this.renewals.shift();
    this.renewals.push(renewal);
    return renewal;
  }

  isSlugTaken(slug: string): boolean {
    return this.slugs.has(slug.toLowerCase());
  }

  // ---- the eight operations ------------------------------------------------------------------

  /**
   * A page of the user's organisations. With `cycle` (the fault), a last page links back to the
   * start under a fresh cursor, and no page carries totalCount: a listing that never ends.
   */
  listOrganisations(token: string, query: ListQuery, play: { cycle?: boolean } = {}): StoreResult<OrganisationPage> {
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
    let list = this.listingOf(user).matching(filter);
    // membership-lag: a membership just gained is left out, and this listing counts as one read of it.
    const hidden = this.consumeListingLag(user, list);
    // Rule 2 holds whatever the lag: the active organisation is always the first item.
    if (user.active !== undefined) hidden.delete(user.active);
    if (hidden.size > 0) list = list.filter((org) => !hidden.has(org.id));
    const counted = play.cycle === true ? {} : { totalCount: list.length };
    // empty-pages: this position is answered empty first, linking on to it.
    if (cursor?.pad === true) return succeed({ organisations: [], ...counted, next: this.issueCursor({ ...cursor, pad: false }) });
    const member = (id: string) => (hidden.has(id) ? undefined : this.memberOrganisation(user, id));
    // page-size shrinking: each page of the chain holds fewer than the one before.
    const shrinking = this.behaviour['page-size'] === 'shrinking';
    const pagesBefore = cursor?.page ?? 0;
    const page = paginateOrganisations({
      list,
      active: user.active === undefined ? undefined : member(user.active),
      filter,
      limit: shrinking ? shrinkingPageSize(query.limit, pagesBefore) : query.limit,
      cursor,
      findMember: member,
    });
    const pad = this.behaviour['empty-pages'] === 'every' || (this.behaviour['empty-pages'] === 'one' && cursor === null);
    const next = page.next ?? (play.cycle === true ? { direction: 'after' as const, key: null, exclude: filter === null ? (user.active ?? null) : null, filter } : undefined);
    return succeed({
      organisations: page.organisations,
      ...counted,
      ...(next ? { next: this.issueCursor({ ...next, ...(pad ? { pad } : {}), ...(shrinking ? { page: pagesBefore + 1 } : {}) }) } : {}),
      ...(page.prev ? { prev: this.issueCursor(page.prev) } : {}),
    });
  }

  /** A cursor's text: new each time under `fresh-cursors`, else the same for the same position. */
  private issueCursor(cursor: ListCursor): string {
    if (this.behaviour['fresh-cursors'] === 'off') return this.cursors.encode(cursor);
    this.cursorsIssued += 1;
    return this.cursors.encode({ ...cursor, nonce: String(this.cursorsIssued) });
  }

  /** Reads by identifier: members only, unless `non-member-reads` is readable; a lagging new membership is not seen yet. */
  getOrganisation(token: string, id: string): StoreResult<Organisation> {
    const user = this.users.get(token);
    if (!user) return unauthenticated();
    const org = this.consumeLag(user.token, id) ? undefined : this.memberOrganisation(user, id);
    if (org) return succeed(org);
    const other = this.behaviour['non-member-reads'] === 'readable' ? this.organisations.get(id) : undefined;
    return other ? succeed(other) : organisationNotFound(id);
  }

  /** The organisation when the user is a member of it (as writes see it: at once, never lagging). */
  memberOf(token: string, id: string): StoreResult<Organisation> {
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
    const kept: Billing = { ...(org.billing ?? {}) };
    if (this.behaviour['billing-put'] === 'replace') {
      // A PUT replaces the four updatable fields: one left out of the body is removed.
      for (const field of Object.values(BILLING_RESPONSE_FIELD)) delete kept[field];
    }
    org.billing = { ...kept, ...changes.value } satisfies Billing;
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
    const gained = !user.memberships.has(organisationId);
    this.addMembership(user.token, organisationId);
    const lag = this.behaviour['membership-lag'];
    if (gained && lag > 0) {
      let lags = this.lags.get(user.token);
      if (!lags) this.lags.set(user.token, (lags = new Map()));
      lags.set(organisationId, lag);
    }
    return succeed(undefined);
  }

  deleteInvitation(token: string, organisationId: string, invitationId: string): StoreResult<void> {
    const user = this.users.get(token);
    if (!user) return unauthenticated();
    if (!this.memberOrganisation(user, organisationId)) return organisationNotFound(organisationId);
    const inv = this.invitations.get(invitationId);
    if (!inv || !inv.pending || inv.organisationId !== organisationId) {
      // repeat-delete: an invitation already deleted or accepted may succeed again, as if it had worked.
      const gone = this.deletedInvitations.get(invitationId) === organisationId || (inv?.organisationId === organisationId && !inv.pending);
      return gone && this.behaviour['repeat-delete'] === 'success' ? succeed(undefined) : invitationNotFound(invitationId);
    }
    this.invitations.delete(invitationId);
    this.deletedInvitations.set(invitationId, organisationId);
    return succeed(undefined);
  }

  deleteNotificationChannel(token: string, organisationId: string, channelId: string): StoreResult<void> {
    const user = this.users.get(token);
    if (!user) return unauthenticated();
    if (!this.memberOrganisation(user, organisationId)) return organisationNotFound(organisationId);
    const channel = this.channels.get(channelId);
    if (!channel || channel.organisationId !== organisationId) {
      if (this.behaviour['gone-channel'] === 'gone' && this.deletedChannels.get(channelId) === organisationId) {
        return fail(410, 'gone', 'This notification channel was deleted.', `channel ${channelId}`);
      }
      return fail(404, 'channel_not_found', 'No notification channel with this identifier exists in the organisation.', `channel ${channelId}`);
    }
    this.channels.delete(channelId);
    this.deletedChannels.set(channelId, organisationId);
    return succeed(undefined);
  }

  // ---- internals ------------------------------------------------------------------------------

  private memberOrganisation(user: EmulatorUser, id: string): Organisation | undefined {
    return user.memberships.has(id) ? this.organisations.get(id) : undefined;
  }

  /** True when this read of `id` by the user must not show the membership yet; counts the read. */
  private consumeLag(token: string, id: string): boolean {
    const lags = this.lags.get(token);
    const left = lags?.get(id);
    if (!lags || left === undefined) return false;
    if (left <= 1) lags.delete(id);
    else lags.set(id, left - 1);
    if (lags.size === 0) this.lags.delete(token);
    return true;
  }

  /** The lagging memberships a listing over `list` must leave out; each one in the list counts a read. */
  private consumeListingLag(user: EmulatorUser, list: readonly Organisation[]): Set<string> {
    const lags = this.lags.get(user.token);
    const hidden = new Set<string>();
    if (!lags) return hidden;
    for (const id of Array.from(lags.keys())) {
      hidden.add(id);
      if (list.some((org) => org.id === id)) this.consumeLag(user.token, id);
    }
    return hidden;
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
