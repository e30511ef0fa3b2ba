/**
 * One authenticated-or-not service request, already routed and with its body read, turned into an
 * answer by the store. Success statuses follow the decisions ("Status codes on success").
 */
import { BILLING_RESPONSE_FIELD, BILLING_UPDATE_FIELDS, type OperationId, type Organisation } from '../api/types.js';
import type { Behaviour } from './behaviour.js';
import { fail, type StoreResult } from './failure.js';
import { errorAnswer, jsonAnswer, noContent, type Answer } from './http-answer.js';
import type { RouteParams } from './routes.js';
import type { EmulatorStore, ListQuery, OrganisationPage } from './store.js';

export type NextStyle = 'cursor' | 'relative' | 'absolute';

export interface OperationSettings {
  slugDelayMs: number;
  maxPageSize: number;
  defaultPageSize: number;
  /** The open points as played (next-link, last-next, page-size and the rendering of organisations among them). */
  behaviour: Readonly<Behaviour>;
  /** The emulator's own URL, for absolute links. */
  baseUrl: string;
}

export interface OperationRequest {
  operation: OperationId;
  params: RouteParams;
  query: string;
  token: string;
  body: Buffer;
  /** The `cycle` fault took this listing request: its last page links back to the start. */
  cycle?: boolean;
}

const LIST_PATH = '/api/organisations/v1/organisations';
/** The page size of each fixed `page-size`: the client's limit, whatever it is, is not looked at. */
export const FIXED_PAGE_SIZES: Readonly<Partial<Record<Behaviour['page-size'], number>>> = { 'fixed-50': 50, 'fixed-100': 100 };

export async function handleOperation(
  store: EmulatorStore,
  settings: OperationSettings,
  request: OperationRequest,
  sleep: (ms: number) => Promise<boolean>,
): Promise<Answer> {
  const { token, params } = request;
  const org = params.organisationId ?? '';
  const render = (value: Organisation) => renderOrganisation(value, settings.behaviour, 'read');
  switch (request.operation) {
    case 'getOrganisations': {
      const query = parseListQuery(request.query, settings);
      if (!query.ok) return errorAnswer(query);
      return toAnswer(store.listOrganisations(token, query.value, { cycle: request.cycle === true }), 200, (page) => renderList(page, query.value, settings));
    }
    case 'getOrganisation':
      return toAnswer(store.getOrganisation(token, org), 200, render);
    case 'setActiveOrganisation':
      return toAnswer(store.setActiveOrganisation(token, org), 200, render);
    case 'updateBillingDetails': {
      // A stranger learns nothing from the body's faults: membership is checked first.
      const member = store.memberOf(token, org);
      if (!member.ok) return errorAnswer(member);
      const body = parseJsonBody(request.body);
      if (!body.ok) return errorAnswer(body);
      return toAnswer(store.updateBillingDetails(token, org, body.value), 200, render);
    }
    case 'getSlugAvailability': {
      const result = store.getSlugAvailability(token, params.slug ?? '');
      // Deliberately slow, against enumeration of slugs; a refused caller is not kept waiting.
      if (result.ok) await sleep(settings.slugDelayMs);
      return toAnswer(result, 200);
    }
    case 'acceptInvitation':
      return toAnswer(store.acceptInvitation(token, org, params.invitationId ?? ''), 204);
    case 'deleteInvitation':
      return toAnswer(store.deleteInvitation(token, org, params.invitationId ?? ''), 204);
    case 'deleteNotificationChannel':
      return toAnswer(store.deleteNotificationChannel(token, org, params.channelId ?? ''), 204);
  }
}

function toAnswer<T>(result: StoreResult<T>, status: 200 | 204, render: (value: T) => unknown = (v) => v): Answer {
  if (!result.ok) return errorAnswer(result);
  return status === 204 ? noContent() : jsonAnswer(200, render(result.value));
}

function parseListQuery(query: string, settings: OperationSettings): StoreResult<ListQuery> {
  const search = new URLSearchParams(query);
  const fixed = FIXED_PAGE_SIZES[settings.behaviour['page-size']];
  for (const name of fixed !== undefined ? ['filter', 'cursor'] : ['filter', 'limit', 'cursor']) {
    if (search.getAll(name).length > 1) return fail(400, 'invalid_request', `The query parameter ${name} may be given only once.`, name);
  }
  const limitText = fixed !== undefined ? null : search.get('limit');
  let limit = fixed ?? settings.defaultPageSize;
  if (limitText !== null) {
    limit = /^\d{1,9}$/.test(limitText) ? Number(limitText) : NaN;
    if (!(limit >= 1 && limit <= settings.maxPageSize)) {
      return fail(400, 'invalid_request', `limit must be a whole number from 1 to ${settings.maxPageSize}.`, 'limit');
    }
  }
  const filter = search.get('filter');
  const cursor = search.get('cursor');
  return {
    ok: true,
    value: { limit, ...(filter ? { filter } : {}), ...(cursor ? { cursor } : {}) },
  };
}

function renderList(page: OrganisationPage, query: ListQuery, settings: OperationSettings): unknown {
  const { behaviour } = settings;
  const style = behaviour['next-link'];
  const link = (cursor: string | undefined) => {
    if (cursor === undefined || style === 'cursor') return cursor;
    const relative = `${LIST_PATH}?cursor=${encodeURIComponent(cursor)}&limit=${query.limit}`;
    return style === 'relative' ? relative : `${settings.baseUrl}${relative}`;
  };
  // last-next: "none" is left out, written "" or written null.
  const lastNext = behaviour['last-next'];
  const field = (name: 'next' | 'prev', value: string | undefined) =>
    value !== undefined ? { [name]: value } : lastNext === 'omit' ? {} : { [name]: lastNext === 'empty' ? '' : null };
  return {
    totalCount: page.totalCount,
    ...field('next', link(page.next)),
    ...field('prev', link(page.prev)),
    organisations: page.organisations.map((org) => renderOrganisation(org, behaviour, 'listing')),
  };
}

function parseJsonBody(body: Buffer): StoreResult<unknown> {
  if (body.length === 0) return fail(400, 'invalid_request', 'A JSON object body is required.');
  try {
    return { ok: true, value: JSON.parse(body.toString('utf8')) };
  } catch {
    return fail(400, 'invalid_request', 'The request body is not valid JSON.');
  }
}

/*
 * How an organisation is written in an answer, per the open points that change its rendering:
 * `extra-fields` (unknown fields added), `read-spelling` (billing ids spelled like BillingUpdate)
 * and `listing-billing` (billing left out of listings). The store's own record never changes.
 */
/** Fields a service might add that the interface does not show. */
export const EXTRA_ORGANISATION_FIELDS = { createdAt: '2021-03-04T05:06:07Z', region: 'eu-west-1' } as const;
export const EXTRA_BILLING_FIELDS = { taxId: null, currency: 'EUR' } as const;

const UPDATE_SPELLING: ReadonlyMap<string, string> = new Map(
  BILLING_UPDATE_FIELDS.map((field) => [BILLING_RESPONSE_FIELD[field] as string, field as string]),
);

/** The organisation as an answer carries it: the record itself when every point is at its lenient value. */
export function renderOrganisation(org: Organisation, behaviour: Readonly<Behaviour>, where: 'read' | 'listing'): unknown {
  const extra = behaviour['extra-fields'] === 'on';
  const spellUpdate = behaviour['read-spelling'] === 'update';
  const dropBilling = where === 'listing' && behaviour['listing-billing'] === 'omitted';
  if (!extra && !spellUpdate && !dropBilling) return org;
  const out: Record<string, unknown> = { ...org };
  if (dropBilling) delete out.billing;
  else if (org.billing !== undefined) {
    let billing: Record<string, unknown> = { ...org.billing };
    if (spellUpdate) {
      // Renamed in place, so the order of the fields stays as the record has it.
      billing = Object.fromEntries(Object.entries(billing).map(([key, value]) => [UPDATE_SPELLING.get(key) ?? key, value]));
    }
    if (extra) Object.assign(billing, EXTRA_BILLING_FIELDS);
    out.billing = billing;
  }
  if (extra) Object.assign(out, EXTRA_ORGANISATION_FIELDS);
  return out;
}
