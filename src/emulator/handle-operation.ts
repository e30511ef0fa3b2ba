/**
 * One authenticated-or-not service request, already routed and with its body read, turned into an
 * answer by the store. Success statuses follow the decisions ("Status codes on success").
 */
import type { OperationId, OrganisationList } from '../api/types.js';
import { fail, type StoreResult } from './failure.js';
import { errorAnswer, jsonAnswer, noContent, type Answer } from './http-answer.js';
import type { RouteParams } from './routes.js';
import type { EmulatorStore, ListQuery, OrganisationPage } from './store.js';

export type NextStyle = 'cursor' | 'relative' | 'absolute';

export interface OperationSettings {
  slugDelayMs: number;
  maxPageSize: number;
  defaultPageSize: number;
  nextStyle: NextStyle;
  /** The emulator's own URL, for absolute links. */
  baseUrl: string;
}

export interface OperationRequest {
  operation: OperationId;
  params: RouteParams;
  query: string;
  token: string;
  body: Buffer;
}

const LIST_PATH = '/api/organisations/v1/organisations';

export async function handleOperation(
  store: EmulatorStore,
  settings: OperationSettings,
  request: OperationRequest,
  sleep: (ms: number) => Promise<boolean>,
): Promise<Answer> {
  const { token, params } = request;
  const org = params.organisationId ?? '';
  switch (request.operation) {
    case 'getOrganisations': {
      const query = parseListQuery(request.query, settings);
      if (!query.ok) return errorAnswer(query);
      return toAnswer(store.listOrganisations(token, query.value), 200, (page) => renderList(page, query.value, settings));
    }
    case 'getOrganisation':
      return toAnswer(store.getOrganisation(token, org), 200);
    case 'setActiveOrganisation':
      return toAnswer(store.setActiveOrganisation(token, org), 200);
    case 'updateBillingDetails': {
      // A stranger learns nothing from the body's faults: membership is checked first.
      const member = store.getOrganisation(token, org);
      if (!member.ok) return errorAnswer(member);
      const body = parseJsonBody(request.body);
      if (!body.ok) return errorAnswer(body);
      return toAnswer(store.updateBillingDetails(token, org, body.value), 200);
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
  for (const name of ['filter', 'limit', 'cursor']) {
    if (search.getAll(name).length > 1) return fail(400, 'invalid_request', `The query parameter ${name} may be given only once.`, name);
  }
  const limitText = search.get('limit');
  let limit = settings.defaultPageSize;
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

function renderList(page: OrganisationPage, query: ListQuery, settings: OperationSettings): OrganisationList {
  const link = (cursor: string | undefined) => {
    if (cursor === undefined || settings.nextStyle === 'cursor') return cursor;
    const relative = `${LIST_PATH}?cursor=${encodeURIComponent(cursor)}&limit=${query.limit}`;
    return settings.nextStyle === 'relative' ? relative : `${settings.baseUrl}${relative}`;
  };
  const next = link(page.next);
  const prev = link(page.prev);
  return {
    totalCount: page.totalCount,
    ...(next === undefined ? {} : { next }),
    ...(prev === undefined ? {} : { prev }),
    organisations: page.organisations,
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
