/**
 * Opaque listing cursors. A cursor names a position by key (slug, id) rather than by offset, so
 * that a chain of pages never repeats an organisation even while memberships change. It is signed
 * so that a cursor the server did not issue is recognised and refused (400 invalid_request).
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export type OrganisationKey = readonly [slug: string, id: string];

export interface ListCursor {
  /** `after`: the page that follows `key`; `before`: the page that precedes it. */
  direction: 'after' | 'before';
  /** Null only with `after`: the start of the list, after a page that held only the active organisation. */
  key: OrganisationKey | null;
  /** The active organisation that headed the first page, kept out of the later pages. */
  exclude: string | null;
  /** The filter the chain was started with (lower-cased), carried so that links need not repeat it. */
  filter: string | null;
  /** Answer this position first with an empty page that links on to it (the `empty-pages` point). */
  pad?: boolean;
  /** Makes the cursor's text new each time it is issued, as an encrypted cursor's is (the `fresh-cursors` point). */
  nonce?: string;
  /** How many pages the chain has had before the one this cursor leads to (`page-size: shrinking` sizes pages by it). */
  page?: number;
}

export interface CursorCodec {
  encode(cursor: ListCursor): string;
  /** Undefined when the text is not a cursor this codec issued. */
  decode(text: string): ListCursor | undefined;
}

export function createCursorCodec(secret: Buffer = randomBytes(32)): CursorCodec {
  const sign = (payload: string) => createHmac('sha256', secret).update(payload).digest().subarray(0, 12);
  return {
    encode(cursor) {
      const tuple = [cursor.direction === 'after' ? 'a' : 'b', cursor.key?.[0] ?? null, cursor.key?.[1] ?? null, cursor.exclude, cursor.filter];
      if (cursor.pad === true || cursor.nonce !== undefined || cursor.page !== undefined) tuple.push(cursor.pad === true ? 'pad' : null, cursor.nonce ?? null);
      if (cursor.page !== undefined) tuple.push(String(cursor.page));
      const payload = Buffer.from(JSON.stringify(tuple)).toString('base64url');
      return `${payload}.${sign(payload).toString('base64url')}`;
    },
    decode(text) {
      const [payload, signature, extra] = text.split('.');
      if (payload === undefined || signature === undefined || extra !== undefined) return undefined;
      const given = Buffer.from(signature, 'base64url');
      const expected = sign(payload);
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
      try {
        return parseTuple(JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')));
      } catch {
        return undefined;
      }
    },
  };
}

function parseTuple(value: unknown): ListCursor | undefined {
  if (!Array.isArray(value) || (value.length !== 5 && value.length !== 7 && value.length !== 8)) return undefined;
  const [d, slug, id, exclude, filter, pad, nonce, page] = value as unknown[];
  const optionalString = (v: unknown) => v === null || typeof v === 'string';
  if ((d !== 'a' && d !== 'b') || !optionalString(slug) || !optionalString(id)) return undefined;
  if (!optionalString(exclude) || !optionalString(filter)) return undefined;
  const key = typeof slug === 'string' && typeof id === 'string' ? ([slug, id] as const) : null;
  if (d === 'b' && key === null) return undefined;
  return {
    direction: d === 'a' ? 'after' : 'before',
    key,
    exclude: exclude as string | null,
    filter: filter as string | null,
    ...(pad === 'pad' ? { pad: true } : {}),
    ...(typeof nonce === 'string' ? { nonce } : {}),
    ...(typeof page === 'string' && /^\d{1,9}$/.test(page) ? { page: Number(page) } : {}),
  };
}
