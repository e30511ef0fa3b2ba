import { beforeAll, describe, expect, it } from 'vitest';
import { type Contract, loadContract } from '../support/openapi-contract.js';

const ORG = '/api/organisations/v1';
const AUTH = { authorization: 'Bearer demo-token' };
const JSON_TYPE = 'application/json; charset=utf-8';
const ORGANISATION = { id: 'org_1', slug: 'acme', displayName: 'Acme', billing: { customerId: 'c1', billingPeriodStart: '2024-01-01' } };

let contract: Contract;

beforeAll(async () => {
  contract = await loadContract();
});

describe('loadContract', () => {
  it('loads the description once and returns the same contract on every call', async () => {
    expect(await loadContract()).toBe(contract);
    expect(contract.operations).toHaveLength(8);
  });
});

describe('matchOperation', () => {
  it.each([
    ['GET', `${ORG}/organisations`, 'getOrganisations', {}],
    ['GET', `${ORG}/organisations/org_1`, 'getOrganisation', { organisation_id: 'org_1' }],
    ['PUT', `${ORG}/organisations/org_1/active`, 'setActiveOrganisation', { organisation_id: 'org_1' }],
    ['PUT', `${ORG}/organisations/org_1/billing`, 'updateBillingDetails', { organisation_id: 'org_1' }],
    ['GET', `${ORG}/slug/acme/availability`, 'getSlugAvailability', { slug: 'acme' }],
    ['PUT', `${ORG}/organisations/o/invitations/i/accept`, 'acceptInvitation', { organisation_id: 'o', invitation_id: 'i' }],
    ['DELETE', `${ORG}/organisations/o/invitations/i`, 'deleteInvitation', { organisation_id: 'o', invitation_id: 'i' }],
    ['DELETE', '/api/v2/o/o/notification_channels/c', 'deleteNotificationChannel', { organisation_id: 'o', channel_id: 'c' }],
  ])('matches %s %s to %s', (method, path, operationId, pathParams) => {
    expect(contract.matchOperation(method, path)).toEqual({ operationId, pathParams });
  });

  it('decodes percent-encoded path segments and ignores the query string', () => {
    expect(contract.matchOperation('get', `${ORG}/organisations/org%201%2Fx?filter=a&limit=2`)).toEqual({
      operationId: 'getOrganisation',
      pathParams: { organisation_id: 'org 1/x' },
    });
  });

  it('accepts an absolute URL', () => {
    expect(contract.matchOperation('GET', `http://127.0.0.1:9/api/organisations/v1/slug/a-b/availability?x=1`)?.pathParams).toEqual({ slug: 'a-b' });
  });

  it.each([
    ['POST', `${ORG}/organisations`],
    ['GET', `${ORG}/organisations/`],
    ['GET', `${ORG}/organisations//active`],
    ['PUT', `${ORG}/organisations//active`],
    ['GET', '/api/organisations/v2/organisations'],
    ['DELETE', '/api/v2/o/o/notification_channels'],
    ['GET', `${ORG}/organisations/%E0%A4%A`],
  ])('matches nothing for %s %s', (method, path) => {
    expect(contract.matchOperation(method, path)).toBeUndefined();
  });
});

describe('checkResponse', () => {
  const body = (value: unknown): string => JSON.stringify(value);

  it('accepts a documented status with a conforming body, extra fields included', () => {
    expect(contract.checkResponse('getOrganisation', 200, JSON_TYPE, body({ ...ORGANISATION, futureField: 1 }))).toEqual([]);
    expect(
      contract.checkResponse('getOrganisations', 200, 'application/json', body({ totalCount: 1, next: null, prev: '', organisations: [ORGANISATION] })),
    ).toEqual([]);
  });

  it('reports a status that is not documented for the operation', () => {
    expect(contract.checkResponse('getOrganisation', 409, JSON_TYPE, body({ code: 'conflict', message: 'x' }))).toEqual([
      expect.stringMatching(/status 409 is not documented for getOrganisation/),
    ]);
    expect(contract.checkResponse('deleteNotificationChannel', 200, JSON_TYPE, '{}')[0]).toMatch(/not documented/);
    expect(contract.checkResponse('getSlugAvailability', 404, JSON_TYPE, body({ code: 'not_found', message: 'x' }))[0]).toMatch(/not documented/);
  });

  it('reports an unknown operation', () => {
    expect(contract.checkResponse('getEverything', 200, JSON_TYPE, '{}')).toEqual(['unknown operation getEverything']);
  });

  it('reports a SlugAvailability without ok, and one whose messages disagree with ok', () => {
    expect(contract.checkResponse('getSlugAvailability', 200, JSON_TYPE, body({ messages: [] })).join('\n')).toMatch(/required property 'ok'/);
    expect(contract.checkResponse('getSlugAvailability', 200, JSON_TYPE, body({ ok: true, messages: ['is reserved'] }))).not.toEqual([]);
    expect(contract.checkResponse('getSlugAvailability', 200, JSON_TYPE, body({ ok: false, messages: [] }))).not.toEqual([]);
    expect(contract.checkResponse('getSlugAvailability', 200, JSON_TYPE, body({ ok: false, messages: ['is reserved'] }))).toEqual([]);
  });

  it('reports an Organisation without slug and a billing date that is not a date', () => {
    expect(contract.checkResponse('setActiveOrganisation', 200, JSON_TYPE, body({ id: 'x' })).join('\n')).toMatch(/required property 'slug'/);
    const badDate = { ...ORGANISATION, billing: { billingPeriodEnd: '31/12/2024' } };
    expect(contract.checkResponse('getOrganisation', 200, JSON_TYPE, body(badDate)).join('\n')).toMatch(/\/billing\/billingPeriodEnd/);
  });

  it('requires 204 to have no body, and accepts an empty 204', () => {
    expect(contract.checkResponse('deleteNotificationChannel', 204, null, '')).toEqual([]);
    expect(contract.checkResponse('deleteInvitation', 204, undefined, undefined)).toEqual([]);
    expect(contract.checkResponse('deleteNotificationChannel', 204, JSON_TYPE, '{}')[0]).toMatch(/must have no body/);
  });

  it('tolerates any 2xx, with or without a body, for acceptInvitation, deleteInvitation and updateBillingDetails', () => {
    expect(contract.checkResponse('acceptInvitation', 200, JSON_TYPE, '{"anything":true}')).toEqual([]);
    expect(contract.checkResponse('acceptInvitation', 200, null, '')).toEqual([]);
    expect(contract.checkResponse('deleteInvitation', 202, null, '')).toEqual([]);
    expect(contract.checkResponse('updateBillingDetails', 204, null, '')).toEqual([]);
  });

  it('still checks a JSON body of the decided 200 of updateBillingDetails, and allows an empty or text one (the success-body open point)', () => {
    expect(contract.checkResponse('updateBillingDetails', 200, JSON_TYPE, body({ id: 'x' }))).not.toEqual([]);
    expect(contract.checkResponse('updateBillingDetails', 200, null, '')).toEqual([]);
    expect(contract.checkResponse('updateBillingDetails', 200, 'text/plain; charset=utf-8', 'OK')).toEqual([]);
    expect(contract.checkResponse('getOrganisation', 200, null, '')[0]).toMatch(/must have a body/);
  });

  it('reports an Error whose code is not one documented for that status, or without message', () => {
    expect(contract.checkResponse('acceptInvitation', 404, JSON_TYPE, body({ code: 'invitation_not_found', message: 'gone' }))).toEqual([]);
    expect(contract.checkResponse('acceptInvitation', 404, JSON_TYPE, body({ code: 'channel_not_found', message: 'gone' }))).not.toEqual([]);
    expect(contract.checkResponse('getOrganisation', 401, JSON_TYPE, body({ code: 'unauthenticated' })).join('\n')).toMatch(/required property 'message'/);
  });

  it('reports a body that is not JSON or has an undocumented content type', () => {
    expect(contract.checkResponse('getOrganisation', 200, JSON_TYPE, '{"id":')[0]).toMatch(/not valid JSON/);
    expect(contract.checkResponse('getOrganisation', 200, 'text/plain', body(ORGANISATION))[0]).toMatch(/content type text\/plain is not documented/);
    expect(contract.checkResponse('getOrganisation', 200, null, body(ORGANISATION))[0]).toMatch(/content type \(none\)/);
  });

  it('checks Retry-After when headers are given: required on 429, an integer number of seconds', () => {
    const limited = body({ code: 'rate_limited', message: 'slow down' });
    expect(contract.checkResponse('getOrganisations', 429, JSON_TYPE, limited, { 'retry-after': '3' })).toEqual([]);
    expect(contract.checkResponse('getOrganisations', 429, JSON_TYPE, limited, {})).toEqual(['response header Retry-After is required']);
    expect(contract.checkResponse('getOrganisations', 429, JSON_TYPE, limited, { 'Retry-After': 'soon' })).not.toEqual([]);
    expect(contract.checkResponse('getOrganisations', 503, JSON_TYPE, body({ code: 'unavailable', message: 'x' }), {})).toEqual([]);
  });
});

describe('checkRequest', () => {
  it('accepts a documented request with documented query parameters in bounds', () => {
    expect(contract.checkRequest('GET', `${ORG}/organisations?filter=Ac&limit=500&cursor=abc`, AUTH)).toEqual([]);
    expect(contract.checkRequest('GET', `${ORG}/organisations?limit=1`, { Authorization: 'bearer t', 'X-Request-Id': 'r1' })).toEqual([]);
  });

  it.each([['10000'], ['0'], ['ten'], ['1.5']])('reports a limit of %s', (limit) => {
    const problems = contract.checkRequest('GET', `${ORG}/organisations?limit=${limit}`, AUTH);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^query parameter limit: /);
  });

  it('reports an undocumented query parameter and a repeated one', () => {
    expect(contract.checkRequest('GET', `${ORG}/organisations?page=2`, AUTH)).toEqual(['query parameter page is not documented for getOrganisations']);
    expect(contract.checkRequest('GET', `${ORG}/organisations/o?limit=2`, AUTH)[0]).toMatch(/limit is not documented for getOrganisation/);
    expect(contract.checkRequest('GET', `${ORG}/organisations?limit=2&limit=3`, AUTH)[0]).toMatch(/given 2 times/);
  });

  it('reports missing credentials, a non-bearer Authorization and the cookie where only the header is allowed', () => {
    expect(contract.checkRequest('GET', `${ORG}/organisations`, {})[0]).toMatch(/credentials missing/);
    expect(contract.checkRequest('GET', `${ORG}/organisations`, { authorization: 'Basic eDp5' })[0]).toMatch(/credentials missing/);
    expect(contract.checkRequest('GET', `${ORG}/organisations`, { authorization: 'Bearer ' })[0]).toMatch(/credentials missing/);
    expect(contract.checkRequest('GET', `${ORG}/organisations/o`, { cookie: 'bearerToken=demo-token' })[0]).toMatch(/credentials missing/);
  });

  it('accepts the bearerToken cookie or the header on deleteNotificationChannel', () => {
    const path = '/api/v2/o/o/notification_channels/c';
    expect(contract.checkRequest('DELETE', path, { cookie: 'theme=dark; bearerToken=demo-token' })).toEqual([]);
    expect(contract.checkRequest('DELETE', path, AUTH)).toEqual([]);
    expect(contract.checkRequest('DELETE', path, { cookie: 'token=demo-token' })[0]).toMatch(/Cookie bearerToken=<token>/);
  });

  it('accepts a BillingUpdate in the request spelling', () => {
    const headers = { ...AUTH, 'content-type': 'application/json' };
    const update = { billingEmail: 'billing@acme.example', customerID: 'c', subscriptionID: 's', platformID: 'p' };
    expect(contract.checkRequest('PUT', `${ORG}/organisations/o/billing`, headers, JSON.stringify(update))).toEqual([]);
    expect(contract.checkRequest('PUT', `${ORG}/organisations/o/billing`, headers, '{}')).toEqual([]);
  });

  it('reports a BillingUpdate with customerId spelled the response way', () => {
    const problems = contract.checkRequest(
      'PUT',
      `${ORG}/organisations/o/billing`,
      { ...AUTH, 'content-type': 'application/json' },
      JSON.stringify({ customerId: 'c' }),
    );
    expect(problems).toEqual([expect.stringMatching(/must NOT have additional properties \(customerId\)/)]);
  });

  it('reports a BillingUpdate with a non-string field or a billingEmail that is not an e-mail address', () => {
    const headers = { ...AUTH, 'content-type': 'application/json' };
    expect(contract.checkRequest('PUT', `${ORG}/organisations/o/billing`, headers, '{"platformID":7}')[0]).toMatch(/\/platformID: must be string/);
    expect(contract.checkRequest('PUT', `${ORG}/organisations/o/billing`, headers, '{"billingEmail":"nope"}')[0]).toMatch(/\/billingEmail: must match format "email"/);
  });

  it('reports a billing body that is missing, not JSON, or sent without a JSON content type', () => {
    expect(contract.checkRequest('PUT', `${ORG}/organisations/o/billing`, AUTH)).toEqual(['updateBillingDetails requires a request body']);
    expect(contract.checkRequest('PUT', `${ORG}/organisations/o/billing`, { ...AUTH, 'content-type': 'application/json' }, '{')[0]).toMatch(/not valid JSON/);
    expect(contract.checkRequest('PUT', `${ORG}/organisations/o/billing`, AUTH, '{}')[0]).toMatch(/content type \(none\) is not documented/);
  });

  it('reports a body sent to an operation that takes none', () => {
    expect(contract.checkRequest('PUT', `${ORG}/organisations/o/active`, AUTH, '{}')[0]).toMatch(/setActiveOrganisation takes no request body/);
  });

  it('reports an unknown path, and a known path with an undocumented method', () => {
    expect(contract.checkRequest('GET', '/api/organisations/v1/nothing', AUTH)).toEqual(['no documented operation for GET /api/organisations/v1/nothing']);
    expect(contract.checkRequest('POST', `${ORG}/organisations/o`, AUTH)).toEqual([`method POST is not documented for ${ORG}/organisations/o`]);
  });

  it('reports an empty Idempotency-Key', () => {
    expect(contract.checkRequest('PUT', `${ORG}/organisations/o/active`, { ...AUTH, 'idempotency-key': '' })[0]).toMatch(/header Idempotency-Key/);
    expect(contract.checkRequest('PUT', `${ORG}/organisations/o/active`, { ...AUTH, 'idempotency-key': 'k-1' })).toEqual([]);
  });
});
