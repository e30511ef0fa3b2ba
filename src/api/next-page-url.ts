/**
 * Where the next page of a listing is, from a `next` that is "cursor or link" (interface §2).
 * A URL (absolute or relative) is followed as given but only on the same origin and path; any
 * other non-empty string is sent as the `cursor` query parameter; empty or missing ends the listing.
 */
export type NextPage = { kind: 'end' } | { kind: 'url'; url: URL } | { kind: 'refused'; reason: string };

export function resolveNextPage(next: unknown, current: URL): NextPage {
  if (next === undefined || next === null || next === '') return { kind: 'end' };
  if (typeof next !== 'string') return { kind: 'refused', reason: `"next" is a ${typeof next}, not a string` };
  const looksLikeLink = /^[a-z][a-z0-9+.-]*:\/\//i.test(next) || next.startsWith('/') || next.startsWith('?');
  if (!looksLikeLink) {
    const url = new URL(current);
    url.searchParams.set('cursor', next);
    return { kind: 'url', url };
  }
  let url: URL;
  try {
    url = new URL(next, current);
  } catch {
    return { kind: 'refused', reason: 'the "next" link is not a valid URL' };
  }
  if (url.origin !== current.origin) return { kind: 'refused', reason: `the "next" link points to another origin (${url.origin})` };
  if (url.pathname !== current.pathname) return { kind: 'refused', reason: `the "next" link points to another path (${url.pathname})` };
  return { kind: 'url', url };
}
