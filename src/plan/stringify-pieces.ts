/**
 * `JSON.stringify(value, null, space)` in pieces, byte for byte: so that a machine output of a large
 * plan (the JSON document; a saved plan is written a record a line, plan/saved-plan.ts) is written
 * as it is made, and is never one string. A single string of a plan of about a million changes
 * would pass V8's longest string, and the document and its text held together cost several times
 * the plan.
 *
 * The walk descends into arrays at any depth and into plain objects near the top (OBJECT_DEPTH),
 * and leaves everything under them to JSON.stringify itself, one element at a time: a change or an
 * organisation is small, the lists of them are what grow. A `LazyArray` is written as the array of
 * its mapped items, mapped one at a time, so that a view of a large list (the wire form of the
 * changes) is never built whole either.
 */

/** Plain objects at depths below this are walked key by key; deeper ones are stringified whole. */
const OBJECT_DEPTH = 3;

/** Pieces handed over are at least this long (the last may be shorter): few enough writes, little held. */
const PIECE_LENGTH = 64 * 1024;

/** A list written as `items.map(map)`, without the mapped list ever being made. */
export class LazyArray<T> {
  constructor(
    readonly items: readonly T[],
    readonly map: (item: T) => unknown,
  ) {}

  /** What JSON.stringify makes of it (for callers that want the whole string after all). */
  toJSON(): unknown[] {
    return this.items.map((item) => this.map(item));
  }
}

/** The text so far, handed over once it is a piece long. */
class PieceBuffer {
  private parts: string[] = [];
  private length = 0;

  push(text: string): void {
    this.parts.push(text);
    this.length += text.length;
  }

  get full(): boolean {
    return this.length >= PIECE_LENGTH;
  }

  take(): string {
    const text = this.parts.join('');
    this.parts = [];
    this.length = 0;
    return text;
  }
}

interface Walk {
  /** The indentation step (JSON.stringify's `space`); '' for compact text. */
  space: string;
  buffer: PieceBuffer;
}

/**
 * The pieces of `JSON.stringify(value, null, space)` for a value that stringifies to text (not
 * `undefined`); `space` as a string of spaces, as JSON.stringify takes it.
 */
export function* stringifyPieces(value: unknown, space = ''): Generator<string> {
  const walk: Walk = { space, buffer: new PieceBuffer() };
  yield* writeValue(value, '', 0, walk);
  const rest = walk.buffer.take();
  if (rest !== '') yield rest;
}

/** A value: walked when it is a list or an object near the top, otherwise stringified whole (without a generator of its own). */
function* writeValue(value: unknown, indent: string, depth: number, walk: Walk): Generator<string> {
  if (value instanceof LazyArray) yield* writeItems(value.items, value.map, indent, depth, walk);
  else if (Array.isArray(value)) yield* writeItems(value, (item) => item, indent, depth, walk);
  else if (depth < OBJECT_DEPTH && isPlainObject(value)) yield* writeObject(value, indent, depth, walk);
  else if (pushLeaf(value, indent, walk)) yield walk.buffer.take();
}

function isWalked(value: unknown, depth: number): boolean {
  return value instanceof LazyArray || Array.isArray(value) || (depth < OBJECT_DEPTH && isPlainObject(value));
}

/** Adds a value's whole text; true when the buffer is then a piece long. */
function pushLeaf(value: unknown, indent: string, walk: Walk): boolean {
  // As JSON.stringify writes what has no JSON form in an array (undefined, a function): null.
  walk.buffer.push(stringifyLeaf(value, indent, walk.space) ?? 'null');
  return walk.buffer.full;
}

function* writeItems<T>(items: readonly T[], map: (item: T) => unknown, indent: string, depth: number, walk: Walk): Generator<string> {
  if (items.length === 0) {
    walk.buffer.push('[]');
    return;
  }
  const inner = indent + walk.space;
  const open = walk.space === '' ? '' : `\n${inner}`;
  walk.buffer.push('[');
  for (let i = 0; i < items.length; i += 1) {
    walk.buffer.push(i === 0 ? open : `,${open}`);
    const item = map(items[i] as T);
    if (isWalked(item, depth + 1)) yield* writeValue(item, inner, depth + 1, walk);
    else if (pushLeaf(item, inner, walk)) yield walk.buffer.take();
  }
  walk.buffer.push(walk.space === '' ? ']' : `\n${indent}]`);
}

function* writeObject(value: Record<string, unknown>, indent: string, depth: number, walk: Walk): Generator<string> {
  // As JSON.stringify leaves out a member whose value has no JSON form.
  const keys = Object.keys(value).filter((key) => hasJsonForm(value[key]));
  if (keys.length === 0) {
    walk.buffer.push('{}');
    return;
  }
  const inner = indent + walk.space;
  const open = walk.space === '' ? '' : `\n${inner}`;
  const colon = walk.space === '' ? ':' : ': ';
  walk.buffer.push('{');
  for (let i = 0; i < keys.length; i += 1) {
    const key = keys[i] as string;
    walk.buffer.push(`${i === 0 ? open : `,${open}`}${JSON.stringify(key)}${colon}`);
    const member = value[key];
    if (isWalked(member, depth + 1)) yield* writeValue(member, inner, depth + 1, walk);
    else if (pushLeaf(member, inner, walk)) yield walk.buffer.take();
  }
  walk.buffer.push(walk.space === '' ? '}' : `\n${indent}}`);
}

function hasJsonForm(value: unknown): boolean {
  return value !== undefined && typeof value !== 'function' && typeof value !== 'symbol';
}

/** Objects JSON.stringify writes as their own keys: a class instance (or one with toJSON) is left to it. */
function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || typeof (value as { toJSON?: unknown }).toJSON === 'function') return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

/**
 * JSON.stringify's text of a value at this indentation: its own lines moved in by `indent` (a JSON
 * text has no line break but those between its members: breaks in strings are escaped).
 */
function stringifyLeaf(value: unknown, indent: string, space: string): string | undefined {
  const text = JSON.stringify(value, null, space) as string | undefined;
  if (text === undefined || space === '' || indent === '') return text;
  return text.replaceAll('\n', `\n${indent}`);
}
