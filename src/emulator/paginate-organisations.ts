/**
 * One page of GetOrganisations over a user's organisations already sorted by (slug, id)
 * (decisions, "Listing"): unfiltered, the first page is headed by the active organisation and the
 * rest follow by slug; filtered, simply by slug. Positions are keys, found by binary search.
 */
import type { Organisation } from '../api/types.js';
import type { ListCursor, OrganisationKey } from './cursor-codec.js';

export interface PageRequest {
  /** The user's organisations matching `filter` (all of them without one), sorted by (slug, id). */
  list: readonly Organisation[];
  /** The user's active organisation, when the user is a member of it. */
  active: Organisation | undefined;
  /** Lower-cased, non-empty, or null for no filter: the cursor's when there is a cursor. */
  filter: string | null;
  limit: number;
  cursor: ListCursor | null;
  findMember: (id: string) => Organisation | undefined;
}

export interface Page {
  organisations: Organisation[];
  totalCount: number;
  next?: ListCursor;
  prev?: ListCursor;
}

export function paginateOrganisations(request: PageRequest): Page {
  const { cursor, limit, list, filter } = request;
  const exclude = filter !== null ? null : cursor ? cursor.exclude : (request.active?.id ?? null);
  const head = filter === null && exclude !== null ? request.findMember(exclude) : undefined;
  const base = { totalCount: list.length };
  const at = (i: number) => list[i] as Organisation;
  const skip = (i: number, step: 1 | -1) => {
    while (i >= 0 && i < list.length && at(i).id === exclude) i += step;
    return i;
  };
  const link = (direction: ListCursor['direction'], key: OrganisationKey | null): ListCursor => ({ direction, key, exclude, filter });

  if (cursor?.direction === 'before' && cursor.key) {
    const end = lowerBound(list, cursor.key);
    const items: Organisation[] = [];
    let i = skip(end - 1, -1);
    while (i >= 0 && items.length < limit) {
      items.push(at(i));
      i = skip(i - 1, -1);
    }
    items.reverse();
    const moreBefore = i >= 0;
    const page = !moreBefore && head && items.length < limit ? [head, ...items] : items;
    const last = items[items.length - 1];
    const moreAfter = skip(end, 1) < list.length;
    return {
      ...base,
      organisations: page,
      ...(moreAfter ? { next: link('after', last ? keyOf(last) : null) } : {}),
      ...((moreBefore || (head && page[0] !== head)) && items[0] ? { prev: link('before', keyOf(items[0])) } : {}),
    };
  }

  const firstPage = cursor === null;
  const items: Organisation[] = firstPage && head ? [head] : [];
  let i = skip(cursor?.key ? upperBound(list, cursor.key) : 0, 1);
  const firstTail = i < list.length ? at(i) : undefined;
  let lastTail: Organisation | undefined;
  while (i < list.length && items.length < limit) {
    lastTail = at(i);
    items.push(lastTail);
    i = skip(i + 1, 1);
  }
  const moreAfter = i < list.length;
  return {
    ...base,
    organisations: items,
    ...(moreAfter ? { next: link('after', lastTail ? keyOf(lastTail) : null) } : {}),
    ...(!firstPage && firstTail && lastTail ? { prev: link('before', keyOf(firstTail)) } : {}),
  };
}

/**
 * `page-size: shrinking`: the first page as asked, each next one half the one before (rounded
 * up), down to a tenth of what was asked (at least 1), as a service shedding load may answer.
 */
export function shrinkingPageSize(asked: number, pagesBefore: number): number {
  const floor = Math.max(1, Math.ceil(asked / 10));
  return Math.max(floor, Math.ceil(asked / 2 ** Math.min(pagesBefore, 30)));
}

export function keyOf(org: Organisation): OrganisationKey {
  return [org.slug, org.id];
}

export function compareKeys(a: OrganisationKey, b: OrganisationKey): number {
  if (a[0] !== b[0]) return a[0] < b[0] ? -1 : 1;
  if (a[1] !== b[1]) return a[1] < b[1] ? -1 : 1;
  return 0;
}

/** First index whose key is >= `key`. */
function lowerBound(list: readonly Organisation[], key: OrganisationKey): number {
  return search(list, (org) => compareKeys(keyOf(org), key) >= 0);
}

/** First index whose key is > `key`. */
function upperBound(list: readonly Organisation[], key: OrganisationKey): number {
  return search(list, (org) => compareKeys(keyOf(org), key) > 0);
}

function search(list: readonly Organisation[], isAtOrPast: (org: Organisation) => boolean): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (isAtOrPast(list[mid] as Organisation)) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}
