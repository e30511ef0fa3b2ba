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
import { describeBadKey, describeUnquoted } from './detect-implicit-type.js';
import { hasReference, interpolate, type ConfigVariables } from './interpolate.js';
import { keyString, type PositionedMessage, type SourceMap, type SourceNode, type SourcePair, type SourceScalar, type SourceSeq, toPointer, UniqueMessages } from './source-tree.js';
import type { JsonSchema } from './schema-validator.js';
import type { SchemaWalker } from './schema-walker.js';

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
  const reader = new TreeReader(walker, variables, findAliasTargets(root));
  const value = reader.read(root, walker.resolve(walker.root));
  return { value, problems: reader.problems.messages, warnings: reader.warnings.messages, claimed: reader.claimed, repeats: reader.repeats, interpolated: reader.interpolated };
}

/** One document's walk: the value built, and what was found on the way (see ReadTreeResult). */
class TreeReader {
  // Through aliases the same node may be read more than once: each of its problems is reported once.
  readonly problems = new UniqueMessages();
  readonly warnings = new UniqueMessages();
  readonly claimed = new Set<string>();
  readonly repeats: Repeat[] = [];
  readonly interpolated = new Map<string, string>();
  // Nodes being read: meeting one again inside itself (through an alias) is a cycle. Files
  // without aliases (all that the fast parser reads) cannot have one, and skip the bookkeeping.
  private readonly trackCycles: boolean;
  private readonly inProgress = new Set<SourceNode>();
  /** The value of each alias target, per schema read under. */
  private readonly shared = new Map<SourceNode, Map<JsonSchema | undefined, unknown>>();
  /** The path to the node being read; joined into a pointer only when a problem claims it. */
  private readonly segments: string[] = [];

  constructor(
    private readonly walker: SchemaWalker,
    private readonly variables: ConfigVariables,
    private readonly targets: ReadonlySet<SourceNode>,
  ) {
    this.trackCycles = targets.size > 0;
  }

  /** A node's value; an alias target met again under the same schema is a stand-in, and a repeat to fill. */
  read(node: SourceNode, schema: JsonSchema | undefined): unknown {
    if (!this.targets.has(node)) return this.readNode(node, schema);
    let bySchema = this.shared.get(node);
    if (bySchema === undefined) this.shared.set(node, (bySchema = new Map()));
    if (bySchema.has(schema)) {
      this.repeats.push({ path: this.segments.slice(), value: bySchema.get(schema) });
      return node.kind === 'map' ? REPEATED_MAP : REPEATED_LIST;
    }
    const value = this.readNode(node, schema);
    bySchema.set(schema, value);
    return value;
  }

  private readNode(node: SourceNode, schema: JsonSchema | undefined): unknown {
    switch (node.kind) {
      case 'alias':
        if (!this.inProgress.has(node.target)) return this.read(node.target, schema); // parseYaml has bounded what aliases expand to
        this.claim(node.pos, 'this alias refers to a node that contains it: cycles are not allowed');
        return null;
      case 'map':
        return this.readMap(node, schema);
      case 'seq':
        return this.readSeq(node, schema);
      case 'scalar':
        return expectsString(schema) ? this.readString(node, schema) : node.value;
    }
  }

  /** A problem with the value being read: reported, and its pointer claimed (schema errors there add nothing). */
  private claim(pos: SourceScalar['pos'], message: string): void {
    this.problems.add(pos, message);
    this.claimed.add(toPointer(this.segments));
  }

  private readMap(node: SourceMap, schema: JsonSchema | undefined): Record<string, unknown> {
    if (this.trackCycles) this.inProgress.add(node);
    const object: Record<string, unknown> = {};
    const checkKeys = schema?.propertyNames !== undefined;
    const firsts = new FirstKeys(node.pairs);
    for (let p = 0; p < node.pairs.length; p++) {
      const { key, value } = node.pairs[p]!;
      const name = keyString(key);
      const first = firsts.before(p, name, key);
      if (first !== undefined) this.problems.add(key.pos, `duplicate key "${name}" (first at line ${first.pos.line})`);
      if (checkKeys) this.checkKey(key, name);
      this.segments.push(name);
      setProperty(object, name, this.read(value, this.walker.property(schema, name)));
      this.segments.pop();
    }
    this.inProgress.delete(node);
    return object;
  }

  /** A key under a schema that names its keys (slugs): written as YAML reads it, and with nothing hidden. */
  private checkKey(key: SourceScalar, name: string): void {
    const badKey = describeBadKey(key);
    const path = this.segments.concat(name);
    const bad = badKey !== undefined ? `${nameIdentifier(path)}: ${badKey}` : describeHiddenCharacter(name, nameIdentifier(path), true)?.message;
    if (bad !== undefined) this.problems.add(key.pos, bad);
  }

  private readSeq(node: SourceSeq, schema: JsonSchema | undefined): unknown[] {
    if (this.trackCycles) this.inProgress.add(node);
    const itemSchema = this.walker.items(schema);
    const array: unknown[] = [];
    for (let i = 0; i < node.items.length; i++) {
      this.segments.push(String(i));
      array.push(this.read(node.items[i]!, itemSchema));
      this.segments.pop();
    }
    this.inProgress.delete(node);
    return array;
  }

  /** A scalar where the schema expects a string: unquoted text YAML typed otherwise, `${VAR}`, hidden characters. */
  private readString(node: SourceScalar, schema: JsonSchema | undefined): unknown {
    const unquoted = describeUnquoted(node);
    if (unquoted !== undefined) {
      this.claim(node.pos, `${nameField(this.segments)}: ${unquoted}`);
      return node.value;
    }
    if (typeof node.value !== 'string') return node.value;
    const result = interpolate(node.value, this.variables);
    if (!result.ok) {
      for (const message of result.messages) this.problems.add(node.pos, `${nameField(this.segments)}: ${message}`);
      this.claimed.add(toPointer(this.segments));
      return node.value;
    }
    // A value from the environment is named as written, in this message and every later one.
    const fromEnvironment = hasReference(node.value);
    const written = fromEnvironment ? node.value : result.value;
    if (fromEnvironment) this.interpolated.set(toPointer(this.segments), written);
    const identifier = this.walker.isIdentifier(schema);
    const what = identifier ? nameIdentifier(this.segments) : this.segments.slice(this.segments[0] === 'organisations' ? 2 : 0).join('.');
    const hidden = describeHiddenCharacter(result.value, what, identifier, written);
    if (hidden?.level === 'warning') this.warnings.add(node.pos, hidden.message);
    else if (hidden !== undefined) this.claim(node.pos, hidden.message);
    return result.value;
  }
}

/**
 * The first pair of a mapping with each key, to find duplicates: most maps are small, and a Map
 * pays off only for the big ones (the small ones look back over the pairs before).
 */
class FirstKeys {
  private readonly byName: Map<string, SourceScalar> | undefined;

  constructor(private readonly pairs: readonly SourcePair[]) {
    this.byName = pairs.length > 16 ? new Map() : undefined;
  }

  /** The key of an earlier pair named `name`, or undefined when pair `index` is the first. */
  before(index: number, name: string, key: SourceScalar): SourceScalar | undefined {
    if (this.byName === undefined) {
      for (let q = 0; q < index; q++) if (keyString(this.pairs[q]!.key) === name) return this.pairs[q]!.key;
      return undefined;
    }
    const first = this.byName.get(name);
    if (first === undefined) this.byName.set(name, key);
    return first;
  }
}
