/**
 * Checks HTTP traffic against schemas/organisations.openapi.yaml.
 *
 *   const contract = await loadContract();
 *   contract.matchOperation('GET', '/api/organisations/v1/organisations/org%201?x=1')
 *     // -> { operationId: 'getOrganisation', pathParams: { organisation_id: 'org 1' } }
 *   contract.checkRequest('GET', '/api/organisations/v1/organisations?limit=10000', { authorization: 'Bearer t' })
 *     // -> ['query parameter limit: must be <= 500']
 *   contract.checkResponse('getOrganisation', 200, 'application/json', '{"id":"o"}')
 *     // -> ['response body: must have required property \'slug\'']
 *
 * Every check returns a list of problems; an empty list means the traffic conforms.
 */
import { fileURLToPath } from 'node:url';
import SwaggerParser from '@apidevtools/swagger-parser';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ErrorObject, ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';

export const CONTRACT_PATH = fileURLToPath(new URL('../../schemas/organisations.openapi.yaml', import.meta.url));

export interface OperationMatch {
  operationId: string;
  /** Path parameters, percent-decoded. */
  pathParams: Record<string, string>;
}

export interface OperationInfo {
  operationId: string;
  /** Upper-case HTTP method. */
  method: string;
  /** Path template from the base URL, e.g. `/api/organisations/v1/organisations/{organisation_id}`. */
  path: string;
  /** Response keys as documented: '200', '204', '2XX', '404', ... */
  statuses: string[];
}

export interface Contract {
  /** The parsed and dereferenced description (do not mutate). */
  readonly document: Readonly<Record<string, unknown>>;
  readonly operations: readonly OperationInfo[];
  operation(operationId: string): OperationInfo | undefined;
  /** rawPath is the path as sent (possibly with a query string; an absolute URL is also accepted). */
  matchOperation(method: string, rawPath: string): OperationMatch | undefined;
  /**
   * Problems with a response: the status is documented for the operation (exactly, or by a `2XX`-style range or
   * `default`), a body is present exactly when one is described (never for 204), the content type is a described
   * one, and a JSON body validates against the response schema. When `headers` is given, required response headers
   * are present and valid.
   */
  checkResponse(
    operationId: string,
    status: number,
    contentType: string | null | undefined,
    bodyText: string | undefined,
    headers?: Record<string, string | undefined>,
  ): string[];
  /**
   * Problems with a request: an operation exists for method and path, path and query parameters are documented and
   * valid (bounds included), required headers are present, the credentials the operation requires are present
   * (Authorization: Bearer, or the bearerToken cookie where allowed), and a JSON body validates against the request
   * schema (and is present only when the operation takes one).
   */
  checkRequest(
    method: string,
    rawPath: string,
    headers: Record<string, string | undefined>,
    bodyText?: string,
  ): string[];
}

type Json = Record<string, unknown>;

interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required?: boolean;
  schema?: Json;
}

interface MediaType {
  schema?: unknown;
}

interface ResponseObject {
  content?: Record<string, MediaType>;
  headers?: Record<string, { required?: boolean; schema?: Json }>;
  'x-orgform-body-optional'?: boolean;
}

interface OperationObject {
  operationId: string;
  parameters?: Parameter[];
  requestBody?: { required?: boolean; content?: Record<string, MediaType> };
  responses: Record<string, ResponseObject>;
  security?: Array<Record<string, string[]>>;
}

interface SecurityScheme {
  type: string;
  scheme?: string;
  in?: string;
  name?: string;
}

interface CompiledOperation {
  info: OperationInfo;
  segments: string[];
  op: OperationObject;
  parameters: Parameter[];
  security: Array<Record<string, string[]>>;
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'] as const;

let cached: Promise<Contract> | undefined;

/** Parses and dereferences the description once per process (test file) and returns the checks built on it. */
export function loadContract(): Promise<Contract> {
  cached ??= build();
  return cached;
}

async function build(): Promise<Contract> {
  const document = (await SwaggerParser.dereference(CONTRACT_PATH)) as unknown as Json;
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
  const formatsModule = addFormats as unknown as { default?: unknown };
  const applyFormats = (formatsModule.default ?? addFormats) as unknown as (a: Ajv2020) => void;
  applyFormats(ajv);

  const validators = new Map<unknown, ValidateFunction>();
  const validatorFor = (schema: unknown): ValidateFunction => {
    let v = validators.get(schema);
    if (v === undefined) {
      v = ajv.compile(schema as Json);
      validators.set(schema, v);
    }
    return v;
  };
  const validate = (schema: unknown, value: unknown, where: string): string[] => {
    const v = validatorFor(schema ?? {});
    return v(value) ? [] : formatErrors(v.errors ?? [], where);
  };
  /** A JSON body parsed and checked against its media type's schema; other media types are not looked into. */
  const checkJsonBody = (media: { type: string; object: MediaType }, body: string, where: string): string[] => {
    if (!isJson(media.type)) return [];
    let value: unknown;
    try {
      value = JSON.parse(body);
    } catch {
      return [`${where} is not valid JSON: ${preview(body)}`];
    }
    return validate(media.object.schema, value, where);
  };

  const securitySchemes = ((document.components as Json | undefined)?.securitySchemes ?? {}) as Record<
    string,
    SecurityScheme
  >;
  const globalSecurity = (document.security ?? []) as Array<Record<string, string[]>>;

  const compiled: CompiledOperation[] = [];
  for (const [path, item] of Object.entries((document.paths ?? {}) as Record<string, Json>)) {
    const shared = (item.parameters ?? []) as Parameter[];
    for (const method of METHODS) {
      const op = item[method] as OperationObject | undefined;
      if (op === undefined) continue;
      const own = op.parameters ?? [];
      const parameters = [
        ...shared.filter((p) => !own.some((o) => o.name === p.name && o.in === p.in)),
        ...own,
      ];
      compiled.push({
        info: {
          operationId: op.operationId,
          method: method.toUpperCase(),
          path,
          statuses: Object.keys(op.responses),
        },
        segments: path.split('/'),
        op,
        parameters,
        security: op.security ?? globalSecurity,
      });
    }
  }
  const byId = new Map(compiled.map((c) => [c.info.operationId, c]));

  const matchCompiled = (
    method: string,
    rawPath: string,
  ): { c: CompiledOperation; pathParams: Record<string, string> } | undefined => {
    const pathOnly = stripToPath(rawPath);
    const segments = pathOnly.split('/');
    let best: { c: CompiledOperation; pathParams: Record<string, string>; literals: number } | undefined;
    for (const c of compiled) {
      if (c.info.method !== method.toUpperCase() || c.segments.length !== segments.length) continue;
      const pathParams: Record<string, string> = {};
      let literals = 0;
      let ok = true;
      for (let i = 0; i < segments.length && ok; i++) {
        const template = c.segments[i] ?? '';
        const actual = segments[i] ?? '';
        const param = /^\{(.+)\}$/.exec(template)?.[1];
        if (param === undefined) {
          ok = template === actual;
          literals++;
        } else if (actual === '') {
          ok = false;
        } else {
          try {
            pathParams[param] = decodeURIComponent(actual);
          } catch {
            ok = false;
          }
        }
      }
      if (ok && (best === undefined || literals > best.literals)) best = { c, pathParams, literals };
    }
    return best && { c: best.c, pathParams: best.pathParams };
  };

  const contract: Contract = {
    document,
    operations: compiled.map((c) => c.info),
    operation: (operationId) => byId.get(operationId)?.info,

    matchOperation(method, rawPath) {
      const m = matchCompiled(method, rawPath);
      return m && { operationId: m.c.info.operationId, pathParams: m.pathParams };
    },

    checkResponse(operationId, status, contentType, bodyText, headers) {
      const c = byId.get(operationId);
      if (c === undefined) return [`unknown operation ${operationId}`];
      const responses = c.op.responses;
      const key = [String(status), `${String(status).charAt(0)}XX`, 'default'].find((k) => responses[k] !== undefined);
      if (key === undefined) {
        return [`status ${status} is not documented for ${operationId} (documented: ${Object.keys(responses).join(', ')})`];
      }
      const response = responses[key] as ResponseObject;
      const problems: string[] = [];
      const body = bodyText ?? '';
      const content = response.content ?? {};
      const mediaTypes = Object.keys(content);

      if (headers !== undefined) {
        for (const [name, header] of Object.entries(response.headers ?? {})) {
          const value = lookupHeader(headers, name);
          if (value === undefined) {
            if (header.required === true) problems.push(`response header ${name} is required`);
            continue;
          }
          problems.push(...validate(header.schema, coerce(value, header.schema), `response header ${name}`));
        }
      }

      if (status === 204 || status === 304 || mediaTypes.length === 0) {
        if (body !== '') problems.push(`status ${status} of ${operationId} must have no body, got ${preview(body)}`);
        return problems;
      }
      if (body === '') {
        if (response['x-orgform-body-optional'] !== true) {
          problems.push(`status ${status} of ${operationId} must have a body (${mediaTypes.join(', ')})`);
        }
        return problems;
      }
      const media = findMediaType(content, contentType);
      if (media === undefined) {
        problems.push(
          `content type ${contentType ?? '(none)'} is not documented for status ${status} of ${operationId} (documented: ${mediaTypes.join(', ')})`,
        );
        return problems;
      }
      problems.push(...checkJsonBody(media, body, 'response body'));
      return problems;
    },

    checkRequest(method, rawPath, headers, bodyText) {
      const m = matchCompiled(method, rawPath);
      if (m === undefined) {
        const pathKnown = compiled.some((c) => matchCompiled(c.info.method, rawPath)?.c === c);
        return [
          pathKnown
            ? `method ${method.toUpperCase()} is not documented for ${stripToPath(rawPath)}`
            : `no documented operation for ${method.toUpperCase()} ${stripToPath(rawPath)}`,
        ];
      }
      const { c, pathParams } = m;
      const problems: string[] = [];

      for (const p of c.parameters.filter((p) => p.in === 'path')) {
        const value = pathParams[p.name];
        if (value === undefined) problems.push(`path parameter ${p.name} is missing`);
        else problems.push(...validate(p.schema, value, `path parameter ${p.name}`));
      }

      const query = new URLSearchParams(queryOf(rawPath));
      const queryParams = c.parameters.filter((p) => p.in === 'query');
      for (const name of new Set(query.keys())) {
        const p = queryParams.find((q) => q.name === name);
        if (p === undefined) {
          problems.push(`query parameter ${name} is not documented for ${c.info.operationId}`);
          continue;
        }
        const values = query.getAll(name);
        if (values.length > 1 && p.schema?.type !== 'array') {
          problems.push(`query parameter ${name} is given ${values.length} times`);
          continue;
        }
        problems.push(...validate(p.schema, coerce(values[0] ?? '', p.schema), `query parameter ${name}`));
      }
      for (const p of queryParams) {
        if (p.required === true && !query.has(p.name)) problems.push(`query parameter ${p.name} is required`);
      }

      for (const p of c.parameters.filter((p) => p.in === 'header')) {
        const value = lookupHeader(headers, p.name);
        if (value === undefined) {
          if (p.required === true) problems.push(`header ${p.name} is required`);
        } else {
          problems.push(...validate(p.schema, value, `header ${p.name}`));
        }
      }

      if (c.security.length > 0 && !c.security.some((alt) => satisfies(alt, securitySchemes, headers))) {
        const wanted = c.security
          .map((alt) => Object.keys(alt).map((n) => describeScheme(securitySchemes[n])).join(' + ') || 'none')
          .join(' or ');
        problems.push(`credentials missing for ${c.info.operationId}: expected ${wanted}`);
      }

      const body = bodyText ?? '';
      const requestBody = c.op.requestBody;
      if (requestBody === undefined) {
        if (body !== '') problems.push(`${c.info.operationId} takes no request body, got ${preview(body)}`);
        return problems;
      }
      if (body === '') {
        if (requestBody.required === true) problems.push(`${c.info.operationId} requires a request body`);
        return problems;
      }
      const content = requestBody.content ?? {};
      const contentType = lookupHeader(headers, 'content-type');
      const media = findMediaType(content, contentType);
      if (media === undefined) {
        problems.push(
          `request content type ${contentType ?? '(none)'} is not documented for ${c.info.operationId} (documented: ${Object.keys(content).join(', ')})`,
        );
        return problems;
      }
      problems.push(...checkJsonBody(media, body, 'request body'));
      return problems;
    },
  };
  return contract;
}

function stripToPath(rawPath: string): string {
  let p = rawPath;
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(p)) p = new URL(p).pathname + new URL(p).search;
  const q = p.search(/[?#]/);
  return q === -1 ? p : p.slice(0, q);
}

function queryOf(rawPath: string): string {
  let p = rawPath;
  const hash = p.indexOf('#');
  if (hash !== -1) p = p.slice(0, hash);
  const q = p.indexOf('?');
  return q === -1 ? '' : p.slice(q + 1);
}

function lookupHeader(headers: Record<string, string | undefined>, name: string): string | undefined {
  const wanted = name.toLowerCase();
  for (const [k, v] of Object.entries(headers)) {
    if (k.toLowerCase() === wanted && v !== undefined) return v;
  }
  return undefined;
}

function cookieValue(headers: Record<string, string | undefined>, name: string): string | undefined {
  const cookie = lookupHeader(headers, 'cookie');
  if (cookie === undefined) return undefined;
  for (const part of cookie.split(';')) {
    const eq = part.indexOf('=');
    if (eq !== -1 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

function satisfies(
  alternative: Record<string, string[]>,
  schemes: Record<string, SecurityScheme>,
  headers: Record<string, string | undefined>,
): boolean {
  return Object.keys(alternative).every((name) => {
    const s = schemes[name];
    if (s === undefined) return false;
    if (s.type === 'http' && s.scheme?.toLowerCase() === 'bearer') {
      return /^Bearer\s+\S+/i.test(lookupHeader(headers, 'authorization') ?? '');
    }
    if (s.type === 'apiKey' && s.name !== undefined) {
      if (s.in === 'cookie') return (cookieValue(headers, s.name) ?? '') !== '';
      if (s.in === 'header') return (lookupHeader(headers, s.name) ?? '') !== '';
    }
    return false;
  });
}

function describeScheme(s: SecurityScheme | undefined): string {
  if (s === undefined) return 'an undefined scheme';
  if (s.type === 'http') return `Authorization: ${s.scheme ?? ''} <token>`;
  if (s.type === 'apiKey' && s.in === 'cookie') return `Cookie ${s.name ?? ''}=<token>`;
  return `${s.type} ${s.name ?? ''}`.trim();
}

function essence(contentType: string | null | undefined): string {
  return (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
}

function findMediaType(
  content: Record<string, MediaType>,
  contentType: string | null | undefined,
): { type: string; object: MediaType } | undefined {
  const actual = essence(contentType);
  if (actual === '') return undefined;
  for (const [type, object] of Object.entries(content)) {
    const declared = type.toLowerCase();
    if (declared === actual || declared === '*/*' || (declared.endsWith('/*') && actual.startsWith(declared.slice(0, -1)))) {
      return { type: actual, object };
    }
  }
  return undefined;
}

function isJson(type: string): boolean {
  return type === 'application/json' || type.endsWith('+json');
}

/**
 * Turns a query or header string into the JSON value its schema expects, leaving it a string when it is not one.
 * With a union type (`[integer, string]`, as Retry-After's), a string that reads as the non-string type becomes one.
 */
function coerce(value: string, schema: Json | undefined): unknown {
  const types = schema?.type;
  const type = Array.isArray(types) ? types.find((t) => t === 'integer' || t === 'number' || t === 'boolean') : types;
  if (type === 'integer' && /^[+-]?\d+$/.test(value.trim())) return Number(value);
  if (type === 'number' && value.trim() !== '' && !Number.isNaN(Number(value))) return Number(value);
  if (type === 'boolean' && (value === 'true' || value === 'false')) return value === 'true';
  return value;
}

function formatErrors(errors: ErrorObject[], where: string): string[] {
  return errors.map((e) => `${where}${e.instancePath === '' ? '' : ` ${e.instancePath}`}: ${e.message ?? e.keyword}${
    e.keyword === 'additionalProperties' ? ` (${String((e.params as { additionalProperty?: unknown }).additionalProperty)})` : ''
  }${e.keyword === 'enum' || e.keyword === 'const' ? ` (${JSON.stringify(e.params)})` : ''}`);
}

function preview(text: string): string {
  return JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}…` : text);
}
