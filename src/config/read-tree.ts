/**
 * SourceTree → the plain value that the JSON Schema validates, walking the schema alongside so
 * that what YAML itself cannot tell apart is caught where the schema expects a string: unquoted
 * text that YAML reads as a number, boolean, date or null, `${VAR}` interpolation, and strings that
 * hold what cannot be sent or seen (describe-hidden-character.ts). Also finds duplicate keys (the
 * value keeps the last, as the yaml package does).
 *
 * A mapping or list that aliases use is read once per schema it is read under, and its value is
 * shared wherever it appears again. The value given to the schema holds an empty mapping or list
 * there instead, so that the schema checks it once too, not once per alias: its problems are the
 * same each time, at the same place in the file, and a file of a few kilobytes may otherwise expand
 * to a million values that all fail. fillRepeats puts the shared values in place once it is checked.
 */
import { nameField, nameIdentifier } from './describe-bad-identifier.js';
import { describeHiddenCharacter } from './describe-hidden-character.js';
import { describeBadKey, describeUnquoted } from './describe-unquoted.js';
import { hasReference, interpolate, type ConfigVariables } from './interpolate.js';
import { toPointer } from './json-pointer.js';
import { keyString, type PositionedMessage, type SourceNode, type SourceScalar } from './source-tree.js';
import type { JsonSchema } from './schema-validator.js';
import type { SchemaWalker } from './schema-walker.js';
import { UniqueMessages } from './unique-messages.js';

// Where a value read before stands again in the value to validate (see fillRepeats): empty, so
// that the schema finds nothing in them that it has not found where the value was first read.
const REPEATED_MAP = Object.freeze({});
const REPEATED_LIST = Object.freeze([]);

export interface Repeat {
  path: string[];
  value: unknown;
}

export interface ReadTreeResult {
  /** With an empty stand-in where a shared value stands again, until fillRepeats(value, repeats). */
  value: unknown;
  problems: PositionedMessage[];
  /** What is allowed but may not be meant: invisible characters in values. */
  warnings: PositionedMessage[];
  /** JSON pointers (as in ajv's instancePath) whose value already has a problem: schema errors there add nothing. */
  claimed: Set<string>;
  /** Where a stand-in is, and for what: as many as the aliases in the file, at most. */
  repeats: Repeat[];
  /**
   * The text as written (`${ORGFORM_VAR_X}`), by JSON pointer, of each value that came from the
   * environment: a message about such a value quotes this, never the value.
   */
  interpolated: Map<string, string>;
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

/** The mappings and lists that aliases stand for, each once (a walk of the tree as written). */
function findAliasTargets(root: SourceNode): Set<SourceNode> {
  const targets = new Set<SourceNode>();
  const visit = (node: SourceNode): void => {
    if (node.kind === 'alias') {
      if (node.target.kind !== 'scalar') targets.add(node.target);
    } else if (node.kind === 'map') {
      for (const pair of node.pairs) visit(pair.value);
    } else if (node.kind === 'seq') {
      for (const item of node.items) visit(item);
    }
  };
  visit(root);
  return targets;
}

/** Puts each shared value where readTree left a stand-in, once the value has been validated. */
export function fillRepeats(value: unknown, repeats: readonly Repeat[]): void {
  for (const repeat of repeats) {
    let container = value as Record<string, unknown>;
    const last = repeat.path.length - 1;
    for (let i = 0; i < last; i++) container = container[repeat.path[i]!] as Record<string, unknown>;
    if (Array.isArray(container)) container[Number(repeat.path[last])] = repeat.value;
    else setProperty(container, repeat.path[last]!, repeat.value);
  }
}

export function readTree(root: SourceNode, walker: SchemaWalker, variables: ConfigVariables): ReadTreeResult {
  // Through aliases the same node may be read more than once: each of its problems is reported once.
  const problems = new UniqueMessages();
  const warnings = new UniqueMessages();
  const claimed = new Set<string>();
  // Nodes being read: meeting one again inside itself (through an alias) is a cycle. Files
  // without aliases (all that the fast parser reads) cannot have one, and skip the bookkeeping.
  const targets = findAliasTargets(root);
  const trackCycles = targets.size > 0;
  const inProgress = new Set<SourceNode>();
  // The value of each alias target, per schema read under.
  const shared = new Map<SourceNode, Map<JsonSchema | undefined, unknown>>();
  const repeats: Repeat[] = [];
  const interpolated = new Map<string, string>();

  // The path to the node being read; joined into a pointer only when a problem claims it.
  const segments: string[] = [];
  const pointer = () => toPointer(segments);

  const read = (node: SourceNode, schema: JsonSchema | undefined): unknown => {
    if (!targets.has(node)) return readNode(node, schema);
    let bySchema = shared.get(node);
    if (bySchema === undefined) shared.set(node, (bySchema = new Map()));
    if (bySchema.has(schema)) {
      repeats.push({ path: [...segments], value: bySchema.get(schema) });
      return node.kind === 'map' ? REPEATED_MAP : REPEATED_LIST;
    }
    const value = readNode(node, schema);
    bySchema.set(schema, value);
    return value;
  };

  const readNode = (node: SourceNode, schema: JsonSchema | undefined): unknown => {
    switch (node.kind) {
      case 'alias': {
        if (inProgress.has(node.target)) {
          problems.add(node.pos, 'this alias refers to a node that contains it: cycles are not allowed');
          claimed.add(pointer());
          return null;
        }
        // parseYaml has bounded what aliases expand to (see EXPANDED_NODES_PER_CHAR).
        return read(node.target, schema);
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
            const badKey = describeBadKey(key);
            const bad = badKey !== undefined ? `${nameIdentifier([...segments, name])}: ${badKey}` : describeHiddenCharacter(name, nameIdentifier([...segments, name]), true)?.message;
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
          problems.add(node.pos, `${nameField(segments)}: ${unquoted}`);
          claimed.add(pointer());
          return node.value;
        }
        if (typeof node.value !== 'string') return node.value;
        const result = interpolate(node.value, variables);
        if (!result.ok) {
          for (const message of result.messages) problems.add(node.pos, `${nameField(segments)}: ${message}`);
          claimed.add(pointer());
          return node.value;
        }
        const identifier = walker.isIdentifier(schema);
        const what = identifier ? nameIdentifier(segments) : segments.slice(segments[0] === 'organisations' ? 2 : 0).join('.');
        // A value from the environment is named as written, in this message and every later one.
        const fromEnvironment = hasReference(node.value);
        const written = fromEnvironment ? node.value : result.value;
        if (fromEnvironment) interpolated.set(pointer(), written);
        const hidden = describeHiddenCharacter(result.value, what, identifier, written);
        if (hidden?.level === 'warning') warnings.add(node.pos, hidden.message);
        else if (hidden !== undefined) {
          problems.add(node.pos, hidden.message);
          claimed.add(pointer());
        }
        return result.value;
      }
    }
  };

  return { value: read(root, walker.resolve(walker.root)), problems: problems.messages, warnings: warnings.messages, claimed, repeats, interpolated };
}
