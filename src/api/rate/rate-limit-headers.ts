/**
 * What an answer's rate-limit headers say, as a pure function of the headers, so that the rate
 * can be set before the first 429. Read, in order of precedence:
 * - the IETF httpapi draft (draft-ietf-httpapi-ratelimit-headers): `RateLimit-Policy:
 *   "default";q=100;w=10` with `RateLimit: "default";r=50;t=30` (draft 08 on), the draft-07
 *   `RateLimit: limit=100, remaining=50, reset=30` with `RateLimit-Policy: 100;w=10`, and the older
 *   `RateLimit-Limit` / `-Remaining` / `-Reset`;
 * - the common `X-RateLimit-Limit` / `-Remaining` / `-Reset`. They name no window: the limit is read
 *   as per second (as gateways and the emulator send it) unless Reset is an epoch time, the mark of a
 *   long fixed window (GitHub's hourly one), where only an empty Remaining says anything: wait for Reset.
 * Anything malformed is ignored, never an error: these headers are advice.
 */
import type { RateLimitHint } from './adaptive-rate.js';

/** Values above this are epoch seconds, not seconds from now (a delta of 30 years is not a reset). */
const EPOCH_SECONDS_FLOOR = 1_000_000_000;

type HeaderGetter = (name: string) => string | undefined;

interface Member {
  /** The bare item: a policy name, a number, or `key=value` in the draft-07 dictionary. */
  item: string;
  params: Map<string, string>;
}

/** Splits on `sep` outside double quotes. */
function splitOutsideQuotes(text: string, sep: string): string[] {
  const parts: string[] = [];
  let current = '';
  let quoted = false;
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i]!;
    if (c === '"' && text[i - 1] !== '\\') quoted = !quoted;
    if (c === sep && !quoted) {
      parts.push(current);
      current = '';
    } else {
      current += c;
    }
  }
  parts.push(current);
  return parts;
}

/** A structured-field list (RFC 9651), read loosely: members, each an item with `;key=value` parameters. */
function parseList(value: string): Member[] {
  return splitOutsideQuotes(value, ',')
    .map((member) => {
      const [item = '', ...rest] = splitOutsideQuotes(member, ';').map((p) => p.trim());
      const params = new Map<string, string>();
      for (const p of rest) {
        const eq = p.indexOf('=');
        if (eq > 0) params.set(p.slice(0, eq).trim().toLowerCase(), unquote(p.slice(eq + 1).trim()));
      }
      return { item, params };
    })
    .filter((m) => m.item !== '' || m.params.size > 0);
}

function unquote(text: string): string {
  return text.length >= 2 && text.startsWith('"') && text.endsWith('"') ? text.slice(1, -1) : text;
}

/** A non-negative finite number, or undefined. */
function number(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const t = text.trim();
  if (!/^\d+(\.\d+)?$/.test(t)) return undefined;
  const n = Number(t);
  return Number.isFinite(n) ? n : undefined;
}

/** The most restrictive long-run rate of the policies listed: min(quota ÷ window). */
function policyRate(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  let rps: number | undefined;
  for (const m of parseList(value)) {
    // Draft 08 on: `"name";q=100;w=10`. Before: `100;w=10`.
    const quota = number(m.params.get('q')) ?? number(m.item);
    const window = number(m.params.get('w'));
    if (quota === undefined || window === undefined || window <= 0 || quota <= 0) continue;
    rps = Math.min(rps ?? Infinity, quota / window);
  }
  return rps;
}

/** Seconds from now, or an epoch time in seconds, as milliseconds from now. */
function resetMs(seconds: number | undefined, nowMs: number): number | undefined {
  if (seconds === undefined) return undefined;
  return seconds >= EPOCH_SECONDS_FLOOR ? Math.max(0, seconds * 1000 - nowMs) : seconds * 1000;
}

function quota(remaining: number | undefined, reset: number | undefined): RateLimitHint {
  return { ...(remaining === undefined ? {} : { remaining }), ...(reset === undefined ? {} : { resetMs: reset }) };
}

/** The RateLimit field: the member with the fewest requests left (draft 08 on), or the draft-07 dictionary. */
function combinedField(value: string | undefined, nowMs: number): RateLimitHint {
  if (value === undefined) return {};
  const members = parseList(value);
  let best: RateLimitHint = {};
  for (const m of members) {
    const r = number(m.params.get('r'));
    if (r === undefined) continue;
    if (best.remaining === undefined || r < best.remaining) best = quota(r, resetMs(number(m.params.get('t')), nowMs));
  }
  if (best.remaining !== undefined) return best;
  // Draft 07: `limit=10, remaining=5, reset=30`, a dictionary whose items are key=value.
  const dict = new Map<string, string>();
  for (const m of members) {
    const eq = m.item.indexOf('=');
    if (eq > 0) dict.set(m.item.slice(0, eq).trim().toLowerCase(), m.item.slice(eq + 1).trim());
  }
  return quota(number(dict.get('remaining')), resetMs(number(dict.get('reset')), nowMs));
}

export function parseRateLimitHeaders(get: HeaderGetter, nowMs: number): RateLimitHint | undefined {
  const policy = get('ratelimit-policy');
  const combined = get('ratelimit');
  const legacyRemaining = get('ratelimit-remaining');
  const xLimit = get('x-ratelimit-limit');
  const xRemaining = get('x-ratelimit-remaining');
  if (policy === undefined && combined === undefined && legacyRemaining === undefined && xLimit === undefined && xRemaining === undefined) return undefined;

  let hint: RateLimitHint = {};
  const rps = policyRate(policy);
  if (combined !== undefined || legacyRemaining !== undefined) {
    hint = combined !== undefined ? combinedField(combined, nowMs) : quota(number(legacyRemaining), resetMs(number(get('ratelimit-reset')), nowMs));
  } else if (xLimit !== undefined || xRemaining !== undefined) {
    const rawReset = number(get('x-ratelimit-reset'));
    hint = quota(number(xRemaining), resetMs(rawReset, nowMs));
    const limit = number(xLimit);
    const fixedWindow = rawReset !== undefined && rawReset >= EPOCH_SECONDS_FLOOR;
    if (rps === undefined && limit !== undefined && limit > 0 && !fixedWindow) hint = { rps: limit, ...hint };
  }
  if (rps !== undefined) hint = { rps, ...hint };
  return hint.rps === undefined && hint.remaining === undefined && hint.resetMs === undefined ? undefined : hint;
}
