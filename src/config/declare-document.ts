/**
 * What each document declares, read defensively from the value that was validated: parts of the
 * wrong shape were reported by the schema, and are left out here rather than read as something.
 */
import { BILLING_FIELDS, billingRecord, type BillingDetails } from '../model/billing.js';
import type { SourcePosition } from '../model/desired-state.js';
import { type DocPath, findNode, keyString, locate, locateUse, type Position, type SourceNode, type SourcePair, toPointer } from './source-tree.js';
import { detachString } from './detached-string.js';
import { isRecord, own, valueAt } from './value-at.js';

/** An id in a list (or an organisation's own id), with where it stands, for messages that name it. */
export interface Item {
  id: string;
  owner: DeclaredOrganisation;
  /** The list it is in (`accept`, `revoke`, `remove`), or `id`. */
  list: string;
  /** Where the organisation has it: its own place, or an alias on the way to it (see `throughAlias`). */
  pos: Position;
  /** Reached through an alias (at `pos`) of a mapping or list written elsewhere. */
  throughAlias: boolean;
  /**
   * A list that an alias repeats from an earlier organisation (or list) is one item, its first id,
   * standing for all: each of its ids is listed twice, and this is how many more there are.
   */
  more: number;
  /** The id as written, when it came from the environment (`${ORGFORM_VAR_…}`): messages quote this instead. */
  written?: string;
}

export interface DeclaredOrganisation {
  document: DeclaredDocument;
  slug: string;
  /** Where its key stands: the desired organisation's `source`, the same object. */
  source: SourcePosition;
  id: Item | undefined;
  billing: BillingDetails | undefined;
  accept: Item[];
  revoke: Item[];
  remove: Item[];
}

/**
 * What a document declares, with the positions messages need taken from the tree as it is read:
 * the tree itself is let go once the document is checked (a directory of bulk files is not held in
 * memory all at once).
 */
export interface DeclaredDocument {
  /** As shown in messages. */
  file: string;
  active: { slug: string; pos: Position } | undefined;
  organisations: DeclaredOrganisation[];
}

/** Values that already have a problem take no part in the checks across lists: one message each is enough. */
export interface Flawed {
  readonly size: number;
  has(pointer: string): boolean;
}

function isFlawed(flawed: Flawed, path: DocPath): boolean {
  // Most documents have no problem at all: build no pointers for them.
  return flawed.size > 0 && flawed.has(toPointer(path));
}

/** The lists picked so far in a document, by the value read: a list repeated through an alias is the same value. */
type Picked = Map<unknown, Item[]>;

/** What readTree says came from the environment, by pointer (see ReadTreeResult.interpolated). */
type Interpolated = ReadonlyMap<string, string>;

function writtenAt(interpolated: Interpolated, path: DocPath): { written: string } | undefined {
  if (interpolated.size === 0) return undefined;
  const written = interpolated.get(toPointer(path));
  return written === undefined ? undefined : { written };
}

/** The strings of the list at `path` (relative to the organisation's node, `orgNode`); the rest were reported by the schema. */
function pickItems(owner: DeclaredOrganisation, orgNode: SourceNode, value: unknown, path: DocPath, base: DocPath, flawed: Flawed, picked: Picked, interpolated: Interpolated): Item[] {
  if (!Array.isArray(value)) return [];
  const list = String(path[path.length - 1]);
  const earlier = picked.get(value);
  if (earlier !== undefined) {
    // The same list again, through an alias: every id is a duplicate. One item reports them all, at
    // the alias, so that a list of a thousand ids shared by a thousand organisations is not a million.
    const first = earlier[0];
    return first === undefined ? [] : [{ id: first.id, owner, list, pos: locateUse(orgNode, path).pos, throughAlias: true, more: earlier.length - 1, ...(first.written === undefined ? {} : { written: first.written }) }];
  }
  const items: Item[] = [];
  for (let index = 0; index < value.length; index++) {
    const id: unknown = value[index];
    if (typeof id !== 'string' || isFlawed(flawed, [...base, ...path, index])) continue;
    const use = locateUse(orgNode, [...path, index]);
    items.push({ id: detachString(id), owner, list, pos: use.pos, throughAlias: use.throughAlias, more: 0, ...writtenAt(interpolated, [...base, ...path, index]) });
  }
  picked.set(value, items);
  return items;
}

/** `value` is what readTree built from `root`; `flawed`, the pointers in it that already have a problem. */
export function declareDocument(file: string, root: SourceNode, value: unknown, flawed: Flawed, interpolated: Interpolated = new Map()): DeclaredDocument {
  const top = isRecord(value) ? value : {};
  const activeValue = own(top, 'activeOrganisation');
  const defaultBilling = pickBilling(valueAt(top, ['defaults', 'billing']));
  const document: DeclaredDocument = {
    file,
    active: typeof activeValue === 'string' ? { slug: detachString(activeValue), pos: locate(root, ['activeOrganisation']) } : undefined,
    organisations: [],
  };
  const orgs = own(top, 'organisations');
  if (!isRecord(orgs)) return document;

  // In the order written, from the tree (object key order would put integer-like slugs first).
  const orgsNode = findNode(root, ['organisations']);
  const pairs = new Map<string, SourcePair>();
  const picked: Picked = new Map();
  for (const pair of orgsNode?.kind === 'map' ? orgsNode.pairs : []) pairs.set(keyString(pair.key), pair);
  for (const [slug, pair] of pairs) {
    const orgValue = own(orgs, slug);
    const org = isRecord(orgValue) ? orgValue : {};
    const base = ['organisations', slug];
    const billing = mergeBilling(defaultBilling, pickBilling(own(org, 'billing')));
    const declared: DeclaredOrganisation = {
      document,
      slug: detachString(slug),
      source: { file, line: pair.key.pos.line, col: pair.key.pos.col },
      id: undefined,
      billing: Object.keys(billing).length > 0 ? billing : undefined,
      accept: [],
      revoke: [],
      remove: [],
    };
    const id = own(org, 'id');
    if (typeof id === 'string' && !isFlawed(flawed, [...base, 'id'])) declared.id = { id: detachString(id), owner: declared, list: 'id', ...locateUse(pair.value, ['id']), more: 0, ...writtenAt(interpolated, [...base, 'id']) };
    // Read with own() rather than valueAt(): this runs for every organisation, and it is measurably faster.
    const invitations = own(org, 'invitations');
    if (isRecord(invitations)) {
      declared.accept = pickItems(declared, pair.value, own(invitations, 'accept'), ['invitations', 'accept'], base, flawed, picked, interpolated);
      declared.revoke = pickItems(declared, pair.value, own(invitations, 'revoke'), ['invitations', 'revoke'], base, flawed, picked, interpolated);
    }
    const channels = own(org, 'notificationChannels');
    if (isRecord(channels)) declared.remove = pickItems(declared, pair.value, own(channels, 'remove'), ['notificationChannels', 'remove'], base, flawed, picked, interpolated);
    document.organisations.push(declared);
  }
  return document;
}

// Billing as the organisations get it: `defaults.billing` under each organisation's own billing,
// field by field, so that a file states shared values (the billing e-mail, say) once.

/** The billing fields that `value` sets as strings; the rest were reported by the schema. */
function pickBilling(value: unknown): BillingDetails {
  const billing: BillingDetails = {};
  if (!isRecord(value)) return billing;
  for (const field of BILLING_FIELDS) {
    const v = own(value, field);
    if (typeof v === 'string') billing[field] = detachString(v);
  }
  return billing;
}

/** The organisation's own values over the defaults, in the canonical field order (held to the end of a run: compact). */
function mergeBilling(defaults: BillingDetails, own: BillingDetails): BillingDetails {
  return billingRecord((field) => own[field] ?? defaults[field]);
}
