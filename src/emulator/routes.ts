/**
 * Method + raw path -> operation. The path is split on `/` before any decoding, and each parameter
 * is exactly one decoded segment, so `org%3Ahooli%2Feu` is the identifier `org:hooli/eu`.
 */
import type { OperationId } from '../api/types.js';

interface RouteDefinition {
  method: string;
  operation: OperationId;
  segments: readonly string[];
}

const ORG_API = ['api', 'organisations', 'v1'];
const V2_API = ['api', 'v2'];

const ROUTES: readonly RouteDefinition[] = [
  { method: 'GET', operation: 'getOrganisations', segments: [...ORG_API, 'organisations'] },
  { method: 'GET', operation: 'getOrganisation', segments: [...ORG_API, 'organisations', ':organisationId'] },
  { method: 'PUT', operation: 'setActiveOrganisation', segments: [...ORG_API, 'organisations', ':organisationId', 'active'] },
  { method: 'PUT', operation: 'updateBillingDetails', segments: [...ORG_API, 'organisations', ':organisationId', 'billing'] },
  { method: 'GET', operation: 'getSlugAvailability', segments: [...ORG_API, 'slug', ':slug', 'availability'] },
  {
    method: 'PUT',
    operation: 'acceptInvitation',
    segments: [...ORG_API, 'organisations', ':organisationId', 'invitations', ':invitationId', 'accept'],
  },
  {
    method: 'DELETE',
    operation: 'deleteInvitation',
    segments: [...ORG_API, 'organisations', ':organisationId', 'invitations', ':invitationId'],
  },
  {
    method: 'DELETE',
    operation: 'deleteNotificationChannel',
    segments: [...V2_API, 'o', ':organisationId', 'notification_channels', ':channelId'],
  },
];

export type RouteParams = Partial<Record<'organisationId' | 'invitationId' | 'channelId' | 'slug', string>>;

export type RouteMatch =
  | { kind: 'operation'; operation: OperationId; params: RouteParams }
  | { kind: 'method-not-allowed'; operation: OperationId; allow: string[] }
  | { kind: 'not-found' }
  | { kind: 'bad-encoding'; operation: OperationId };

/** The raw path and query of a request target, without parsing it as a URL (which would fold `//`). */
export function splitTarget(target: string): { path: string; query: string } {
  let path = target;
  const hash = path.indexOf('#');
  if (hash >= 0) path = path.slice(0, hash);
  const question = path.indexOf('?');
  const query = question >= 0 ? path.slice(question + 1) : '';
  if (question >= 0) path = path.slice(0, question);
  // Absolute-form targets (`GET http://host/path`) are legal HTTP; keep only their path.
  const absolute = /^[a-z][a-z0-9+.-]*:\/\/[^/]*/i.exec(path);
  if (absolute) path = path.slice(absolute[0].length) || '/';
  return { path, query };
}

export function matchRoute(method: string, rawPath: string): RouteMatch {
  if (!rawPath.startsWith('/')) return { kind: 'not-found' };
  const segments = rawPath.slice(1).split('/');
  let allowed: { operation: OperationId; allow: string[] } | undefined;
  for (const route of ROUTES) {
    const raw = matchSegments(route.segments, segments);
    if (!raw) continue;
    if (route.method !== method) {
      allowed ??= { operation: route.operation, allow: [] };
      allowed.allow.push(route.method);
      continue;
    }
    const params: RouteParams = {};
    for (const [name, value] of Object.entries(raw)) {
      try {
        params[name as keyof RouteParams] = decodeURIComponent(value);
      } catch {
        return { kind: 'bad-encoding', operation: route.operation };
      }
    }
    return { kind: 'operation', operation: route.operation, params };
  }
  return allowed ? { kind: 'method-not-allowed', ...allowed } : { kind: 'not-found' };
}

function matchSegments(pattern: readonly string[], segments: readonly string[]): Record<string, string> | undefined {
  if (pattern.length !== segments.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < pattern.length; i += 1) {
    const expected = pattern[i] as string;
    const actual = segments[i] as string;
    if (expected.startsWith(':')) {
      if (actual === '') return undefined;
      params[expected.slice(1)] = actual;
    } else if (expected !== actual) {
      return undefined;
    }
  }
  return params;
}
