/**
 * An orgs.yaml parsed so that single values can be changed and the rest written back exactly as it
 * was: the yaml Document (to find values by key, through aliases) over the source tokens it came
 * from (to write), with the positions of every node for messages. Parsed with the loader's options
 * (YAML 1.2, core schema), so that a value means here what it means to plan. Pure.
 */
import { Composer, CST, isAlias, isMap, isScalar, LineCounter, Parser, visit, type Alias, type Document, type Node, type Scalar, type YAMLMap } from 'yaml';
import { ConfigError } from '../errors.js';

export interface ParsedForUpdate {
  doc: Document.Parsed;
  /** `FILE:LINE:COL` of a node, for messages. */
  at(node: Node | null | undefined): string;
  /** The node an alias stands for; any other node itself. */
  resolve(node: unknown): unknown;
  /** A value reached through an alias, or anchored and used by one: changing it would change another place too. */
  isShared(node: unknown): boolean;
  /** The document as text, with whatever was changed in its tokens. */
  toText(): string;
}

export function parseForUpdate(file: string, text: string): ParsedForUpdate {
  // Lines that end with CR alone are valid YAML, which the yaml package does not read as line
  // breaks: such a file is read with LF (as the loader does) and written back with CR. A file that
  // mixes them cannot be written back byte for byte.
  const loneCr = /\r(?!\n)/.test(text);
  if (loneCr && text.includes('\n')) {
    throw new ConfigError(`${file} cannot be updated: some of its lines end with CR alone and others with LF. Save it with one kind of line ending, then run export again`);
  }
  const source = loneCr ? text.replaceAll('\r', '\n') : text;
  const lineCounter = new LineCounter();
  const tokens = [...new Parser(lineCounter.addNewLine).parse(source)];
  const docs = [...new Composer({ version: '1.2', schema: 'core', strict: true, uniqueKeys: false, keepSourceTokens: true }).compose(tokens)];
  const doc = docs[0];
  // The CLI validates the file with the loader first; this is a guard, not the place users meet.
  const error = docs.length === 1 ? doc?.errors[0] : undefined;
  if (doc === undefined || docs.length !== 1 || error !== undefined) {
    const why = error?.message ?? 'not exactly one YAML document';
    throw new ConfigError(`${file} cannot be updated: ${why}. Check it with: orgform validate -f ${file}`);
  }

  // What each alias stands for, found in one walk: the most recent anchor of its name before it.
  // (yaml's Alias.resolve walks the whole document on each call: quadratic over a bulk file.)
  const used = new Set<string>();
  const anchors = new Map<string, Node>();
  const targets = new Map<Alias, Node | undefined>();
  visit(doc, {
    Node(_, node) {
      if (isAlias(node)) {
        used.add(node.source);
        targets.set(node, anchors.get(node.source));
      } else if (typeof node.anchor === 'string') {
        anchors.set(node.anchor, node);
      }
    },
  });
  const at = (node: Node | null | undefined) => {
    const { line, col } = lineCounter.linePos(node?.range?.[0] ?? 0);
    return `${file}:${Math.max(line, 1)}:${col}`;
  };
  return {
    doc,
    at,
    resolve: (node) => (isAlias(node) ? targets.get(node) : node),
    isShared: (node) => isAlias(node) || (typeof node === 'object' && node !== null && typeof (node as Node).anchor === 'string' && used.has((node as Node).anchor as string)),
    toText: () => {
      const out = tokens.map((token) => CST.stringify(token)).join('');
      return loneCr ? out.replaceAll('\n', '\r') : out;
    },
  };
}

/** The value under `key` in a mapping (the last, as the loader reads duplicates), or undefined. */
export function valueOf(map: unknown, key: string): unknown {
  if (!isMap(map)) return undefined;
  let found: unknown;
  for (const pair of (map as YAMLMap).items) if (keyText(pair.key) === key) found = pair.value ?? null;
  return found;
}

/** A key as the loader names it: a scalar's value as text, `null` (an empty key) as "". */
export function keyText(key: unknown): string | undefined {
  if (!isScalar(key)) return undefined;
  return key.value === null ? '' : String(key.value);
}

/** A string scalar (what the loader accepted where it expects a string), else undefined. */
export function stringScalar(node: unknown): Scalar<string> | undefined {
  return isScalar(node) && typeof node.value === 'string' ? (node as Scalar<string>) : undefined;
}
