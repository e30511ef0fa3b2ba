/**
 * Full YAML 1.2 through the yaml package, reduced to a SourceTree. Used for the files that the fast
 * parser leaves alone; it is the reference that the fast parser must agree with.
 */
import { LineCounter, isAlias, isMap, isPair, isScalar, isSeq, parseDocument, type Document, type YAMLError } from 'yaml';
import { findAliasBomb } from './alias-expansion.js';
import { emptyScalar, type Position, type PositionedMessage, type SourceMap, type SourceNode, type SourcePair, type SourceScalar, type SourceSeq } from './source-tree.js';

export type ParseYamlResult = { ok: true; root: SourceNode | null } | { ok: false; problems: PositionedMessage[] };

/** Problems the YAML parser reports for one file, at most: past the first few, most follow from them. */
export const MAX_YAML_PROBLEMS = 10;
/** The part of the file a parser's message quotes (a tag, an escape, a directive), at most. */
const MAX_QUOTED_SOURCE = 40;

const KEY_NOT_A_STRING = 'a key must be a string, not a mapping or a list';

export function parseYaml(text: string): ParseYamlResult {
  const lines = new LineCounter();
  const positionOf = (offset: number): Position => {
    const { line, col } = lines.linePos(offset);
    return line === 0 ? { line: 1, col: 1 + col } : { line, col };
  };
  let doc: Document.Parsed;
  try {
    doc = parseDocument(text, {
      lineCounter: lines,
      prettyErrors: false,
      uniqueKeys: false, // duplicate keys are reported later, with where the first one stands
      strict: true,
      version: '1.2',
      schema: 'core',
      logLevel: 'error', // 'silent' would also drop the multiple-documents error
    });
  } catch (err) {
    // Deep nesting can exhaust the stack of the yaml package.
    const message = err instanceof Error ? err.message : String(err);
    return refuse({ line: 1, col: 1 }, `cannot parse this YAML: ${message}`);
  }
  const yamlProblems = listYamlProblems(doc, text, positionOf);
  if (yamlProblems.length > 0) return { ok: false, problems: yamlProblems };
  const version = doc.directives.yaml.version;
  if (version !== '1.2') return refuse({ line: 1, col: 1 }, `%YAML ${version} is not supported: orgs files are YAML 1.2; remove the directive`);

  const converter = new SourceTreeConverter(positionOf);
  const root = doc.contents === null ? null : converter.node(doc.contents, { line: 1, col: 1 });
  if (converter.problems.length > 0) return { ok: false, problems: converter.problems };
  const bomb = root === null || !converter.hasAnchors() ? undefined : findAliasBomb(root, text.length);
  return bomb === undefined ? { ok: true, root } : { ok: false, problems: [bomb] };
}

function refuse(pos: Position, message: string): ParseYamlResult {
  return { ok: false, problems: [{ pos, message }] };
}

/** The parser's errors and warnings, each once, at most MAX_YAML_PROBLEMS and a line saying how many more. */
function listYamlProblems(doc: Document.Parsed, text: string, positionOf: (offset: number) => Position): PositionedMessage[] {
  // The parser can run out of stack more than once on the way back up (how often depends on the
  // stack left when it started): one "nested too deeply" says it.
  const exhausted = doc.errors.findIndex((error) => error.code === 'RESOURCE_EXHAUSTION');
  const errors = exhausted < 0 ? doc.errors : doc.errors.filter((error, i) => error.code !== 'RESOURCE_EXHAUSTION' || i === exhausted);
  const all = errors.concat(doc.warnings);
  const problems = all.slice(0, MAX_YAML_PROBLEMS).map((error) => ({ pos: positionOf(pastIndentation(text, error.pos[0])), message: describeYamlError(error) }));
  if (all.length > MAX_YAML_PROBLEMS) {
    const last = problems[problems.length - 1]!;
    problems.push({ pos: last.pos, message: `and ${all.length - MAX_YAML_PROBLEMS} more YAML errors after this one, not listed: fix these first (the rest often follow from them)` });
  }
  return problems;
}

/**
 * yaml's own message, without the file's text it may quote: an unexpected token is named by its
 * kind, never by what it holds (`"basic c2Vj…"` of a file that is not YAML at all); a tag, escape
 * or directive is cut short. The position says where to look.
 */
function withoutSource(message: string): string {
  const stream = /^(Unexpected \S+ token in YAML stream): /s.exec(message);
  if (stream) return stream[1]!;
  return message.replace(/(: |\b(?:tag|sequence|directive|version|characters:?|so) )(\S{41,})/g, (_all, lead: string, source: string) => `${lead}${source.slice(0, MAX_QUOTED_SOURCE)}…`);
}

function describeYamlError(error: YAMLError): string {
  switch (error.code) {
    case 'MULTIPLE_DOCS':
      return 'only one YAML document per file: split the documents into separate files';
    case 'RESOURCE_EXHAUSTION':
      // yaml's own text is "Maximum call stack size exceeded": say what in the file causes it.
      return 'nested too deeply for the YAML parser (hundreds of mappings or lists inside one another); an orgs file needs five levels at most';
    default:
      return withoutSource(error.message);
  }
}

/**
 * The yaml package places some errors (a mis-indented key, a list where a key belongs) at the
 * start of the line's indentation: the first character after the spaces is where the mistake
 * shows, so `:7:6` for a key at column 6, not `:7:1`. A tab stays where it is (it is the mistake).
 */
function pastIndentation(text: string, offset: number): number {
  if (offset !== 0 && text[offset - 1] !== '\n' && text[offset - 1] !== '\r') return offset;
  let at = offset;
  while (text[at] === ' ') at += 1;
  return at < text.length && text[at] !== '\n' && text[at] !== '\r' ? at : offset;
}

/**
 * A yaml Document's nodes → SourceNodes, in document order, with what cannot be one reported.
 * Each anchor name is kept as last defined so far: YAML's alias refers to the most recent anchor of
 * its name before it, and the document is converted in order, so one walk resolves every alias
 * (yaml's own Alias.resolve walks the whole document on each call: quadratic in the aliases).
 */
class SourceTreeConverter {
  readonly problems: PositionedMessage[] = [];
  private readonly anchors = new Map<string, SourceNode>();

  constructor(private readonly positionOf: (offset: number) => Position) {}

  hasAnchors(): boolean {
    return this.anchors.size > 0;
  }

  node(node: unknown, fallback: Position): SourceNode {
    if (isAlias(node)) return this.alias(node.source, this.at(node, fallback));
    if (isMap(node)) return this.map(node.items, this.at(node, fallback), node);
    if (isSeq(node)) return this.seq(node.items, this.at(node, fallback), node);
    if (isScalar(node)) return this.scalar(node, fallback);
    return emptyScalar(fallback);
  }

  private at(node: { range?: [number, number, number] | null }, fallback: Position): Position {
    return node.range ? this.positionOf(node.range[0]) : fallback;
  }

  /** `converted`, kept under the node's anchor when it has one. */
  private anchor<T extends SourceNode>(node: unknown, converted: T): T {
    const name = typeof node === 'object' && node !== null ? (node as { anchor?: unknown }).anchor : undefined;
    if (typeof name === 'string') this.anchors.set(name, converted);
    return converted;
  }

  private alias(name: string, pos: Position): SourceNode {
    const target = this.anchors.get(name);
    // yaml's parse leaves an alias without its anchor to toJS, which this does not call: refuse
    // it here, or it would silently be null (a valid organisation entry).
    if (target === undefined) {
      this.problems.push({ pos, message: noAnchorMessage(name) });
      return emptyScalar(pos);
    }
    return { kind: 'alias', pos, target };
  }

  private map(items: ReadonlyArray<{ key: unknown; value: unknown }>, pos: Position, node: unknown): SourceMap {
    // Anchored before the children, for aliases inside that point back up (a cycle, reported later).
    const map = this.anchor(node, { kind: 'map', pos, pairs: [] } as SourceMap);
    for (const pair of items) map.pairs.push(this.pair(pair.key, pair.value, pos));
    return map;
  }

  private seq(items: readonly unknown[], pos: Position, node: unknown): SourceSeq {
    const seq = this.anchor(node, { kind: 'seq', pos, items: [] } as SourceSeq);
    for (const item of items) {
      if (isPair(item)) {
        // `[a: 1]`: a one-pair mapping inside a flow list.
        const pair = this.pair(item.key, item.value, pos);
        seq.items.push({ kind: 'map', pos: pair.key.pos, pairs: [pair] });
      } else {
        seq.items.push(this.node(item, pos));
      }
    }
    return seq;
  }

  private scalar(node: unknown, fallback: Position): SourceScalar {
    if (!isScalar(node)) {
      const pos = hasRange(node) ? this.positionOf(node.range[0]) : fallback;
      this.problems.push({ pos, message: KEY_NOT_A_STRING });
      return { kind: 'scalar', pos, value: '', source: '', plain: false };
    }
    const pos = this.at(node, fallback);
    const { value } = node;
    if (value !== null && typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') {
      this.problems.push({ pos, message: `unsupported YAML value (tag ${node.tag ?? 'unknown'})` });
      return this.anchor(node, { kind: 'scalar', pos, value: null, source: '', plain: false });
    }
    const plain = node.type === 'PLAIN' && node.tag === undefined;
    return this.anchor(node, { kind: 'scalar', pos, value, source: node.source ?? String(value), plain });
  }

  private pair(keyNode: unknown, valueNode: unknown, fallback: Position): SourcePair {
    const key = keyNode === null || keyNode === undefined ? emptyScalar(fallback) : isAlias(keyNode) ? this.aliasKey(keyNode.source, this.at(keyNode, fallback)) : this.scalar(keyNode, fallback);
    // `key: &a` anchors an empty value: a later `*a` is null, not an earlier `&a`.
    const empty = valueNode === null || valueNode === undefined || isEmptyPlain(valueNode);
    return { key, value: empty ? this.anchor(valueNode, emptyScalar(key.pos)) : this.node(valueNode, key.pos) };
  }

  /** `*name: value`: the anchored scalar, standing at the alias. */
  private aliasKey(name: string, pos: Position): SourceScalar {
    const target = this.anchors.get(name);
    if (target === undefined) this.problems.push({ pos, message: noAnchorMessage(name) });
    else if (target.kind !== 'scalar') this.problems.push({ pos, message: KEY_NOT_A_STRING });
    return target?.kind === 'scalar' ? { ...target, pos } : emptyScalar(pos);
  }
}

function noAnchorMessage(written: string): string {
  const name = written.length > MAX_QUOTED_SOURCE ? `${written.slice(0, MAX_QUOTED_SOURCE)}…` : written;
  return `alias *${name} has no anchor &${name} before it (an alias stands for the anchor of its name written above it): define the anchor first, or fix the name`;
}

function hasRange(node: unknown): node is { range: [number, number, number] } {
  return typeof node === 'object' && node !== null && Array.isArray((node as { range?: unknown }).range);
}

function isEmptyPlain(node: unknown): boolean {
  return isScalar(node) && node.type === 'PLAIN' && node.tag === undefined && node.source === '' && node.value === null;
}
