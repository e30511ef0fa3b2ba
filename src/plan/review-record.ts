/**
 * The reviewed plan as a pull request comment carries it: a marker, one line, hidden in the
 * Markdown (`<!-- orgform-digest sha256:… RECORD -->`), holding the digest and, when it fits, the
 * plan's essence (plan-digest.ts) compressed: what apply needs to say how a fresh plan differs from
 * the one reviewed (compare-with-reviewed.ts). A record is data from a comment anyone may have
 * written: it is checked field by field, bounded when unpacked, and its own digest must be the one
 * the marker names, or it is refused.
 */
import { gunzipSync, gzipSync } from 'node:zlib';
import { OrgformError } from '../errors.js';
import { BILLING_FIELDS, type BillingDetails, type BillingField, type SeenBilling } from '../model/billing.js';
import { KIND_ORDER, type ChangeKind } from '../model/change-kind.js';
import { DIGEST_PATTERN, digestEssence, essenceLine, type ChangeEssence, type PlanEssence } from './plan-digest.js';

/** A record longer than this is left out of the marker (the digest stays): the comment's room is the plan's. */
export const MAX_RECORD_LENGTH = 16_000;

/** What a record may unpack to, at most: a record that claims more is refused unread. */
const MAX_UNPACKED_BYTES = 8 * 1024 * 1024;

const RECORD_VERSION = 1;

/** The marker's one line: `<!-- orgform-digest sha256:HEX -->`, with the record before `-->` when there is one. */
export function reviewMarker(digest: string, record?: string): string {
  return `<!-- orgform-digest ${digest}${record === undefined ? '' : ` ${record}`} -->`;
}

const MARKER = /^<!-- orgform-digest (sha256:[0-9a-f]{64})(?: ([A-Za-z0-9_-]+))? -->$/;

/** A marker line read back: the digest, and the record when there is one; undefined when the line is not a marker. */
export function parseReviewMarker(line: string): { digest: string; record?: string } | undefined {
  const match = MARKER.exec(line.trim());
  if (match === null) return undefined;
  return { digest: match[1]!, ...(match[2] === undefined ? {} : { record: match[2] }) };
}

/** The essence packed for a marker: base64url of gzip of its lines; undefined when that is longer than `max`. */
export function encodeReviewRecord(essence: PlanEssence, max: number = MAX_RECORD_LENGTH): string | undefined {
  // Lines, not objects: the same array form the digest hashes, a third of the size.
  const json = JSON.stringify({ v: RECORD_VERSION, service: essence.service, changes: essence.changes.map(essenceLine) });
  // A record of plain JSON is at least a tenth of its text once packed: no need to pack a huge one.
  if (json.length > max * 20) return undefined;
  const packed = gzipSync(json, { level: 9 }).toString('base64url');
  return packed.length <= max ? packed : undefined;
}

function bad(what: string): OrgformError {
  return new OrgformError('PLAN_INVALID', `The reviewed plan's record ${what}, so it cannot be compared. Nothing was applied.`);
}

/** A record back to the essence it packs, checked; its digest must be `digest`. */
export function decodeReviewRecord(record: string, digest: string): PlanEssence {
  let json: string;
  try {
    json = gunzipSync(Buffer.from(record, 'base64url'), { maxOutputLength: MAX_UNPACKED_BYTES }).toString('utf8');
  } catch {
    throw bad('cannot be unpacked (cut short, or not a record)');
  }
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    throw bad('is not JSON');
  }
  const essence = essenceFromRecord(value);
  if (!DIGEST_PATTERN.test(digest) || digestEssence(essence) !== digest) throw bad(`does not give its digest ${digest} (it was edited)`);
  return essence;
}

function essenceFromRecord(value: unknown): PlanEssence {
  if (!isObject(value) || value.v !== RECORD_VERSION) throw bad(`is not of version ${RECORD_VERSION}`);
  if (typeof value.service !== 'string' || !Array.isArray(value.changes)) throw bad('has no service or no changes');
  return { service: value.service, changes: value.changes.map((line, i) => changeFromLine(line, i)) };
}

function changeFromLine(line: unknown, index: number): ChangeEssence {
  const wrong = (what: string) => bad(`has a malformed change (${index + 1}: ${what})`);
  if (!Array.isArray(line) || line.length !== 8) throw wrong('not a change');
  const [address, kind, organisation, target, declared, seen, knownAfter, activeFrom] = line as unknown[];
  if (typeof address !== 'string' || typeof organisation !== 'string') throw wrong('address or organisation');
  if (typeof kind !== 'string' || !Object.hasOwn(KIND_ORDER, kind)) throw wrong('kind');
  if (!(target === null || typeof target === 'string') || !(knownAfter === null || typeof knownAfter === 'string') || !(activeFrom === null || typeof activeFrom === 'string')) {
    throw wrong('target, accept or active organisation');
  }
  const declaredFields = declared === null ? undefined : (fieldsFromPairs(declared, false, wrong) as BillingDetails);
  const seenFields = seen === null ? undefined : fieldsFromPairs(seen, true, wrong);
  return {
    address,
    kind: kind as ChangeKind,
    organisation,
    ...(target === null ? {} : { target }),
    ...(declaredFields === undefined ? {} : { declared: declaredFields }),
    ...(seenFields === undefined ? {} : { seen: seenFields }),
    ...(knownAfter === null ? {} : { knownAfter }),
    ...(kind === 'set-active' ? { activeFrom } : {}),
  };
}

function fieldsFromPairs(pairs: unknown, nullable: boolean, wrong: (what: string) => OrgformError): SeenBilling {
  if (!Array.isArray(pairs)) throw wrong('billing fields');
  const fields: SeenBilling = {};
  for (const pair of pairs) {
    if (!Array.isArray(pair) || pair.length !== 2) throw wrong('billing fields');
    const [field, value] = pair as unknown[];
    if (typeof field !== 'string' || !(BILLING_FIELDS as readonly string[]).includes(field) || Object.hasOwn(fields, field)) throw wrong('billing field name');
    if (!(typeof value === 'string' || (nullable && value === null))) throw wrong(`billing field ${field}`);
    fields[field as BillingField] = value as string | null;
  }
  return fields;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
