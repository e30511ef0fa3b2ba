import { readFileSync } from 'node:fs';
import SwaggerParser from '@apidevtools/swagger-parser';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { parse as parseYaml } from 'yaml';
import { beforeAll, describe, expect, it } from 'vitest';
import { OPERATION_IDS } from '../../src/api/types.js';
import { CONTRACT_PATH } from '../support/openapi-contract.js';

type Json = Record<string, any>;

const MARK = 'Project decision (not shown in the interface):';
const ORG_API = '/api/organisations/v1';
const V2_API = '/api/v2';

const OPERATIONS: ReadonlyArray<readonly [string, string, string]> = [
  ['getOrganisations', 'get', `${ORG_API}/organisations`],
  ['getOrganisation', 'get', `${ORG_API}/organisations/{organisation_id}`],
  ['setActiveOrganisation', 'put', `${ORG_API}/organisations/{organisation_id}/active`],
  ['updateBillingDetails', 'put', `${ORG_API}/organisations/{organisation_id}/billing`],
  ['getSlugAvailability', 'get', `${ORG_API}/slug/{slug}/availability`],
  ['acceptInvitation', 'put', `${ORG_API}/organisations/{organisation_id}/invitations/{invitation_id}/accept`],
  ['deleteInvitation', 'delete', `${ORG_API}/organisations/{organisation_id}/invitations/{invitation_id}`],
  ['deleteNotificationChannel', 'delete', `${V2_API}/o/{organisation_id}/notification_channels/{channel_id}`],
];

/** Project decisions: the success status of each operation, and whether its description carries the marker. */
const SUCCESS: Record<string, { status: string; decided: boolean }> = {
  getOrganisations: { status: '200', decided: true },
  getOrganisation: { status: '200', decided: true },
  setActiveOrganisation: { status: '200', decided: true },
  updateBillingDetails: { status: '200', decided: true },
  getSlugAvailability: { status: '200', decided: false },
  acceptInvitation: { status: '204', decided: true },
  deleteInvitation: { status: '204', decided: true },
  deleteNotificationChannel: { status: '204', decided: false },
};

/** Failures any operation may meet: a body over 64 KiB, rate limiting, server and gateway trouble. */
const TRANSIENT: Record<string, string[]> = {
  '413': ['payload_too_large'],
  '429': ['rate_limited'],
  '500': ['internal'],
  '502': ['unavailable'],
  '503': ['unavailable'],
  '504': ['timeout'],
};

/** A 401 says unauthenticated, or token_expired for a token past its lifetime. */
const UNAUTHENTICATED = ['unauthenticated', 'token_expired'];

/** Project decisions: the failure statuses of each operation and the Error codes each may carry. */
const FAILURES: Record<string, Record<string, string[]>> = {
  getOrganisations: { '400': ['invalid_request'], '401': UNAUTHENTICATED, ...TRANSIENT },
  getOrganisation: { '401': UNAUTHENTICATED, '404': ['organisation_not_found'], ...TRANSIENT },
  setActiveOrganisation: { '401': UNAUTHENTICATED, '404': ['organisation_not_found'], ...TRANSIENT },
  updateBillingDetails: {
    '400': ['invalid_request'],
    '401': UNAUTHENTICATED,
    '404': ['organisation_not_found'],
    '422': ['validation_failed'],
    ...TRANSIENT,
  },
  getSlugAvailability: { '401': UNAUTHENTICATED, ...TRANSIENT },
  acceptInvitation: {
    '401': UNAUTHENTICATED,
    '403': ['invitation_email_mismatch'],
    '404': ['organisation_not_found', 'invitation_not_found'],
    ...TRANSIENT,
  },
  deleteInvitation: {
    '401': UNAUTHENTICATED,
    '404': ['organisation_not_found', 'invitation_not_found'],
    ...TRANSIENT,
  },
  deleteNotificationChannel: {
    '401': UNAUTHENTICATED,
    '404': ['organisation_not_found', 'channel_not_found'],
    '410': ['gone'],
    ...TRANSIENT,
  },
};

const RESERVED = ['admin', 'api', 'app', 'billing', 'help', 'login', 'organisations', 'root', 'settings', 'signup', 'support', 'www'];
const SLUG_PATTERN = '^[a-z][a-z0-9]*(-[a-z0-9]+)*$';

let api: Json;
const raw = (): Json => parseYaml(readFileSync(CONTRACT_PATH, 'utf8')) as Json;

function op(operationId: string): Json {
  for (const item of Object.values(api.paths as Json)) {
    for (const [method, value] of Object.entries(item as Json)) {
      if (method !== 'parameters' && (value as Json).operationId === operationId) return value as Json;
    }
  }
  throw new Error(`no operation ${operationId}`);
}

function parametersOf(operationId: string): Json[] {
  const entry = OPERATIONS.find(([id]) => id === operationId);
  const shared = (api.paths[entry![2]].parameters ?? []) as Json[];
  return [...shared, ...((op(operationId).parameters ?? []) as Json[])];
}

/** The Error codes a response schema allows (const or enum on `code`, in an allOf branch). */
function codesOf(response: Json): string[] {
  const schema = response.content?.['application/json']?.schema as Json | undefined;
  const codes: string[] = [];
  for (const part of (schema?.allOf ?? [schema]) as Json[]) {
    const code = part?.properties?.code as Json | undefined;
    if (code?.const !== undefined) codes.push(code.const as string);
    if (Array.isArray(code?.enum)) codes.push(...(code.enum as string[]));
  }
  return codes.sort();
}

beforeAll(async () => {
  api = (await SwaggerParser.dereference(CONTRACT_PATH)) as Json;
});

describe('schemas/organisations.openapi.yaml as an OpenAPI document', () => {
  it('passes swagger-parser validation as OpenAPI 3.1.0', async () => {
    const validated = (await SwaggerParser.validate(CONTRACT_PATH)) as Json;
    expect(validated.openapi).toBe('3.1.0');
  });

  it('would fail swagger-parser validation if an operation had no responses (the check is real)', async () => {
    const broken = raw();
    delete broken.paths[`${ORG_API}/organisations`].get.responses;
    broken.paths[`${ORG_API}/organisations`].get.parameters.push({ name: 'x', in: 'body' });
    await expect(SwaggerParser.validate(broken as never)).rejects.toThrow(/validation failed/i);
  });

  it('declares every {placeholder} of every path as a required path parameter, and no other', () => {
    for (const [operationId, , path] of OPERATIONS) {
      const placeholders = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]).sort();
      const declared = parametersOf(operationId).filter((p) => p.in === 'path');
      expect(declared.map((p) => p.name).sort(), operationId).toEqual(placeholders);
      for (const p of declared) expect(p.required, `${operationId} ${p.name}`).toBe(true);
    }
  });

  it('has schemas that all compile with ajv 2020 in strict mode', () => {
    const ajv = new Ajv2020({ strict: true, allErrors: true });
    ((addFormats as any).default ?? addFormats)(ajv);
    ajv.addKeyword({ keyword: 'example' });
    for (const [name, schema] of Object.entries(api.components.schemas as Json)) {
      expect(() => ajv.compile(schema as Json), name).not.toThrow();
    }
  });

  it('uses a single server {base_url} and only the two prefixes /api/organisations/v1 and /api/v2', () => {
    expect(api.servers).toHaveLength(1);
    expect(api.servers[0].url).toBe('{base_url}');
    expect(typeof api.servers[0].variables.base_url.default).toBe('string');
    for (const path of Object.keys(api.paths)) {
      expect(path.startsWith(`${ORG_API}/`) || path.startsWith(`${V2_API}/`), path).toBe(true);
    }
  });
});

describe('the operations', () => {
  it('are exactly the eight operations orgform knows (OPERATION_IDS of src/api/types.ts)', () => {
    const ids = Object.values(api.paths as Json).flatMap((item) =>
      Object.entries(item as Json)
        .filter(([key]) => key !== 'parameters')
        .map(([, value]) => (value as Json).operationId as string),
    );
    expect(ids.sort()).toEqual([...OPERATION_IDS].sort());
    expect(OPERATIONS.map(([id]) => id).sort()).toEqual([...OPERATION_IDS].sort());
  });

  it.each(OPERATIONS)('%s is %s %s', (operationId, method, path) => {
    expect(api.paths[path]?.[method]?.operationId).toBe(operationId);
  });

  it.each(Object.entries(SUCCESS))('%s succeeds with the decided status', (operationId, { status, decided }) => {
    const responses = op(operationId).responses as Json;
    const successes = Object.keys(responses).filter((k) => /^2\d\d$/.test(k));
    expect(successes).toEqual([status]);
    if (decided) expect(responses[status].description).toContain(MARK);
  });

  it('gives 200 responses of getOrganisations, getOrganisation, setActiveOrganisation and updateBillingDetails a JSON body, and 204 responses none', () => {
    expect(op('getOrganisations').responses['200'].content['application/json'].schema).toBe(api.components.schemas.OrganisationList);
    for (const id of ['getOrganisation', 'setActiveOrganisation', 'updateBillingDetails']) {
      expect(op(id).responses['200'].content['application/json'].schema, id).toBe(api.components.schemas.Organisation);
    }
    expect(op('getSlugAvailability').responses['200'].content['application/json'].schema).toBe(api.components.schemas.SlugAvailability);
    for (const id of ['acceptInvitation', 'deleteInvitation', 'deleteNotificationChannel']) {
      expect(op(id).responses['204'].content, id).toBeUndefined();
    }
  });

  it('tolerates any 2xx (a 2XX response) for setActiveOrganisation, updateBillingDetails, acceptInvitation and deleteInvitation only', () => {
    const tolerant = OPERATION_IDS.filter((id) => op(id).responses['2XX'] !== undefined);
    expect(tolerant.sort()).toEqual(['acceptInvitation', 'deleteInvitation', 'setActiveOrganisation', 'updateBillingDetails']);
    for (const id of tolerant) {
      expect(op(id).responses['2XX'].description).toContain(MARK);
      expect(op(id).responses['2XX'].description).toMatch(/any 2xx/);
    }
  });

  it('takes a request body (BillingUpdate, required) in updateBillingDetails only', () => {
    for (const id of OPERATION_IDS) {
      if (id === 'updateBillingDetails') {
        expect(op(id).requestBody.required).toBe(true);
        expect(op(id).requestBody.content['application/json'].schema).toBe(api.components.schemas.BillingUpdate);
      } else {
        expect(op(id).requestBody, id).toBeUndefined();
      }
    }
  });
});

describe('failures', () => {
  it.each(Object.entries(FAILURES))('%s documents exactly the decided failure statuses and Error codes', (operationId, expected) => {
    const responses = op(operationId).responses as Json;
    const failures = Object.keys(responses).filter((k) => /^[45]/.test(k));
    expect(failures.sort()).toEqual(Object.keys(expected).sort());
    for (const [status, codes] of Object.entries(expected)) {
      const response = responses[status] as Json;
      expect(codesOf(response), `${operationId} ${status}`).toEqual([...codes].sort());
      expect(response.description, `${operationId} ${status}`).toContain(MARK);
      for (const code of codes) expect(response.description, `${operationId} ${status}`).toContain(`\`${code}\``);
      const schema = response.content['application/json'].schema as Json;
      expect(schema.allOf[0], `${operationId} ${status}`).toBe(api.components.schemas.Error);
    }
  });

  it('requires a Retry-After header (seconds, or an HTTP date: the retry-after open point) on 429 and allows one on 503', () => {
    for (const id of OPERATION_IDS) {
      const responses = op(id).responses as Json;
      expect(responses['429'].headers['Retry-After'].required, id).toBe(true);
      expect(responses['429'].headers['Retry-After'].schema.type).toEqual(['integer', 'string']);
      expect(responses['503'].headers['Retry-After'].required, id).toBe(false);
      expect(responses['503'].headers['Retry-After'].schema.type).toEqual(['integer', 'string']);
    }
  });

  it('describes the routing failures 404 not_found and 405 method_not_allowed, and no 409, in the overview', () => {
    const description = api.info.description as string;
    expect(description).toContain(MARK);
    for (const text of ['404 `not_found`', '405 `method_not_allowed`', '409 is never used']) expect(description).toContain(text);
  });
});

describe('parameters and headers', () => {
  it('gives getOrganisations the decided query parameters filter, limit and cursor, each marked as a project decision', () => {
    const query = parametersOf('getOrganisations').filter((p) => p.in === 'query');
    expect(query.map((p) => p.name)).toEqual(['filter', 'limit', 'cursor']);
    for (const p of query) {
      expect(p.required, p.name).toBe(false);
      expect(p.description, p.name).toContain(MARK);
    }
  });

  it('bounds the page size: limit is an integer from 1 to 500, default 50, described as such', () => {
    const limit = parametersOf('getOrganisations').find((p) => p.name === 'limit')!;
    expect(limit.schema).toMatchObject({ type: 'integer', minimum: 1, maximum: 500, default: 50 });
    expect(limit.description).toMatch(/1 to\s+500, default 50/);
    expect(limit.description).toContain('400 `invalid_request`');
  });

  it('has no query parameters on any other operation', () => {
    for (const id of OPERATION_IDS.filter((i) => i !== 'getOrganisations')) {
      expect(parametersOf(id).filter((p) => p.in === 'query'), id).toEqual([]);
    }
  });

  it('lets every request carry an optional X-Request-Id and every PUT an optional Idempotency-Key', () => {
    for (const [id, method] of OPERATIONS) {
      const headers = parametersOf(id).filter((p) => p.in === 'header');
      const names = headers.map((p) => p.name).sort();
      expect(names, id).toEqual(method === 'put' ? ['Idempotency-Key', 'X-Request-Id'] : ['X-Request-Id']);
      for (const h of headers) {
        expect(h.required, `${id} ${h.name}`).toBe(false);
        expect(h.description, `${id} ${h.name}`).toContain(MARK);
      }
    }
  });

  it('states the slug rules (length, pattern, reserved words) as a project decision on the slug parameter and the operation', () => {
    const slug = parametersOf('getSlugAvailability').find((p) => p.name === 'slug')!;
    const description = op('getSlugAvailability').description as string;
    for (const text of [slug.description as string, description]) {
      expect(text).toContain(MARK);
      expect(text).toMatch(/3 to 40 characters/);
      expect(text).toContain(SLUG_PATTERN);
      for (const word of RESERVED) expect(text).toMatch(new RegExp(`\\b${word}\\b`));
      expect(text).toContain('is reserved');
      expect(text).toContain('is already taken');
    }
    expect(slug['x-orgform-slug-rules']).toEqual({ minLength: 3, maxLength: 40, pattern: SLUG_PATTERN, reserved: RESERVED });
  });

  it('has a slug pattern that accepts acme and acme-2 but not 2acme, acme-, acme--x or Acme', () => {
    const pattern = new RegExp(parametersOf('getSlugAvailability').find((p) => p.name === 'slug')!['x-orgform-slug-rules'].pattern);
    expect(['acme', 'acme-2', 'a1-b2-c3'].filter((s) => !pattern.test(s))).toEqual([]);
    expect(['2acme', 'acme-', 'acme--x', 'Acme', 'ac_me', '-acme'].filter((s) => pattern.test(s))).toEqual([]);
  });
});

describe('security', () => {
  it('requires Authorization: Bearer everywhere by default', () => {
    expect(api.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(api.security).toEqual([{ bearerAuth: [] }]);
    for (const id of OPERATION_IDS.filter((i) => i !== 'deleteNotificationChannel')) {
      expect(op(id).security, id).toBeUndefined();
    }
  });

  it('accepts the bearer header or the bearerToken cookie on deleteNotificationChannel, the cookie marked as a project decision', () => {
    const cookie = api.components.securitySchemes.bearerTokenCookie as Json;
    expect(cookie).toMatchObject({ type: 'apiKey', in: 'cookie', name: 'bearerToken' });
    expect(cookie.description).toContain(MARK);
    expect(op('deleteNotificationChannel').security).toEqual([{ bearerAuth: [] }, { bearerTokenCookie: [] }]);
  });
});

describe('components', () => {
  it('has the schemas Organisation, Billing, Subscription, OrganisationList, SlugAvailability, BillingUpdate and Error', () => {
    expect(Object.keys(api.components.schemas)).toEqual(
      expect.arrayContaining(['Organisation', 'Billing', 'Subscription', 'OrganisationList', 'SlugAvailability', 'BillingUpdate', 'Error']),
    );
  });

  it('spells the request BillingUpdate customerID/subscriptionID/platformID and the response Billing customerId/subscriptionId/platformId', () => {
    const { Billing, BillingUpdate } = api.components.schemas as Json;
    expect(Object.keys(BillingUpdate.properties).sort()).toEqual(['billingEmail', 'customerID', 'platformID', 'subscriptionID']);
    expect(Object.keys(Billing.properties)).toEqual(expect.arrayContaining(['customerId', 'subscriptionId', 'platformId', 'billingEmail']));
    expect(Object.keys(Billing.properties)).not.toEqual(expect.arrayContaining(['customerID']));
  });

  it('requires only id and slug of an Organisation (a tolerant reader, marked as a project decision)', () => {
    const { Organisation } = api.components.schemas as Json;
    expect(Organisation.required).toEqual(['id', 'slug']);
    expect(Organisation.description).toContain(MARK);
    expect(Organisation.description).toMatch(/tolerant/);
  });

  it('requires code and message of an Error, ok and messages of a SlugAvailability, and nothing else anywhere', () => {
    const schemas = api.components.schemas as Json;
    expect(schemas.Error.required).toEqual(['code', 'message']);
    expect(schemas.SlugAvailability.required).toEqual(['ok', 'messages']);
    for (const name of ['Billing', 'Subscription', 'OrganisationList', 'BillingUpdate']) {
      expect(schemas[name].required, name).toBeUndefined();
    }
    expect(schemas.BillingUpdate.description).toContain(MARK);
  });

  it('allows extra fields in every response schema but forbids them in the BillingUpdate request', () => {
    const schemas = api.components.schemas as Json;
    for (const name of ['Organisation', 'Billing', 'Subscription', 'OrganisationList', 'SlugAvailability', 'Error']) {
      expect(schemas[name].additionalProperties, name).not.toBe(false);
    }
    expect(schemas.BillingUpdate.additionalProperties).toBe(false);
  });

  it('lists a signing-keys tag that no operation uses', () => {
    expect((api.tags as Json[]).map((t) => t.name)).toContain('signing-keys');
    for (const id of OPERATION_IDS) expect(op(id).tags, id).not.toContain('signing-keys');
  });

  it('marks the list paging rules (next/prev omitted, "" and null accepted) as a project decision', () => {
    const list = api.components.schemas.OrganisationList as Json;
    expect(list.description).toContain(MARK);
    expect(list.properties.next.type).toEqual(['string', 'null']);
    expect(list.properties.prev.type).toEqual(['string', 'null']);
  });
});
