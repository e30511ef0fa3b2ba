/**
 * SourceTree → the plain value that the JSON Schema validates, walking the schema alongside so
 * that what YAML itself cannot tell apart is caught where the schema expects a string: unquoted
 * text that YAML reads as a number, boolean, date or null, and `${VAR}` interpolation. Also finds
 * duplicate keys (the value keeps the last, as the yaml package does).
 */
import { detectImplicitType, type ImplicitType } from './detect-implicit-type.js';
import { interpolate } from './interpolate.js';
import type { PositionedMessage } from './parse-yaml.js';
import type { JsonSchema } from './schema-validator.js';
import { keyString, type SourceNode, type SourceScalar } from './source-tree.js';

/** Nodes reached through aliases, at most: beyond this the document is an alias bomb. */
export const MAX_ALIAS_EXPANSION = 1_000_000;

export interface ReadTreeResult {
  value: unknown;
  problems: PositionedMessage[];
  /** JSON pointers (as in ajv's instancePath) whose value already has a problem: schema errors there add nothing. */
  claimed: Set<string>;
}

export function escapePointerSegment(segment: string): string {
  return segment.includes('~') || segment.includes('/') ? segment.replaceAll('~', '~0').replaceAll('/', '~1') : segment;
}

/** Resolves local `$ref`s (`#/$defs/...`) of one schema, remembering each. */
export class SchemaWalker {
  private readonly refs = new Map<string, JsonSchema>();
  constructor(readonly root: JsonSchema) {}

  resolve(schema: JsonSchema | undefined): JsonSchema | undefined {
    let current = schema;
    for (let hops = 0; current !== undefined && typeof current.$ref === 'string' && hops < 32; hops++) {
      const ref = current.$ref as string;
      let target = this.refs.get(ref);
      if (target === undefined) {
        target = this.lookup(ref);
        if (target === undefined) return undefined;
        this.refs.set(ref, target);
      }
      current = target;
    }
    return current;
  }

  private lookup(ref: string): JsonSchema | undefined {
    if (!ref.startsWith('#/')) return undefined;
    let node: unknown = this.root;
    for (const raw of ref.slice(2).split('/')) {
      const segment = raw.replaceAll('~1', '/').replaceAll('~0', '~');
      if (typeof node !== 'object' || node === null) return undefined;
      node = (node as Record<string, unknown>)[segment];
    }
    return typeof node === 'object' && node !== null ? (node as JsonSchema) : undefined;
  }

  /** The schema for the value under `key` of an object that `schema` describes. */
  property(schema: JsonSchema | undefined, key: string): JsonSchema | undefined {
    if (schema === undefined) return undefined;
    const properties = schema.properties as Record<string, JsonSchema> | undefined;
    if (properties !== undefined && Object.hasOwn(properties, key)) return this.resolve(properties[key]);
    const additional = schema.additionalProperties;
    return typeof additional === 'object' && additional !== null ? this.resolve(additional as JsonSchema) : undefined;
  }

  items(schema: JsonSchema | undefined): JsonSchema | undefined {
    const items = schema?.items;
    return typeof items === 'object' && items !== null ? this.resolve(items as JsonSchema) : undefined;
  }

  /** The schema at a path of object keys and list indexes from the root. */
  at(path: ReadonlyArray<string | number>): JsonSchema | undefined {
    let schema = this.resolve(this.root);
    for (const segment of path) {
      schema = typeof segment === 'number' ? this.items(schema) : this.property(schema, segment);
      if (schema === undefined) return undefined;
    }
    return schema;
  }
}

function expectsString(schema: JsonSchema | undefined): boolean {
  const type = schema?.type;
  return type === 'string' || (Array.isArray(type) && type.includes('string'));
}

const TYPE_WORDS: Record<ImplicitType, string> = { null: 'null', boolean: 'a boolean', number: 'a number', date: 'a date' };

function describeUnquoted(scalar: SourceScalar, type: ImplicitType): string {
  if (scalar.source === '') return 'no value here (YAML reads an empty value as null): write a value or remove the key';
  return `unquoted ${scalar.source} would be read as ${TYPE_WORDS[type]}, not a string: quote it: "${scalar.source}"`;
}

function setProperty(target: Record<string, unknown>, key: string, value: unknown): void {
  // A key named __proto__ must become data, not the object's prototype.
  if (key === '__proto__') Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
  else target[key] = value;
}

function containsAlias(node: SourceNode): boolean {
  switch (node.kind) {
    case 'alias':
      return true;
    case 'map':
      return node.pairs.some((pair) => containsAlias(pair.value));
    case 'seq':
      return node.items.some(containsAlias);
    case 'scalar':
      return false;
  }
}

class AliasBomb extends Error {
  constructor(readonly pos: { line: number; col: number }) {
    super('alias bomb');
  }
}

export function readTree(root: SourceNode, walker: SchemaWalker, env: Readonly<Record<string, string | undefined>>): ReadTreeResult {
  const problems: PositionedMessage[] = [];
  const claimed = new Set<string>();
  const reported = new Set<string>();
  // Nodes being read: meeting one again inside itself (through an alias) is a cycle. Files
  // without aliases (all that the fast parser reads) cannot have one, and skip the bookkeeping.
  const trackCycles = containsAlias(root);
  const inProgress = new Set<SourceNode>();
  let expanded = 0;
  let aliasDepth = 0;
  let outermostAlias = root.pos;

  // Through aliases the same node is read more than once: report each of its problems once.
  const report = (pos: { line: number; col: number }, message: string): void => {
    const id = `${pos.line}:${pos.col}:${message}`;
    if (reported.has(id)) return;
    reported.add(id);
    problems.push({ pos, message });
  };

  // The path to the node being read; joined into a pointer only when a problem claims it.
  const segments: string[] = [];
  const pointer = () => segments.map((s) => `/${escapePointerSegment(s)}`).join('');

  const read = (node: SourceNode, schema: JsonSchema | undefined): unknown => {
    if (aliasDepth > 0 && ++expanded > MAX_ALIAS_EXPANSION) throw new AliasBomb(outermostAlias);
    switch (node.kind) {
      case 'alias': {
        if (inProgress.has(node.target)) {
          report(node.pos, 'this alias refers to a node that contains it: cycles are not allowed');
          claimed.add(pointer());
          return null;
        }
        if (aliasDepth === 0) outermostAlias = node.pos;
        aliasDepth += 1;
        try {
          return read(node.target, schema);
        } finally {
          aliasDepth -= 1;
        }
      }
      case 'map': {
        if (trackCycles) inProgress.add(node);
        const object: Record<string, unknown> = {};
        const checkKeys = schema?.propertyNames !== undefined;
        const { pairs } = node;
        // Most maps are small: a Map to find duplicates pays off only for the big ones.
        const firstKeys = pairs.length > 16 ? new Map<string, SourceScalar>() : undefined;
        for (let p = 0; p < pairs.length; p++) {
          const { key, value } = pairs[p]!;
          const name = keyString(key);
          let first: SourceScalar | undefined;
          if (firstKeys === undefined) {
            for (let q = 0; q < p && first === undefined; q++) if (keyString(pairs[q]!.key) === name) first = pairs[q]!.key;
          } else {
            first = firstKeys.get(name);
            if (first === undefined) firstKeys.set(name, key);
          }
          if (first !== undefined) report(key.pos, `duplicate key "${name}" (first at line ${first.pos.line})`);
          if (checkKeys) checkKey(key);
          segments.push(name);
          setProperty(object, name, read(value, walker.property(schema, name)));
          segments.pop();
        }
        inProgress.delete(node);
        return object;
      }
      case 'seq': {
        if (trackCycles) inProgress.add(node);
        const itemSchema = walker.items(schema);
        const array = node.items.map((item, i) => {
          segments.push(String(i));
          const value = read(item, itemSchema);
          segments.pop();
          return value;
        });
        inProgress.delete(node);
        return array;
      }
      case 'scalar': {
        if (!expectsString(schema)) return node.value;
        if (node.plain) {
          const implicit = detectImplicitType(node.source);
          if (implicit !== undefined) {
            report(node.pos, describeUnquoted(node, implicit));
            claimed.add(pointer());
            return node.value;
          }
        }
        if (typeof node.value !== 'string') return node.value;
        const result = interpolate(node.value, env);
        if (result.ok) return result.value;
        for (const message of result.messages) report(node.pos, message);
        claimed.add(pointer());
        return node.value;
      }
    }
  };

  const checkKey = (key: SourceScalar): void => {
    if (key.plain && key.source === '') {
      report(key.pos, 'empty key: write the slug');
      return;
    }
    if (key.plain) {
      const implicit = detectImplicitType(key.source);
      if (implicit !== undefined) {
        report(key.pos, describeUnquoted(key, implicit));
        return;
      }
    }
    if (typeof key.value === 'string' && key.value.includes('${')) {
      report(key.pos, '${...} is not interpolated in keys: write the slug itself');
    }
  };

  try {
    return { value: read(root, walker.resolve(walker.root)), problems, claimed };
  } catch (err) {
    if (!(err instanceof AliasBomb)) throw err;
    return {
      value: undefined,
      problems: [{ pos: err.pos, message: `aliases expand this document to over ${MAX_ALIAS_EXPANSION} values: an alias bomb? The file is rejected` }],
      claimed,
    };
  }
}
