/**
 * The emulator checked against schemas/organisations.openapi.yaml: every operation driven over
 * loopback, in success and in each documented failure, and every answer checked with the contract.
 * Seed: examples/emulator-data.json (demo user ada@acme.example, token demo-token).
 */
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { OperationId } from '../../src/api/types.js';
import { OPERATION_IDS } from '../../src/api/types.js';
import { generateEmulatorData } from '../../src/emulator/generate-emulator-data.js';
import { type Emulator, type EmulatorOptions, startEmulator } from '../../src/emulator/server.js';
import { type Contract, loadContract } from '../support/openapi-contract.js';

const ORG = '/api/organisations/v1';
const V2 = '/api/v2';
const HOOLI = encodeURIComponent('org:hooli/eu');

interface SendOptions {
  /** Default demo-token; null sends no Authorization header. */
  token?: string | null;
  cookie?: string;
  body?: string;
  contentType?: string;
}

interface Exchange {
  status: number;
  operationId: OperationId | undefined;
  json: any;
  text: string;
  headers: Record<string, string>;
  requestProblems: string[];
  responseProblems: string[];
}

let contract: Contract;
let emulator: Emulator | undefined;

beforeAll(async () => {
  contract = await loadContract();
});

async function start(options: EmulatorOptions = {}): Promise<Emulator> {
  await emulator?.stop();
  emulator = await startEmulator({ slugDelayMs: 0, ...options });
  return emulator;
}

beforeEach(async () => {
  await start();
});

afterEach(async () => {
  await emulator?.stop();
  emulator = undefined;
});

async function send(method: string, path: string, options: SendOptions = {}): Promise<Exchange> {
  const headers: Record<string, string> = { 'x-request-id': `conformance-${Math.random().toString(36).slice(2)}` };
  const token = options.token === undefined ? 'demo-token' : options.token;
  if (token !== null) headers.authorization = `Bearer ${token}`;
  if (options.cookie !== undefined) headers.cookie = options.cookie;
  if (options.body !== undefined) headers['content-type'] = options.contentType ?? 'application/json';
  if (method === 'PUT') headers['idempotency-key'] = `key-${Math.random().toString(36).slice(2)}`;
  const res = await fetch(`${emulator!.url}${path}`, { method, headers, ...(options.body === undefined ? {} : { body: options.body }) });
  const text = await res.text();
  const responseHeaders = Object.fromEntries(res.headers);
  const operationId = contract.matchOperation(method, path)?.operationId as OperationId | undefined;
  let json: unknown;
  try {
    json = text === '' ? undefined : JSON.parse(text);
  } catch {
    json = undefined;
  }
  return {
    status: res.status,
    operationId,
    json,
    text,
    headers: responseHeaders,
    requestProblems: contract.checkRequest(method, path, headers, options.body),
    responseProblems:
      operationId === undefined
        ? [`no operation for ${method} ${path}`]
        : contract.checkResponse(operationId, res.status, res.headers.get('content-type'), text, responseHeaders),
  };
}

/** The answer has the decided status (and Error code) and conforms to the description. */
function expectConforming(x: Exchange, status: number, code?: string): void {
  expect({ status: x.status, code: x.json?.code, problems: x.responseProblems }).toEqual({
    status,
    code: code ?? (status >= 400 ? expect.any(String) : undefined),
    problems: [],
  });
}

/** The request itself is a valid one by the description (so a failure is the emulator's to explain). */
function expectValidRequest(x: Exchange): void {
  expect(x.requestProblems).toEqual([]);
}

describe('getOrganisations', () => {
  it('lists the demo user organisations, active one first, as a conforming OrganisationList', async () => {
    const x = await send('GET', `${ORG}/organisations`);
    expectValidRequest(x);
    expectConforming(x, 200);
    expect(x.json.organisations[0].id).toBe('org_initech');
    expect(x.json.totalCount).toBe(5);
  });

  it('filters case-insensitively and pages with limit and cursor, every page conforming', async () => {
    const first = await send('GET', `${ORG}/organisations?filter=O&limit=2`);
    expectValidRequest(first);
    expectConforming(first, 200);
    expect(typeof first.json.next).toBe('string');
    const second = await send('GET', `${ORG}/organisations?filter=O&limit=2&cursor=${encodeURIComponent(first.json.next)}`);
    expectValidRequest(second);
    expectConforming(second, 200);
    expect(typeof second.json.prev).toBe('string');
  });

  it.each(['relative', 'absolute'] as const)('conforms with nextStyle %s', async (nextStyle) => {
    await start({ nextStyle });
    const x = await send('GET', `${ORG}/organisations?limit=1`);
    expectConforming(x, 200);
    expect(x.json.next).toMatch(nextStyle === 'relative' ? /^\/api\/organisations\/v1\/organisations\?cursor=/ : /^http:\/\//);
  });

  it.each(['10000', '0', 'ten'])('answers a limit of %s with a conforming 400 invalid_request (and the contract flags the request)', async (limit) => {
    const x = await send('GET', `${ORG}/organisations?limit=${limit}`);
    expect(x.requestProblems).toEqual([expect.stringMatching(/^query parameter limit/)]);
    expectConforming(x, 400, 'invalid_request');
  });

  it('answers a cursor it did not issue with a conforming 400 invalid_request', async () => {
    const x = await send('GET', `${ORG}/organisations?cursor=not-a-cursor`);
    expectValidRequest(x);
    expectConforming(x, 400, 'invalid_request');
  });

  it('answers no token and an unknown token with a conforming 401 unauthenticated', async () => {
    const none = await send('GET', `${ORG}/organisations`, { token: null });
    expect(none.requestProblems).toEqual([expect.stringMatching(/credentials missing/)]);
    expectConforming(none, 401, 'unauthenticated');
    expectConforming(await send('GET', `${ORG}/organisations`, { token: 'nobody' }), 401, 'unauthenticated');
  });
});

describe('getOrganisation', () => {
  it('reads an organisation, a percent-encoded identifier included, as a conforming Organisation', async () => {
    const acme = await send('GET', `${ORG}/organisations/org_acme`);
    expectValidRequest(acme);
    expectConforming(acme, 200);
    const hooli = await send('GET', `${ORG}/organisations/${HOOLI}`);
    expectConforming(hooli, 200);
    expect(hooli.json.id).toBe('org:hooli/eu');
  });

  it('answers an unknown organisation and one the user is not a member of with a conforming 404 organisation_not_found', async () => {
    expectConforming(await send('GET', `${ORG}/organisations/org_nope`), 404, 'organisation_not_found');
    expectConforming(await send('GET', `${ORG}/organisations/org_globex`), 404, 'organisation_not_found');
  });

  it('answers an unknown token with a conforming 401', async () => {
    expectConforming(await send('GET', `${ORG}/organisations/org_acme`, { token: 'nobody' }), 401, 'unauthenticated');
  });
});

describe('setActiveOrganisation', () => {
  it('answers with the now active organisation, conforming', async () => {
    const x = await send('PUT', `${ORG}/organisations/org_acme/active`);
    expectValidRequest(x);
    expectConforming(x, 200);
    expect(x.json.id).toBe('org_acme');
  });

  it('answers a non-member organisation with 404 and no token with 401, both conforming', async () => {
    expectConforming(await send('PUT', `${ORG}/organisations/org_globex/active`), 404, 'organisation_not_found');
    expectConforming(await send('PUT', `${ORG}/organisations/org_acme/active`, { token: null }), 401, 'unauthenticated');
  });
});

describe('updateBillingDetails', () => {
  const path = `${ORG}/organisations/org_acme/billing`;

  it('answers 200 with the updated Organisation, request spelling turned into response spelling, conforming', async () => {
    const body = JSON.stringify({ billingEmail: 'new@acme.example', customerID: 'cus_new', subscriptionID: 'sub_new', platformID: 'plat_new' });
    const x = await send('PUT', path, { body });
    expectValidRequest(x);
    expectConforming(x, 200);
    expect(x.json.billing).toMatchObject({ billingEmail: 'new@acme.example', customerId: 'cus_new', subscriptionId: 'sub_new', platformId: 'plat_new' });
  });

  it.each([
    ['malformed JSON', '{"billingEmail":'],
    ['a body that is not an object', '["billing@acme.example"]'],
    ['an empty body', ''],
  ])('answers %s with a conforming 400 invalid_request', async (_, body) => {
    expectConforming(await send('PUT', path, { body }), 400, 'invalid_request');
  });

  it.each([
    ['a field that is not a string', '{"platformID":7}', 'platformID'],
    ['a billingEmail that is not an e-mail address', '{"billingEmail":"not-an-address"}', 'billingEmail'],
  ])('answers %s with a conforming 422 validation_failed naming the field', async (_, body, field) => {
    const x = await send('PUT', path, { body });
    expect(x.requestProblems).not.toEqual([]);
    expectConforming(x, 422, 'validation_failed');
    expect(x.json.cause).toBe(field);
  });

  it('answers a body over 64 KiB with a conforming 413 payload_too_large', async () => {
    const body = JSON.stringify({ billingEmail: 'a@b.example', customerID: 'x'.repeat(70 * 1024) });
    expectConforming(await send('PUT', path, { body }), 413, 'payload_too_large');
  });

  it('answers a non-member organisation with 404 and no token with 401, both conforming', async () => {
    expectConforming(await send('PUT', `${ORG}/organisations/org_globex/billing`, { body: '{}' }), 404, 'organisation_not_found');
    expectConforming(await send('PUT', path, { body: '{}', token: null }), 401, 'unauthenticated');
  });
});

describe('getSlugAvailability', () => {
  it.each([
    ['a free slug', 'brand-new', true],
    ['a taken slug', 'acme', false],
    ['a reserved slug', 'admin', false],
    ['an invalid slug', 'A-', false],
    ['a too long slug', 'a'.repeat(41), false],
  ])('answers %s with a conforming SlugAvailability', async (_, slug, ok) => {
    const x = await send('GET', `${ORG}/slug/${encodeURIComponent(slug)}/availability`);
    expectValidRequest(x);
    expectConforming(x, 200);
    expect(x.json.ok).toBe(ok);
  });

  it('answers no token with a conforming 401', async () => {
    expectConforming(await send('GET', `${ORG}/slug/acme/availability`, { token: null }), 401, 'unauthenticated');
  });
});

describe('acceptInvitation', () => {
  it('answers 204 with no body, then 404 invitation_not_found for the consumed invitation, both conforming', async () => {
    const first = await send('PUT', `${ORG}/organisations/org_globex/invitations/inv_globex_ada/accept`);
    expectValidRequest(first);
    expectConforming(first, 204);
    expectConforming(await send('PUT', `${ORG}/organisations/org_globex/invitations/inv_globex_ada/accept`), 404, 'invitation_not_found');
  });

  it('accepts an invitation whose e-mail differs only in case, conforming', async () => {
    expectConforming(await send('PUT', `${ORG}/organisations/org_wonka/invitations/inv_wonka_ada/accept`), 204);
  });

  it('answers an invitation for another e-mail address with a conforming 403 invitation_email_mismatch', async () => {
    expectConforming(await send('PUT', `${ORG}/organisations/org_acme/invitations/inv_acme_carol/accept`), 403, 'invitation_email_mismatch');
  });

  it('answers an unknown organisation, and an invitation of another organisation, with conforming 404s', async () => {
    expectConforming(await send('PUT', `${ORG}/organisations/org_nope/invitations/inv_globex_ada/accept`), 404, 'organisation_not_found');
    expectConforming(await send('PUT', `${ORG}/organisations/org_acme/invitations/inv_hooli_bob/accept`), 404, 'invitation_not_found');
  });

  it('answers no token with a conforming 401', async () => {
    expectConforming(await send('PUT', `${ORG}/organisations/org_globex/invitations/inv_globex_ada/accept`, { token: null }), 401, 'unauthenticated');
  });
});

describe('deleteInvitation', () => {
  it('answers 204 with no body, then 404 invitation_not_found, both conforming', async () => {
    const first = await send('DELETE', `${ORG}/organisations/org_acme/invitations/inv_acme_carol`);
    expectValidRequest(first);
    expectConforming(first, 204);
    expectConforming(await send('DELETE', `${ORG}/organisations/org_acme/invitations/inv_acme_carol`), 404, 'invitation_not_found');
  });

  it('answers an organisation the user is not a member of with a conforming 404 organisation_not_found', async () => {
    expectConforming(await send('DELETE', `${ORG}/organisations/org_globex/invitations/inv_globex_ada`), 404, 'organisation_not_found');
  });

  it('answers no token with a conforming 401', async () => {
    expectConforming(await send('DELETE', `${ORG}/organisations/org_acme/invitations/inv_acme_carol`, { token: null }), 401, 'unauthenticated');
  });
});

describe('deleteNotificationChannel', () => {
  it('answers 204 with no body for the bearer header and for the bearerToken cookie, conforming', async () => {
    const bearer = await send('DELETE', `${V2}/o/org_acme/notification_channels/chn_acme_email`);
    expectValidRequest(bearer);
    expectConforming(bearer, 204);
    const cookie = await send('DELETE', `${V2}/o/org_acme/notification_channels/chn_acme_slack`, { token: null, cookie: 'bearerToken=demo-token' });
    expectValidRequest(cookie);
    expectConforming(cookie, 204);
  });

  it('answers a deleted channel, a channel of another organisation and a non-member organisation with conforming 404s', async () => {
    expectConforming(await send('DELETE', `${V2}/o/org_acme/notification_channels/chn_acme_email`), 204);
    expectConforming(await send('DELETE', `${V2}/o/org_acme/notification_channels/chn_acme_email`), 404, 'channel_not_found');
    expectConforming(await send('DELETE', `${V2}/o/org_acme/notification_channels/chn_globex_email`), 404, 'channel_not_found');
    expectConforming(await send('DELETE', `${V2}/o/org_globex/notification_channels/chn_globex_email`), 404, 'organisation_not_found');
    expectConforming(await send('DELETE', `${V2}/o/${HOOLI}/notification_channels/chn_hooli_pager`), 204);
  });

  it('answers no credentials with a conforming 401, and does not take the cookie on a v1 operation', async () => {
    expectConforming(await send('DELETE', `${V2}/o/org_acme/notification_channels/chn_acme_email`, { token: null }), 401, 'unauthenticated');
    const v1 = await send('GET', `${ORG}/organisations/org_acme`, { token: null, cookie: 'bearerToken=demo-token' });
    expect(v1.requestProblems).toEqual([expect.stringMatching(/credentials missing/)]);
    expectConforming(v1, 401, 'unauthenticated');
  });
});

describe('tolerated success styles', () => {
  it.each(['empty-200', 'json-200'] as const)('keeps acceptInvitation and deleteInvitation conforming with successStyle %s', async (successStyle) => {
    await start({ successStyle });
    const accepted = await send('PUT', `${ORG}/organisations/org_globex/invitations/inv_globex_ada/accept`);
    expectConforming(accepted, 200);
    const deleted = await send('DELETE', `${ORG}/organisations/org_acme/invitations/inv_acme_carol`);
    expectConforming(deleted, 200);
  });
});

describe('injected transient failures', () => {
  const probe: Record<OperationId, [string, string, string?]> = {
    getOrganisations: ['GET', `${ORG}/organisations`],
    getOrganisation: ['GET', `${ORG}/organisations/org_acme`],
    setActiveOrganisation: ['PUT', `${ORG}/organisations/org_acme/active`],
    updateBillingDetails: ['PUT', `${ORG}/organisations/org_acme/billing`, '{}'],
    getSlugAvailability: ['GET', `${ORG}/slug/acme/availability`],
    acceptInvitation: ['PUT', `${ORG}/organisations/org_globex/invitations/inv_globex_ada/accept`],
    deleteInvitation: ['DELETE', `${ORG}/organisations/org_acme/invitations/inv_acme_carol`],
    deleteNotificationChannel: ['DELETE', `${V2}/o/org_acme/notification_channels/chn_acme_email`],
  };
  const cases = OPERATION_IDS.flatMap((operation) =>
    ([[429, 'rate_limited'], [500, 'internal'], [502, 'unavailable'], [503, 'unavailable'], [504, 'timeout']] as const).map(
      ([status, code]) => [operation, status, code] as const,
    ),
  );

  it.each(cases)('%s answers an injected %i as a conforming %s', async (operation, status, code) => {
    emulator!.faults.add({ operation, fault: { kind: 'status', status, ...(status === 429 || status === 503 ? { retryAfter: 2 } : {}) } });
    const [method, path, body] = probe[operation];
    const x = await send(method, path, body === undefined ? {} : { body });
    expect(x.operationId).toBe(operation);
    expectConforming(x, status, code);
  });
});

describe('routing failures (no operation)', () => {
  it('answers an unknown path with 404 not_found and a known path with a wrong method with 405 method_not_allowed', async () => {
    const unknown = await send('GET', `${ORG}/nothing`);
    expect(unknown.operationId).toBeUndefined();
    expect([unknown.status, unknown.json?.code]).toEqual([404, 'not_found']);
    const wrongMethod = await send('POST', `${ORG}/organisations/org_acme`);
    expect(wrongMethod.operationId).toBeUndefined();
    expect([wrongMethod.status, wrongMethod.json?.code, typeof wrongMethod.json?.message]).toEqual([405, 'method_not_allowed', 'string']);
  });
});

describe('the strict profile (every open point at its least convenient answer)', () => {
  const AT = Date.UTC(2026, 0, 2, 3, 4, 5, 0);
  const startStrict = (options: EmulatorOptions = {}) => start({ profile: 'strict', clock: () => AT, ...options });

  it('lists without billing, with extra fields, "" for none and pages of 50 whatever the limit, conforming', async () => {
    await startStrict();
    const x = await send('GET', `${ORG}/organisations?limit=2`);
    expectConforming(x, 200);
    expect(x.json.organisations).toHaveLength(5);
    expect([x.json.next, x.json.prev, 'billing' in x.json.organisations[0], x.json.organisations[0].region]).toEqual(['', '', false, 'eu-west-1']);
    const bad = await send('GET', `${ORG}/organisations?limit=ten`);
    expect(bad.requestProblems).not.toEqual([]);
    expectConforming(bad, 200);
  });

  it('pages with absolute links, conforming', async () => {
    await startStrict({ data: generateEmulatorData({ organisations: 60 }) });
    const first = await send('GET', `${ORG}/organisations`);
    expectConforming(first, 200);
    expect(first.json.next).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/api\/organisations\/v1\/organisations\?cursor=/);
    // empty-pages one: the second page comes empty first, and links on to it.
    const empty = await send('GET', new URL(first.json.next).pathname + new URL(first.json.next).search);
    expectConforming(empty, 200);
    expect([empty.json.organisations.length, empty.json.totalCount, typeof empty.json.next]).toEqual([0, 60, 'string']);
    const second = await send('GET', new URL(empty.json.next).pathname + new URL(empty.json.next).search);
    expectConforming(second, 200);
    expect([second.json.organisations.length, second.json.next, typeof second.json.prev]).toEqual([10, '', 'string']);
  });

  it('reads with the update spelling, extra fields, and non-member reads, conforming', async () => {
    await startStrict();
    const acme = await send('GET', `${ORG}/organisations/org_acme`);
    expectConforming(acme, 200);
    expect(acme.json.billing).toMatchObject({ customerID: 'cus_acme', currency: 'EUR' });
    const globex = await send('GET', `${ORG}/organisations/org_globex`);
    expectConforming(globex, 200);
  });

  it('answers the four shaped successes 204, empty 200, text 200, text 200, conforming', async () => {
    await startStrict();
    const active = await send('PUT', `${ORG}/organisations/org_acme/active`);
    expectConforming(active, 204);
    const billing = await send('PUT', `${ORG}/organisations/org_acme/billing`, { body: JSON.stringify({ billingEmail: 'b@acme.example' }) });
    expectConforming(billing, 200);
    expect(billing.text).toBe('');
    const accepted = await send('PUT', `${ORG}/organisations/org_globex/invitations/inv_globex_ada/accept`);
    expectConforming(accepted, 200);
    expect([accepted.text, accepted.headers['content-type']]).toEqual(['OK', 'text/plain; charset=utf-8']);
    const deleted = await send('DELETE', `${ORG}/organisations/org_acme/invitations/inv_acme_carol`);
    expectConforming(deleted, 200);
    expectConforming(await send('DELETE', `${ORG}/organisations/org_acme/invitations/inv_acme_carol`), 404, 'invitation_not_found');
  });

  it('hides a fresh membership for two reads (404, then a listing without it), conforming', async () => {
    await startStrict({ behaviour: { 'non-member-reads': 'refused' } });
    expectConforming(await send('PUT', `${ORG}/organisations/org_globex/invitations/inv_globex_ada/accept`), 200);
    expectConforming(await send('GET', `${ORG}/organisations/org_globex`), 404, 'organisation_not_found');
    const list = await send('GET', `${ORG}/organisations`);
    expectConforming(list, 200);
    expect(list.json.totalCount).toBe(5);
    expectConforming(await send('GET', `${ORG}/organisations/org_globex`), 200);
  });

  it('answers the gateway HTML 404, then 204, then 410 gone for a channel, conforming', async () => {
    await startStrict();
    const path = `${V2}/o/org_acme/notification_channels/chn_acme_email`;
    const gateway = await send('DELETE', path);
    expect([gateway.status, gateway.json, gateway.responseProblems]).toEqual([404, undefined, []]);
    expect(gateway.headers['content-type']).toBe('text/html; charset=utf-8');
    expectConforming(await send('DELETE', path), 204);
    expectConforming(await send('DELETE', path), 410, 'gone');
  });

  it('writes Retry-After as an HTTP date on injected 429 and 503, conforming', async () => {
    await startStrict();
    emulator!.faults.add({ fault: { kind: 'status', status: 429, retryAfter: 2 } });
    emulator!.faults.add({ fault: { kind: 'status', status: 503, retryAfter: 2 } });
    const limited = await send('GET', `${ORG}/organisations`);
    expectConforming(limited, 429, 'rate_limited');
    expect(limited.headers['retry-after']).toBe('Fri, 02 Jan 2026 03:04:07 GMT');
    expectConforming(await send('GET', `${ORG}/organisations`), 503, 'unavailable');
  });

  it.each(['ratelimit', 'x-ratelimit'] as const)('carries %s headers on every answer, the rate-limit 429 included, conforming', async (headers) => {
    await startStrict({ rateLimit: { rps: 5, burst: 2, headers } });
    const answers = [
      await send('GET', `${ORG}/organisations/org_acme`),
      await send('PUT', `${ORG}/organisations/org_acme/active`),
      await send('GET', `${ORG}/organisations`),
    ];
    expect(answers.map((a) => a.status)).toEqual([200, 204, 429]);
    for (const a of answers) {
      expect(a.responseProblems).toEqual([]);
      expect(a.headers[headers === 'ratelimit' ? 'ratelimit' : 'x-ratelimit-remaining']).toBeDefined();
    }
    expect(answers[2]!.json.code).toBe('rate_limited');
    expect(answers[2]!.headers['retry-after']).toBe('Fri, 02 Jan 2026 03:04:06 GMT');
  });

  it.each(['ratelimit', 'x-ratelimit'] as const)('carries a daily quota as %s headers on every answer, the quota\'s 429 included, conforming', async (headers) => {
    await startStrict({ quota: { requests: 2, windowSeconds: 86_400, headers } });
    const answers = [await send('GET', `${ORG}/organisations/org_acme`), await send('PUT', `${ORG}/organisations/org_acme/active`), await send('GET', `${ORG}/organisations`)];
    expect(answers.map((a) => a.status)).toEqual([200, 204, 429]);
    for (const a of answers) {
      expect(a.responseProblems).toEqual([]);
      expect(a.headers[headers === 'ratelimit' ? 'ratelimit' : 'x-ratelimit-reset']).toBeDefined();
    }
    expect(answers[2]!.json.code).toBe('rate_limited');
    expect(answers[2]!.headers['retry-after']).toBe('Sat, 03 Jan 2026 03:04:05 GMT');
  });

  it('answers an expired token with a conforming 401 token_expired', async () => {
    await startStrict({ tokenLifetime: { requests: 1 } });
    expectConforming(await send('GET', `${ORG}/slug/acme/availability`), 200);
    const expired = await send('GET', `${ORG}/slug/acme/availability`);
    expectConforming(expired, 401, 'token_expired');
    expect(expired.headers['www-authenticate']).toBe('Bearer error="invalid_token"');
  });

  it('would flag a rate-limit header in the wrong form (the header check is real)', () => {
    const problems = contract.checkResponse('getOrganisation', 200, 'application/json', '{"id":"o","slug":"s"}', { ratelimit: 'remaining=3' });
    expect(problems).toEqual([expect.stringMatching(/^response header RateLimit: must match pattern/)]);
    expect(contract.checkResponse('getOrganisations', 429, 'application/json', '{"code":"rate_limited","message":"m"}', { 'retry-after': 'tomorrow' })).not.toEqual([]);
  });
});

describe('pages as services send them (page-size fixed-100 and shrinking, slow pages), conforming', () => {
  /** Follows `next` from the first page asked with `limit`, every page checked with the contract; the pages' sizes and the ids seen. */
  async function followChain(limit: number): Promise<{ sizes: number[]; ids: string[] }> {
    const sizes: number[] = [];
    const ids: string[] = [];
    let path: string | undefined = `${ORG}/organisations?limit=${limit}`;
    while (path !== undefined) {
      const page = await send('GET', path);
      expectConforming(page, 200);
      sizes.push(page.json.organisations.length);
      ids.push(...page.json.organisations.map((o: { id: string }) => o.id));
      path = page.json.next === undefined ? undefined : `${ORG}/organisations?limit=${limit}&cursor=${encodeURIComponent(page.json.next)}`;
    }
    return { sizes, ids };
  }
  const everyId = (n: number) => generateEmulatorData({ organisations: n }).organisations.map((o) => o.id).sort();

  it('fixed-100 answers pages of 100 whatever the limit asked, and the chain holds every organisation once', async () => {
    await start({ data: generateEmulatorData({ organisations: 250 }), behaviour: { 'page-size': 'fixed-100' } });
    const { sizes, ids } = await followChain(500);
    expect(sizes).toEqual([100, 100, 50]);
    expect([...ids].sort()).toEqual(everyId(250));
  });

  it('shrinking answers the first page as asked and each next one half the last, down to a tenth of the limit', async () => {
    await start({ data: generateEmulatorData({ organisations: 250 }), behaviour: { 'page-size': 'shrinking' } });
    const { sizes, ids } = await followChain(100);
    expect(sizes).toEqual([100, 50, 25, 13, 10, 10, 10, 10, 10, 10, 2]);
    expect([...ids].sort()).toEqual(everyId(250));
  });

  it('slow pages (delay-headers on every listing request, with renewals meanwhile) are as old as their asking, and conform', async () => {
    await start({ data: generateEmulatorData({ organisations: 30 }), behaviour: { 'page-size': 'fixed-100' } });
    emulator!.faults.add({ operation: 'getOrganisations', times: Infinity, fault: { kind: 'delay-headers', ms: 20, renew: true } });
    const page = await send('GET', `${ORG}/organisations?limit=10`);
    expectConforming(page, 200);
    expect(page.json.organisations).toHaveLength(30);
    const listed = page.json.organisations.map((o: { id: string; billing: { subscriptionId: string } }) => [o.id, o.billing.subscriptionId]);
    const now = listed.map(([id]: [string]) => [id, emulator!.store.organisations.get(id)!.billing!.subscriptionId]);
    expect(listed.every(([, sub]: [string, string]) => !sub.startsWith('sub_renewed_'))).toBe(true);
    expect(now.every(([, sub]: [string, string]) => sub.startsWith('sub_renewed_'))).toBe(true);
  });
});
