/**
 * A parsed YAML document reduced to what validation needs: mappings, lists and scalars with the
 * position where each starts. Both parsers (the fast one for plain files, the yaml package for the
 * rest) produce this, so that everything after parsing is the same whichever parser ran.
 */

export interface Position {
  /** 1-based. */
  line: number;
  /** 1-based. */
  col: number;
}

/** A message about the place in a file where it is written. */
export interface PositionedMessage {
  pos: Position;
  message: string;
}

export type SourceNode = SourceMap | SourceSeq | SourceScalar | SourceAlias;

export interface SourceMap {
  kind: 'map';
  pos: Position;
  /** In document order, duplicates included (the last one wins, as in the yaml package). */
  pairs: SourcePair[];
}

export interface SourcePair {
  key: SourceScalar;
  value: SourceNode;
}

export interface SourceSeq {
  kind: 'seq';
  pos: Position;
  items: SourceNode[];
}

export type ScalarValue = string | number | boolean | null;

export interface SourceScalar {
  kind: 'scalar';
  pos: Position;
  /** As YAML 1.2 (core schema) resolves it. */
  value: ScalarValue;
  /** The text as written (for quoted scalars, after unescaping). */
  source: string;
  /** Unquoted and untagged: YAML chose its type from its text, so it may not be the string the author meant. */
  plain: boolean;
}

/** `*name`: stands for the anchored node, which may be an ancestor (a cycle). */
export interface SourceAlias {
  kind: 'alias';
  pos: Position;
  target: SourceNode;
}

/** `key:` with no value is null; both parsers place it at its key, where a message about it belongs. */
export function emptyScalar(pos: Position): SourceScalar {
  return { kind: 'scalar', pos, value: null, source: '', plain: true };
}

/** A JSON-pointer-like path into the document: map keys and list indexes. */
export type DocPath = ReadonlyArray<string | number>;

/**
 * Messages, each said once: the same message at the same place comes again when a node is read
 * again through an alias, or when ajv refuses one value under several keywords (minLength and
 * pattern, say), and would only be noise.
 */
export class UniqueMessages {
  readonly messages: PositionedMessage[] = [];
  /** The messages said at each place (line and column as one number): most places have one. */
  private readonly said = new Map<number, string | string[]>();

  add(pos: Position, message: string): void {
    // Columns stay below 2^23 (a file is at most 4 MiB), lines below 2^23: the sum is exact.
    const place = pos.line * 0x800000 + pos.col;
    const earlier = this.said.get(place);
    if (earlier === undefined) this.said.set(place, message);
    else if (earlier === message || (typeof earlier !== 'string' && earlier.includes(message))) return;
    else if (typeof earlier === 'string') this.said.set(place, [earlier, message]);
    else earlier.push(message);
    this.messages.push({ pos, message });
  }
}

/*
 * JSON pointers (RFC 6901), the form ajv gives an error's place in (`instancePath`) and schemas
 * give a `$ref` in: "/"-separated segments, with "~" and "/" inside a segment escaped.
 */

export function escapePointerSegment(segment: string): string {
  // Most segments have neither character: skip the two scans of replaceAll for them.
  return segment.includes('~') || segment.includes('/') ? segment.replaceAll('~', '~0').replaceAll('/', '~1') : segment;
}

function unescapePointerSegment(segment: string): string {
  // ~1 first: "~01" stands for "~1", not "/".
  return segment.replaceAll('~1', '/').replaceAll('~0', '~');
}

export function toPointer(path: DocPath): string {
  let pointer = '';
  for (const segment of path) pointer += `/${escapePointerSegment(String(segment))}`;
  return pointer;
}

export function parsePointer(pointer: string): string[] {
  if (pointer === '') return [];
  return pointer.slice(1).split('/').map(unescapePointerSegment);
}

/** The key under which a map stores a pair, as the yaml package does when it builds a JS object. */
export function keyString(key: SourceScalar): string {
  return key.value === null ? '' : String(key.value);
}

const mapIndexes = new WeakMap<SourceMap, Map<string, SourcePair>>();

function indexMap(map: SourceMap): Map<string, SourcePair> {
  let index = mapIndexes.get(map);
  if (index === undefined) {
    index = new Map();
    for (const pair of map.pairs) index.set(keyString(pair.key), pair);
    mapIndexes.set(map, index);
  }
  return index;
}

export function resolveAlias(node: SourceNode): Exclude<SourceNode, SourceAlias> {
  let current = node;
  for (let hops = 0; current.kind === 'alias'; hops++) {
    if (hops > 1000) break;
    current = current.target;
  }
  return current as Exclude<SourceNode, SourceAlias>;
}

/** The node at `path` (through aliases), or undefined. */
export function findNode(root: SourceNode | null, path: DocPath): SourceNode | undefined {
  let node: SourceNode | undefined = root ?? undefined;
  for (const segment of path) {
    if (node === undefined) return undefined;
    const here = resolveAlias(node);
    if (here.kind === 'map') node = indexMap(here).get(String(segment))?.value;
    else if (here.kind === 'seq') node = here.items[Number(segment)];
    else return undefined;
  }
  return node === undefined ? undefined : resolveAlias(node);
}

/**
 * Where `path` is written: its value, or with `part: 'key'` the key that names it. A path that
 * goes further than the document stops at the deepest node found, so messages still point close.
 */
export function locate(root: SourceNode | null, path: DocPath, part: 'key' | 'value' = 'value'): Position {
  return walkTo(root, path, part).pos;
}

/**
 * Where the value at `path` is used, as opposed to written: through an alias on the way (`acme:
 * *shared`), that alias, since what it stands for is written where its anchor is, and stands there
 * for every place that uses it. `throughAlias` says which it is.
 */
export function locateUse(root: SourceNode | null, path: DocPath): { pos: Position; throughAlias: boolean } {
  const { pos, alias } = walkTo(root, path, 'value');
  return alias === undefined ? { pos, throughAlias: false } : { pos: alias, throughAlias: true };
}

/** The position of `path` (as locate), and of the first alias passed through on the way to it. */
function walkTo(root: SourceNode | null, path: DocPath, part: 'key' | 'value'): { pos: Position; alias: Position | undefined } {
  if (root === null) return { pos: { line: 1, col: 1 }, alias: undefined };
  let node = root;
  let alias: Position | undefined;
  for (let i = 0; i < path.length; i++) {
    const segment = path[i]!;
    if (node.kind === 'alias' && alias === undefined) alias = node.pos;
    const here = resolveAlias(node);
    if (here.kind === 'map') {
      const pair = indexMap(here).get(String(segment));
      if (pair === undefined) return { pos: here.pos, alias };
      if (i === path.length - 1 && part === 'key') return { pos: pair.key.pos, alias };
      node = pair.value;
    } else if (here.kind === 'seq') {
      // JSON pointers spell indexes as strings.
      const index = typeof segment === 'number' ? segment : /^(?:0|[1-9][0-9]*)$/.test(segment) ? Number(segment) : -1;
      const item = here.items[index];
      if (item === undefined) return { pos: here.pos, alias };
      node = item;
    } else {
      return { pos: here.pos, alias };
    }
  }
  return { pos: node.pos, alias };
}
