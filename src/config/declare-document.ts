/**
 * What each document declares, read defensively from the value that was validated: parts of the
 * wrong shape were reported by the schema, and are left out here rather than read as something.
 */
import type { BillingDetails } from '../model/billing.js';
import { toPointer } from './json-pointer.js';
import { mergeBilling, pickBilling } from './merge-billing.js';
import { findNode, keyString, type DocPath, type Position, type SourceNode, type SourcePair } from './source-tree.js';
import { isRecord, own, valueAt } from './value-at.js';

/** An id in a list (or an organisation's own id), with what is needed to place it in a message. */
export interface Item {
  id: string;
  owner: DeclaredOrganisation;
  /** Where it stands: the list and the index in it, or the id's own path. */
  path: DocPath;
  index: number | undefined;
  list: string;
}

export interface DeclaredOrganisation {
  document: DeclaredDocument;
  slug: string;
  keyPos: Position;
  id: Item | undefined;
  billing: BillingDetails | undefined;
  accept: Item[];
  revoke: Item[];
  remove: Item[];
}

export interface DeclaredDocument {
  /** As shown in messages. */
  file: string;
  root: SourceNode;
  active: string | undefined;
  organisations: DeclaredOrganisation[];
}

/** Values that already have a problem take no part in the checks across lists: one message each is enough. */
export type Flawed = ReadonlySet<string>;

export function itemPath(item: Item): DocPath {
  return item.index === undefined ? item.path : [...item.path, item.index];
}

function isFlawed(flawed: Flawed, item: Item): boolean {
  // Most documents have no problem at all: build no pointers for them.
  return flawed.size > 0 && flawed.has(toPointer(itemPath(item)));
}

function pickItems(owner: DeclaredOrganisation, value: unknown, path: DocPath, flawed: Flawed): Item[] {
  if (!Array.isArray(value)) return [];
  const list = String(path[path.length - 1]);
  const items: Item[] = [];
  for (let index = 0; index < value.length; index++) {
    const id: unknown = value[index];
    if (typeof id !== 'string') continue;
    const item: Item = { id, owner, path, index, list };
    if (!isFlawed(flawed, item)) items.push(item);
  }
  return items;
}

/** `value` is what readTree built from `root`; `flawed`, the pointers in it that already have a problem. */
export function declareDocument(file: string, root: SourceNode, value: unknown, flawed: Flawed): DeclaredDocument {
  const top = isRecord(value) ? value : {};
  const activeValue = own(top, 'activeOrganisation');
  const defaultBilling = pickBilling(valueAt(top, ['defaults', 'billing']));
  const document: DeclaredDocument = { file, root, active: typeof activeValue === 'string' ? activeValue : undefined, organisations: [] };
  const orgs = own(top, 'organisations');
  if (!isRecord(orgs)) return document;

  // In the order written, from the tree (object key order would put integer-like slugs first).
  const orgsNode = findNode(root, ['organisations']);
  const pairs = new Map<string, SourcePair>();
  for (const pair of orgsNode?.kind === 'map' ? orgsNode.pairs : []) pairs.set(keyString(pair.key), pair);
  for (const [slug, pair] of pairs) {
    const orgValue = own(orgs, slug);
    const org = isRecord(orgValue) ? orgValue : {};
    const base = ['organisations', slug];
    const billing = mergeBilling(defaultBilling, pickBilling(own(org, 'billing')));
    const declared: DeclaredOrganisation = {
      document,
      slug,
      keyPos: pair.key.pos,
      id: undefined,
      billing: Object.keys(billing).length > 0 ? billing : undefined,
      accept: [],
      revoke: [],
      remove: [],
    };
    const id = own(org, 'id');
    if (typeof id === 'string') {
      const item: Item = { id, owner: declared, path: [...base, 'id'], index: undefined, list: 'id' };
      if (!isFlawed(flawed, item)) declared.id = item;
    }
    // Read with own() rather than valueAt(): this runs for every organisation, and it is measurably faster.
    const invitations = own(org, 'invitations');
    if (isRecord(invitations)) {
      declared.accept = pickItems(declared, own(invitations, 'accept'), [...base, 'invitations', 'accept'], flawed);
      declared.revoke = pickItems(declared, own(invitations, 'revoke'), [...base, 'invitations', 'revoke'], flawed);
    }
    const channels = own(org, 'notificationChannels');
    if (isRecord(channels)) declared.remove = pickItems(declared, own(channels, 'remove'), [...base, 'notificationChannels', 'remove'], flawed);
    document.organisations.push(declared);
  }
  return document;
}
