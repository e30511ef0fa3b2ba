/**
 * Parsed documents → the DesiredState, or every problem found. Pure: data in, data out. The order
 * of checks: the shape (JSON Schema, with messages rewritten for people), then what a schema cannot
 * say (an id listed twice, an invitation both accepted and revoked, an organisation declared in
 * two files), each on whatever parts are well-formed, so that one run reports everything.
 */
import type { ErrorObject } from 'ajv';
import { MAX_IDENTIFIER_LENGTH } from '../api/encode-segment.js';
import { BILLING_RESPONSE_FIELD, BILLING_UPDATE_FIELDS, type BillingUpdate } from '../api/types.js';
import { suggestKey } from './did-you-mean.js';
import { sortProblems } from './format-problem.js';
import type { PositionedMessage } from './parse-yaml.js';
import { escapePointerSegment, readTree, SchemaWalker } from './read-tree.js';
import type { SchemaValidator } from './schema-validator.js';
import { findNode, keyString, locate, type DocPath, type Position, type SourceNode, type SourcePair } from './source-tree.js';
import type { ConfigProblem, DesiredOrganisation, DesiredState } from './types.js';

export interface ParsedDocument {
  /** As shown in messages: as given on the command line, relative to the working directory. */
  file: string;
  /** Of the file's bytes. */
  sha256: string;
  /** null when the document has no content. */
  root: SourceNode | null;
}

export type LoadResult = { ok: true; state: DesiredState } | { ok: false; problems: ConfigProblem[] };

export interface ValidateOptions {
  env: Readonly<Record<string, string | undefined>>;
  validator: SchemaValidator;
}

export const SUPPORTED_VERSION = 1;

type JsonObject = Record<string, unknown>;

function isRecord(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function own(record: JsonObject, key: string): unknown {
  return Object.hasOwn(record, key) ? record[key] : undefined;
}

// ---------------------------------------------------------------------------------------------
// Schema errors, as people read them

function parsePointer(pointer: string): string[] {
  if (pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((s) => s.replaceAll('~1', '/').replaceAll('~0', '~'));
}

function valueAt(value: unknown, path: readonly string[]): unknown {
  let current = value;
  for (const segment of path) {
    if (Array.isArray(current)) current = current[Number(segment)];
    else if (isRecord(current)) current = own(current, segment);
    else return undefined;
  }
  return current;
}

function describeValue(value: unknown): string {
  if (value === null || value === undefined) return 'nothing (null)';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  if (typeof value === 'boolean') return 'true/false';
  return `a ${typeof value}`;
}

const TYPE_NAMES: Record<string, string> = {
  object: 'a mapping',
  array: 'a list',
  string: 'a string',
  number: 'a number',
  integer: 'an integer',
  boolean: 'true/false',
  null: 'nothing',
};

function describeTypes(type: unknown): string {
  const types = (Array.isArray(type) ? type : String(type).split(',')) as string[];
  return types.map((t) => TYPE_NAMES[t] ?? t).join(' or ');
}

/** What an identifier at `path` is called in messages. */
function nameIdentifier(path: readonly string[]): string {
  const [top, , field, list] = path;
  if (top === 'activeOrganisation') return 'activeOrganisation';
  if (top !== 'organisations') return 'identifier';
  if (path.length === 2) return 'organisation slug';
  if (field === 'id') return 'organisation id';
  if (field === 'invitations' && list !== undefined) return 'invitation id';
  if (field === 'notificationChannels' && list !== undefined) return 'channel id';
  return 'identifier';
}

/**
 * Why `value` cannot be this identifier. The same rules as the client's checkIdentifier (which
 * would refuse it at apply time), plus, for slugs, no "/" or whitespace at all.
 */
function describeBadIdentifier(value: string, name: string): string {
  const shown = JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  const isSlug = name === 'organisation slug' || name === 'activeOrganisation';
  // eslint-disable-next-line no-control-regex
  const control = isSlug ? /[\u0000-\u001f\u007f-\u009f]/ : /[\u0000-\u001f\u007f]/;
  if (value === '') return `${name} must not be empty`;
  if (value === '.' || value === '..') return `${name} must not be "${value}": it would change the URL path`;
  if (value.length > MAX_IDENTIFIER_LENGTH) return `${name} is ${value.length} characters long (at most ${MAX_IDENTIFIER_LENGTH})`;
  if (control.test(value)) return `${name} ${shown} must not contain control characters`;
  if (isSlug && value.includes('/')) return `${name} ${shown} must not contain "/"`;
  if (isSlug) return `${name} ${shown} must not contain whitespace`;
  return `${name} ${shown} must not start or end with whitespace`;
}

function describeUnknownKey(key: string, path: readonly string[], walker: SchemaWalker): string {
  if (key === '<<') return 'merge keys (<<) are not supported: put what organisations share under defaults';
  if (path.length === 1 && path[0] === 'defaults') return `unknown key "${key}" under defaults: only billing can have defaults`;
  const responseSpelt = BILLING_UPDATE_FIELDS.find((field) => BILLING_RESPONSE_FIELD[field] === key && field !== key);
  if (responseSpelt !== undefined) {
    return `unknown key "${key}"; did you mean "${responseSpelt}"? (orgs files use the update spelling: customerID, subscriptionID, platformID)`;
  }
  const allowed = Object.keys((walker.at(path)?.properties as JsonObject | undefined) ?? {});
  const suggestion = suggestKey(key, allowed);
  if (suggestion !== undefined) return `unknown key "${key}"; did you mean "${suggestion}"?`;
  return allowed.length > 0 ? `unknown key "${key}"; expected one of: ${allowed.join(', ')}` : `unknown key "${key}"`;
}

function describeVersion(value: unknown): string {
  if (value === String(SUPPORTED_VERSION)) return `version must be the number ${SUPPORTED_VERSION}, unquoted`;
  const shown = typeof value === 'string' ? JSON.stringify(value) : String(value);
  return `unsupported version ${shown}: this orgform reads version ${SUPPORTED_VERSION}`;
}

interface SchemaErrorContext {
  root: SourceNode;
  value: unknown;
  walker: SchemaWalker;
  claimed: ReadonlySet<string>;
}

function describeSchemaError(error: ErrorObject, ctx: SchemaErrorContext): PositionedMessage | undefined {
  // propertyNames: the errors of the key itself follow, with propertyName set. uniqueItems: checked below with places.
  if (error.keyword === 'propertyNames' || error.keyword === 'uniqueItems') return undefined;
  const path = parsePointer(error.instancePath);
  if (error.propertyName !== undefined) {
    const keyPath = [...path, error.propertyName];
    return { pos: locate(ctx.root, keyPath, 'key'), message: describeBadIdentifier(error.propertyName, nameIdentifier(keyPath)) };
  }
  if (ctx.claimed.has(error.instancePath)) return undefined;
  const value = valueAt(ctx.value, path);
  const params = error.params as JsonObject;
  switch (error.keyword) {
    case 'additionalProperties': {
      const key = String(params.additionalProperty);
      return { pos: locate(ctx.root, [...path, key], 'key'), message: describeUnknownKey(key, path, ctx.walker) };
    }
    case 'required': {
      const missing = String(params.missingProperty);
      const message =
        missing === 'version' && path.length === 0
          ? `missing "version: ${SUPPORTED_VERSION}": every orgs file starts with its format version`
          : `missing required key "${missing}"`;
      return { pos: locate(ctx.root, path), message };
    }
    case 'type': {
      let message = `expected ${describeTypes(params.type)}, got ${describeValue(value)}`;
      if (params.type === 'array' && typeof value === 'string') message += `: write [${value}]`;
      return { pos: locate(ctx.root, path), message };
    }
    case 'const':
      return { pos: locate(ctx.root, path), message: path.join('/') === 'version' ? describeVersion(value) : `must be ${JSON.stringify(params.allowedValue)}` };
    case 'format':
      return {
        pos: locate(ctx.root, path),
        message: params.format === 'email' ? `${JSON.stringify(value)} is not an e-mail address` : `${JSON.stringify(value)} is not a valid ${String(params.format)}`,
      };
    case 'minLength':
    case 'maxLength':
    case 'pattern':
    case 'not':
      return { pos: locate(ctx.root, path), message: describeBadIdentifier(String(value), nameIdentifier(path)) };
    default:
      return { pos: locate(ctx.root, path), message: error.message ?? `fails ${error.keyword}` };
  }
}

// ---------------------------------------------------------------------------------------------
// What each document declares, read defensively: parts of the wrong shape were reported above

/** An id in a list (or an organisation's own id), with what is needed to place it in a message. */
interface Item {
  id: string;
  owner: DeclaredOrganisation;
  /** Where it stands: the list and the index in it, or the id's own path. */
  path: DocPath;
  index: number | undefined;
  list: string;
}

interface DeclaredOrganisation {
  document: DeclaredDocument;
  slug: string;
  keyPos: Position;
  id: Item | undefined;
  billing: BillingUpdate | undefined;
  accept: Item[];
  revoke: Item[];
  remove: Item[];
}

interface DeclaredDocument {
  doc: ParsedDocument;
  root: SourceNode;
  active: string | undefined;
  organisations: DeclaredOrganisation[];
}

function pickBilling(value: unknown): BillingUpdate {
  const billing: BillingUpdate = {};
  if (!isRecord(value)) return billing;
  for (const field of BILLING_UPDATE_FIELDS) {
    const v = own(value, field);
    if (typeof v === 'string') billing[field] = v;
  }
  return billing;
}

function toPointer(path: DocPath): string {
  return path.map((segment) => `/${escapePointerSegment(String(segment))}`).join('');
}

/** Values that already have a problem take no part in the checks across lists: one message each is enough. */
type Flawed = ReadonlySet<string>;

/** The organisation's own values over the defaults, in the canonical field order. */
function mergeBilling(defaults: BillingUpdate, own: BillingUpdate): BillingUpdate {
  const merged: BillingUpdate = {};
  for (const field of BILLING_UPDATE_FIELDS) {
    const value = own[field] ?? defaults[field];
    if (value !== undefined) merged[field] = value;
  }
  return merged;
}

function pickItems(owner: DeclaredOrganisation, value: unknown, path: DocPath, flawed: Flawed): Item[] {
  if (!Array.isArray(value)) return [];
  const list = String(path[path.length - 1]);
  const items: Item[] = [];
  for (let index = 0; index < value.length; index++) {
    const id: unknown = value[index];
    if (typeof id !== 'string') continue;
    if (flawed.size > 0 && flawed.has(toPointer([...path, index]))) continue;
    items.push({ id, owner, path, index, list });
  }
  return items;
}

function itemPath(item: Item): DocPath {
  return item.index === undefined ? item.path : [...item.path, item.index];
}

function declare(doc: ParsedDocument, root: SourceNode, value: unknown, flawed: Flawed): DeclaredDocument {
  const top = isRecord(value) ? value : {};
  const activeValue = own(top, 'activeOrganisation');
  const defaults = own(top, 'defaults');
  const defaultBilling = pickBilling(isRecord(defaults) ? own(defaults, 'billing') : undefined);
  const document: DeclaredDocument = { doc, root, active: typeof activeValue === 'string' ? activeValue : undefined, organisations: [] };
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
    const idPath = [...base, 'id'];
    const id = own(org, 'id');
    if (typeof id === 'string' && !(flawed.size > 0 && flawed.has(toPointer(idPath)))) {
      declared.id = { id, owner: declared, path: idPath, index: undefined, list: 'id' };
    }
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

// ---------------------------------------------------------------------------------------------
// Checks across lists, organisations and files

/** Something declared at a place in a file: the key or the value at `path`. */
interface Place {
  document: DeclaredDocument;
  path: DocPath;
  part: 'key' | 'value';
}

const itemPlace = (item: Item): Place => ({ document: item.owner.document, path: itemPath(item), part: 'value' });
const slugPlace = (org: DeclaredOrganisation): Place => ({ document: org.document, path: ['organisations', org.slug], part: 'key' });
const activePlace = (document: DeclaredDocument): Place => ({ document, path: ['activeOrganisation'], part: 'value' });

function positionOf(place: Place): Position {
  return locate(place.document.root, place.path, place.part);
}

/** Where `other` stands, as seen from a message about `here`: a line in the same file, else FILE:LINE:COL. */
function describePlace(other: Place, here: Place): string {
  const pos = positionOf(other);
  if (other.document.doc.file !== here.document.doc.file) return `${other.document.doc.file}:${pos.line}:${pos.col}`;
  return pos.line === positionOf(here).line ? `line ${pos.line}, column ${pos.col}` : `line ${pos.line}`;
}

function checkAcrossDocuments(documents: readonly DeclaredDocument[]): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const report = (here: Place, message: string) => {
    const pos = positionOf(here);
    problems.push({ file: here.document.doc.file, line: pos.line, col: pos.col, message });
  };
  // The first of each; a later one is the one reported.
  const slugs = new Map<string, DeclaredOrganisation>();
  const orgIds = new Map<string, Item>();
  const invitations = new Map<string, Item>();
  const channels = new Map<string, Item>();
  let active: DeclaredDocument | undefined;

  const checkListed = (item: Item, seenItems: Map<string, Item>, noun: string) => {
    const seen = seenItems.get(item.id);
    if (seen === undefined) {
      seenItems.set(item.id, item);
      return;
    }
    const here = itemPlace(item);
    const there = describePlace(itemPlace(seen), here);
    if (seen.owner !== item.owner) report(here, `${noun} "${item.id}" is also listed under organisation "${seen.owner.slug}" (${there})`);
    else if (seen.list === item.list) report(here, `${noun} "${item.id}" is listed twice (first at ${there})`);
    else report(here, `${noun} "${item.id}" is both accepted (${there}) and revoked: keep one`);
  };

  for (const document of documents) {
    if (document.active !== undefined) {
      if (active === undefined) active = document;
      else {
        const here = activePlace(document);
        report(here, `activeOrganisation is already set at ${describePlace(activePlace(active), here)}: set it in one file only`);
      }
    }
    for (const org of document.organisations) {
      const first = slugs.get(org.slug);
      if (first === undefined) slugs.set(org.slug, org);
      else report(slugPlace(org), `organisation "${org.slug}" is already declared at ${describePlace(slugPlace(first), slugPlace(org))}`);

      if (org.id !== undefined) {
        const seen = orgIds.get(org.id.id);
        if (seen === undefined) orgIds.set(org.id.id, org.id);
        else {
          const here = itemPlace(org.id);
          report(here, `id "${org.id.id}" is also the id of organisation "${seen.owner.slug}" (${describePlace(itemPlace(seen), here)})`);
        }
      }
      for (const item of org.accept) checkListed(item, invitations, 'invitation');
      for (const item of org.revoke) checkListed(item, invitations, 'invitation');
      for (const item of org.remove) checkListed(item, channels, 'channel');
    }
  }
  return problems;
}

// ---------------------------------------------------------------------------------------------

function toDesired(org: DeclaredOrganisation): DesiredOrganisation {
  const pos = org.keyPos;
  return {
    slug: org.slug,
    ...(org.id !== undefined && { id: org.id.id }),
    ...(org.billing !== undefined && { billing: org.billing }),
    invitations: { accept: org.accept.map((i) => i.id), revoke: org.revoke.map((i) => i.id) },
    notificationChannels: { remove: org.remove.map((i) => i.id) },
    source: { file: org.document.doc.file, line: pos.line, col: pos.col },
  };
}

function checkDocument(
  doc: ParsedDocument,
  walker: SchemaWalker,
  options: ValidateOptions,
): { problems: ConfigProblem[]; declared: DeclaredDocument | undefined } {
  const toProblem = ({ pos, message }: PositionedMessage): ConfigProblem => ({ file: doc.file, line: pos.line, col: pos.col, message });
  if (doc.root === null) {
    return {
      problems: [toProblem({ pos: { line: 1, col: 1 }, message: `the file declares nothing: an orgs file starts with "version: ${SUPPORTED_VERSION}"` })],
      declared: undefined,
    };
  }
  const tree = readTree(doc.root, walker, options.env);
  const problems = tree.problems.map(toProblem);
  if (tree.value === undefined) return { problems, declared: undefined };

  const flawed = new Set(tree.claimed);
  const { validate } = options.validator;
  if (!validate(tree.value)) {
    const ctx: SchemaErrorContext = { root: doc.root, value: tree.value, walker, claimed: tree.claimed };
    const seen = new Set<string>();
    for (const error of validate.errors ?? []) {
      flawed.add(error.instancePath);
      const described = describeSchemaError(error, ctx);
      if (described === undefined) continue;
      const id = `${described.pos.line}:${described.pos.col}:${described.message}`;
      if (seen.has(id)) continue;
      seen.add(id);
      problems.push(toProblem(described));
    }
  }
  return { problems, declared: declare(doc, doc.root, tree.value, flawed) };
}

export function validateDocuments(docs: readonly ParsedDocument[], options: ValidateOptions): LoadResult {
  const walker = new SchemaWalker(options.validator.schema);
  const problems: ConfigProblem[] = [];
  const documents: DeclaredDocument[] = [];
  for (const doc of docs) {
    const checked = checkDocument(doc, walker, options);
    problems.push(...checked.problems);
    if (checked.declared !== undefined) documents.push(checked.declared);
  }
  problems.push(...checkAcrossDocuments(documents));
  if (problems.length > 0) return { ok: false, problems: sortProblems(problems, docs.map((d) => d.file)) };

  const organisations = documents
    .flatMap((declared) => declared.organisations.map(toDesired))
    .sort((a, b) => (a.slug < b.slug ? -1 : a.slug > b.slug ? 1 : 0));
  const activeIn = documents.find((d) => d.active !== undefined);
  const activePos = activeIn && locate(activeIn.root, ['activeOrganisation']);
  const state: DesiredState = {
    version: SUPPORTED_VERSION,
    ...(activeIn?.active !== undefined &&
      activePos !== undefined && {
        activeOrganisation: { slug: activeIn.active, source: { file: activeIn.doc.file, ...activePos } },
      }),
    organisations,
    files: docs.map((d) => ({ path: d.file, sha256: d.sha256 })),
  };
  return { ok: true, state };
}

/** One document on its own (see validateDocuments for several, which also checks across them). */
export function validateDocument(doc: ParsedDocument, options: ValidateOptions): LoadResult {
  return validateDocuments([doc], options);
}
