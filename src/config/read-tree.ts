/**
 * SourceTree → the plain value that the JSON Schema validates, walking the schema alongside so
 * that what YAML itself cannot tell apart is caught where the schema expects a string: unquoted
 * text that YAML reads as a number, boolean, date or null, and `${VAR}` interpolation. Also finds
 * duplicate keys (the value keeps the last, as the yaml package does).
 */
import { describeBadKey, describeUnquoted } from './describe-unquoted.js';
import { interpolate } from './interpolate.js';
import { toPointer } from './json-pointer.js';
import type { PositionedMessage } from './parse-yaml.js';
import type { JsonSchema } from './schema-validator.js';
import type { SchemaWalker } from './schema-walker.js';
import { keyString, type SourceNode, type SourceScalar } from './source-tree.js';
import { UniqueMessages } from './unique-messages.js';

/** Nodes reached through aliases, at most: beyond this the document is an alias bomb. */
export const MAX_ALIAS_EXPANSION = 1_000_000;

export interface ReadTreeResult {
  value: unknown;
  problems: PositionedMessage[];
  /** JSON pointers (as in ajv's instancePath) whose value already has a problem: schema errors there add nothing. */
  claimed: Set<string>;
}

function expectsString(schema: JsonSchema | undefined): boolean {
  const type = schema?.type;
  return type === 'string' || (Array.isArray(type) && type.includes('string'));
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
  // Through aliases the same node is read more than once: each of its problems is reported once.
  const problems = new UniqueMessages();
  const claimed = new Set<string>();
  // Nodes being read: meeting one again inside itself (through an alias) is a cycle. Files
  // without aliases (all that the fast parser reads) cannot have one, and skip the bookkeeping.
  const trackCycles = containsAlias(root);
  const inProgress = new Set<SourceNode>();
  let expanded = 0;
  let aliasDepth = 0;
  let outermostAlias = root.pos;

  // The path to the node being read; joined into a pointer only when a problem claims it.
  const segments: string[] = [];
  const pointer = () => toPointer(segments);

  const read = (node: SourceNode, schema: JsonSchema | undefined): unknown => {
    if (aliasDepth > 0 && ++expanded > MAX_ALIAS_EXPANSION) throw new AliasBomb(outermostAlias);
    switch (node.kind) {
      case 'alias': {
        if (inProgress.has(node.target)) {
          problems.add(node.pos, 'this alias refers to a node that contains it: cycles are not allowed');
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
          if (first !== undefined) problems.add(key.pos, `duplicate key "${name}" (first at line ${first.pos.line})`);
          if (checkKeys) {
            const bad = describeBadKey(key);
            if (bad !== undefined) problems.add(key.pos, bad);
          }
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
        const unquoted = describeUnquoted(node);
        if (unquoted !== undefined) {
          problems.add(node.pos, unquoted);
          claimed.add(pointer());
          return node.value;
        }
        if (typeof node.value !== 'string') return node.value;
        const result = interpolate(node.value, env);
        if (result.ok) return result.value;
        for (const message of result.messages) problems.add(node.pos, message);
        claimed.add(pointer());
        return node.value;
      }
    }
  };

  try {
    return { value: read(root, walker.resolve(walker.root)), problems: problems.messages, claimed };
  } catch (err) {
    if (!(err instanceof AliasBomb)) throw err;
    return {
      value: undefined,
      problems: [{ pos: err.pos, message: `aliases expand this document to over ${MAX_ALIAS_EXPANSION} values: an alias bomb? The file is rejected` }],
      claimed,
    };
  }
}
