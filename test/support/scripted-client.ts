/**
 * An OrganisationsClient in memory, for the flows' tests: a small world of organisations (those the
 * user is a member of are listed, the active one first), writes that change it, a log of every
 * call, and a script of what goes wrong (a status, a lost answer, a write that waits until
 * released). No HTTP, no timers of its own.
 */
import { ApiError, TransportError } from '../../src/api/api-error.js';
import type { ListingPage, ListOptions, OrganisationsClient, RequestOptions, WriteOptions } from '../../src/api/client.js';
import type { RateStatus } from '../../src/api/rate/rate-gate.js';
import type { Billing, BillingUpdate, OperationId, Organisation } from '../../src/api/types.js';

export interface Call {
  operation: OperationId;
  organisationId?: string;
  target?: string;
  label?: string;
  idempotencyKey?: string;
  update?: BillingUpdate;
}

/** What to do with one call instead of (or before) answering it. */
export type Script = (call: Call) => void | Promise<void>;

export interface WorldOrganisation {
  id: string;
  slug: string;
  billing?: Billing;
  /** Whether the user is a member (the listing shows it). */
  member?: boolean;
  /** Invitations the user may accept; accepting one makes the user a member. */
  invitations?: string[];
}

export interface ScriptedClient extends OrganisationsClient {
  readonly calls: Call[];
  /** Writes only (PUT, POST, DELETE), in the order they were sent. */
  writes(): Call[];
  /** Runs `script` for the next `times` calls of `operation` (default once; Infinity for all). */
  on(operation: OperationId, script: Script, times?: number): void;
  organisation(id: string): WorldOrganisation | undefined;
  active(): string | null;
  rate: RateStatus;
  closed: boolean;
}

export const BASE_URL = 'https://orgs.example.test';

const WRITES: ReadonlySet<OperationId> = new Set(['setActiveOrganisation', 'updateBillingDetails', 'acceptInvitation', 'deleteInvitation', 'deleteNotificationChannel']);

/** The service's own Error answer. */
export function serviceError(operation: OperationId, status: number, code?: string): ApiError {
  return new ApiError({
    operation,
    target: '/x',
    status,
    ...(code === undefined ? {} : { serviceCode: code, serviceMessage: `the service says ${code}` }),
    attempts: 1,
    requestId: 'req-1',
  });
}

/** A connection reset, a timeout: no answer at all. */
export function lostAnswer(operation: OperationId): TransportError {
  return new TransportError({ operation, target: '/x', failure: 'connection', detail: 'connection reset', attempts: 1 });
}

/** A script that throws `error`. */
export const fail =
  (error: Error): Script =>
  () => {
    throw error;
  };

/** A script that holds the call until `release()` (and says when it is held). */
export function gate(): { script: Script; held: Promise<void>; release: () => void } {
  let release!: () => void;
  let reached!: () => void;
  const released = new Promise<void>((r) => (release = r));
  const held = new Promise<void>((r) => (reached = r));
  return {
    script: async () => {
      reached();
      await released;
    },
    held,
    release,
  };
}

/** `pageSize`: the listing answers pages of this many (one page of all by default), each page a call. */
export function createScriptedClient(organisations: WorldOrganisation[], options: { active?: string | null; pageSize?: number; now?: () => number } = {}): ScriptedClient {
  // When each request is "sent": as it is asked for, before its script holds it.
  const now = options.now ?? Date.now;
  const world = new Map(organisations.map((o) => [o.id, { ...o, invitations: [...(o.invitations ?? [])] }]));
  let active: string | null = options.active === undefined ? (organisations.find((o) => o.member)?.id ?? null) : options.active;
  const calls: Call[] = [];
  const scripts = new Map<OperationId, Array<{ script: Script; left: number }>>();

  async function call(entry: Call): Promise<void> {
    calls.push(entry);
    const queue = scripts.get(entry.operation) ?? [];
    const next = queue[0];
    if (next === undefined) return;
    next.left -= 1;
    if (next.left <= 0) queue.shift();
    await next.script(entry);
  }

  const orgOrFail = (operation: OperationId, id: string) => {
    const org = world.get(id);
    if (org === undefined) throw serviceError(operation, 404, 'organisation_not_found');
    return org;
  };
  const writeCall = (operation: OperationId, organisationId: string, options: WriteOptions | RequestOptions = {}, extra: Partial<Call> = {}): Call => ({
    operation,
    organisationId,
    ...(options.label === undefined ? {} : { label: options.label }),
    ...('idempotencyKey' in options && options.idempotencyKey !== undefined ? { idempotencyKey: options.idempotencyKey } : {}),
    ...extra,
  });
  const listed = (filter?: string): Organisation[] => {
    const members = [...world.values()].filter((o) => o.member && (filter === undefined || o.slug.includes(filter)));
    members.sort((a, b) => (a.id === active ? -1 : b.id === active ? 1 : 0));
    return members.map((o) => ({ id: o.id, slug: o.slug, ...(o.billing === undefined ? {} : { billing: { ...o.billing } }) }));
  };

  const client: ScriptedClient = {
    baseUrl: new URL(BASE_URL),
    calls,
    rate: { rps: undefined, pausedMs: 0, waiting: 0, throttled: 0 },
    closed: false,
    writes: () => calls.filter((c) => WRITES.has(c.operation)),
    on(operation, script, times = 1) {
      const queue = scripts.get(operation) ?? [];
      queue.push({ script, left: times });
      scripts.set(operation, queue);
    },
    organisation: (id) => world.get(id),
    active: () => active,
    async *listOrganisationPages(list: ListOptions = {}): AsyncIterable<ListingPage> {
      // Each page as the world is when it is answered, as a service's cursor would give it.
      for (let from = 0; ; from += options.pageSize ?? Infinity) {
        const sentAt = now();
        await call({ operation: 'getOrganisations' });
        const organisations = listed(list.filter);
        const page = options.pageSize === undefined ? organisations : organisations.slice(from, from + options.pageSize);
        yield { totalCount: organisations.length, organisations: page, sentAt };
        if (options.pageSize === undefined || from + options.pageSize >= organisations.length) return;
      }
    },
    async *listOrganisations(options: ListOptions = {}): AsyncIterable<Organisation> {
      for await (const page of client.listOrganisationPages(options)) yield* page.organisations;
    },
    async getOrganisation(id) {
      return (await client.readOrganisation(id)).organisation;
    },
    async readOrganisation(id) {
      const sentAt = now();
      await call({ operation: 'getOrganisation', organisationId: id });
      const org = orgOrFail('getOrganisation', id);
      return { organisation: { id: org.id, slug: org.slug, ...(org.billing === undefined ? {} : { billing: { ...org.billing } }) }, sentAt };
    },
    async setActiveOrganisation(id, options) {
      await call(writeCall('setActiveOrganisation', id, options));
      orgOrFail('setActiveOrganisation', id);
      active = id;
      return undefined;
    },
    async updateBillingDetails(id, update, options) {
      await call(writeCall('updateBillingDetails', id, options, { update }));
      const org = orgOrFail('updateBillingDetails', id);
      org.billing = {
        ...org.billing,
        ...(update.billingEmail === undefined ? {} : { billingEmail: update.billingEmail }),
        ...(update.customerID === undefined ? {} : { customerId: update.customerID }),
        ...(update.subscriptionID === undefined ? {} : { subscriptionId: update.subscriptionID }),
        ...(update.platformID === undefined ? {} : { platformId: update.platformID }),
      };
      return undefined;
    },
    async getSlugAvailability() {
      throw new Error('not scripted');
    },
    async acceptInvitation(id, invitation, options) {
      await call(writeCall('acceptInvitation', id, options, { target: invitation }));
      const org = orgOrFail('acceptInvitation', id);
      if (!org.invitations.includes(invitation)) throw serviceError('acceptInvitation', 404, 'invitation_not_found');
      org.invitations = org.invitations.filter((i) => i !== invitation);
      org.member = true;
    },
    async deleteInvitation(id, invitation, options) {
      await call(writeCall('deleteInvitation', id, options, { target: invitation }));
    },
    async deleteNotificationChannel(id, channel, options) {
      await call(writeCall('deleteNotificationChannel', id, options, { target: channel }));
    },
    rateStatus: () => client.rate,
    async close() {
      client.closed = true;
    },
  };
  return client;
}
