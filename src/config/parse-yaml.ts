/**
 * Full YAML 1.2 through the yaml package, reduced to a SourceTree. Used for the files that the fast
 * parser leaves alone; it is the reference that the fast parser must agree with.
 */
import { LineCounter, isAlias, isMap, isPair, isScalar, isSeq, parseDocument, type Document, type YAMLError } from 'yaml';
import { emptyScalar, type Position, type SourceMap, type SourceNode, type SourcePair, type SourceScalar, type SourceSeq } from './source-tree.js';

/**
 * An alias bomb is a document whose aliases expand it far beyond its size: once every alias is
 * replaced by what it stands for, it may hold at most this many nodes (mappings, lists, keys and
 * scalars) per character of the file. A file without aliases holds about one node per 10
 * characters; one anchor shared by every organisation of a bulk file (`billing: *shared`, a billing
 * block of four fields) about one per 3. Validation reads each aliased node once (see readTree), so
 * a file within this is as quick to load as its size says, whatever its aliases; the limit is for
 * whatever else may read the file in full, such as the other YAML tools of a pipeline.
 */
export const EXPANDED_NODES_PER_CHAR = 10;

/**
 * The same bound on the characters of the keys and scalars once expanded: a long string repeated by
 * aliases is few nodes, but a 3 MiB string used 20,000 times is 60 billion characters for
 * validation to read (and it ran out of memory). Without aliases a file holds fewer characters of
 * text than it is long.
 */
export const EXPANDED_CHARS_PER_CHAR = 10;

export interface PositionedMessage {
  pos: Position;
  message: string;
}

export type ParseYamlResult = { ok: true; root: SourceNode | null } | { ok: false; problems: PositionedMessage[] };

/** Problems the YAML parser reports for one file, at most: past the first few, most follow from them. */
export const MAX_YAML_PROBLEMS = 10;
/** The part of the file a parser's message quotes (a tag, an escape, a directive), at most. */
const MAX_QUOTED_SOURCE = 40;

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

export function parseYaml(text: string): ParseYamlResult {
  const lineCounter = new LineCounter();
  const positionOf = (offset: number): Position => {
    const { line, col } = lineCounter.linePos(offset);
    return line === 0 ? { line: 1, col: col + 1 } : { line, col };
  };

  let doc: Document.Parsed;
  try {
    doc = parseDocument(text, {
      lineCounter,
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
    return { ok: false, problems: [{ pos: { line: 1, col: 1 }, message: `cannot parse this YAML: ${message}` }] };
  }

  // The parser can run out of stack more than once on the way back up (how often depends on the
  // stack left when it started): one "nested too deeply" says it.
  const exhausted = doc.errors.findIndex((error) => error.code === 'RESOURCE_EXHAUSTION');
  const errors = exhausted < 0 ? doc.errors : doc.errors.filter((error, i) => error.code !== 'RESOURCE_EXHAUSTION' || i === exhausted);
  const all = [...errors, ...doc.warnings];
  const yamlProblems = all.slice(0, MAX_YAML_PROBLEMS).map((error) => ({
    pos: positionOf(pastIndentation(text, error.pos[0])),
    message: describeYamlError(error),
  }));
  if (all.length > MAX_YAML_PROBLEMS) {
    const last = yamlProblems[yamlProblems.length - 1]!;
    yamlProblems.push({ pos: last.pos, message: `and ${all.length - MAX_YAML_PROBLEMS} more YAML errors after this one, not listed: fix these first (the rest often follow from them)` });
  }
  if (yamlProblems.length > 0) return { ok: false, problems: yamlProblems };
  if (doc.directives.yaml.version !== '1.2') {
    return {
      ok: false,
      problems: [
        {
          pos: { line: 1, col: 1 },
          message: `%YAML ${doc.directives.yaml.version} is not supported: orgs files are YAML 1.2; remove the directive`,
        },
      ],
    };
  }

  const problems: PositionedMessage[] = [];
  // Each anchor name, as last defined so far: YAML's alias refers to the most recent anchor of its
  // name before it, and the document is converted in order, so one walk resolves every alias.
  // (yaml's own Alias.resolve walks the whole document on each call: quadratic in the aliases.)
  const anchors = new Map<string, SourceNode>();
  const anchor = <T extends SourceNode>(node: unknown, converted: T): T => {
    const name = typeof node === 'object' && node !== null ? (node as { anchor?: unknown }).anchor : undefined;
    if (typeof name === 'string') anchors.set(name, converted);
    return converted;
  };

  const convertScalar = (node: unknown, fallback: Position): SourceScalar => {
    if (!isScalar(node)) {
      const pos = hasRange(node) ? positionOf(node.range[0]) : fallback;
      problems.push({ pos, message: 'a key must be a string, not a mapping or a list' });
      return { kind: 'scalar', pos, value: '', source: '', plain: false };
    }
    const pos = node.range ? positionOf(node.range[0]) : fallback;
    const { value } = node;
    if (value !== null && typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') {
      problems.push({ pos, message: `unsupported YAML value (tag ${node.tag ?? 'unknown'})` });
      return anchor(node, { kind: 'scalar', pos, value: null, source: '', plain: false });
    }
    const plain = node.type === 'PLAIN' && node.tag === undefined;
    return anchor(node, { kind: 'scalar', pos, value, source: node.source ?? String(value), plain });
  };

  const convert = (node: unknown, fallback: Position): SourceNode => {
    if (isAlias(node)) {
      const pos = node.range ? positionOf(node.range[0]) : fallback;
      const target = anchors.get(node.source);
      // yaml's parse leaves an alias without its anchor to toJS, which this does not call: refuse
      // it here, or it would silently be null (a valid organisation entry).
      if (target === undefined) {
        problems.push({ pos, message: noAnchorMessage(node.source) });
        return emptyScalar(pos);
      }
      return { kind: 'alias', pos, target };
    }
    if (isMap(node)) {
      const pos = node.range ? positionOf(node.range[0]) : fallback;
      // Anchored before the children, for aliases inside that point back up (a cycle, reported later).
      const map = anchor(node, { kind: 'map', pos, pairs: [] } as SourceMap);
      for (const pair of node.items) map.pairs.push(convertPair(pair.key, pair.value, pos));
      return map;
    }
    if (isSeq(node)) {
      const pos = node.range ? positionOf(node.range[0]) : fallback;
      const seq = anchor(node, { kind: 'seq', pos, items: [] } as SourceSeq);
      for (const item of node.items) {
        if (isPair(item)) {
          // `[a: 1]`: a one-pair mapping inside a flow list.
          const pair = convertPair(item.key, item.value, pos);
          seq.items.push({ kind: 'map', pos: pair.key.pos, pairs: [pair] });
        } else {
          seq.items.push(convert(item, pos));
        }
      }
      return seq;
    }
    if (isScalar(node)) return convertScalar(node, fallback);
    return emptyScalar(fallback);
  };

  const convertPair = (keyNode: unknown, valueNode: unknown, fallback: Position): SourcePair => {
    let key: SourceScalar;
    if (keyNode === null || keyNode === undefined) {
      key = emptyScalar(fallback);
    } else if (isAlias(keyNode)) {
      const pos = keyNode.range ? positionOf(keyNode.range[0]) : fallback;
      const target = anchors.get(keyNode.source);
      if (target === undefined) problems.push({ pos, message: noAnchorMessage(keyNode.source) });
      if (target !== undefined && target.kind !== 'scalar') problems.push({ pos, message: 'a key must be a string, not a mapping or a list' });
      key = target?.kind === 'scalar' ? { ...target, pos } : emptyScalar(pos);
    } else {
      key = convertScalar(keyNode, fallback);
    }
    // `key: &a` anchors an empty value: a later `*a` is null, not an earlier `&a`.
    const value =
      valueNode === null || valueNode === undefined || isEmptyPlain(valueNode) ? anchor(valueNode, emptyScalar(key.pos)) : convert(valueNode, key.pos);
    return { key, value };
  };

  const root = doc.contents === null ? null : convert(doc.contents, { line: 1, col: 1 });
  if (problems.length > 0) return { ok: false, problems };
  if (root === null || anchors.size === 0) return { ok: true, root };

  const expansion = measureExpansion(root);
  const over = (count: number, unit: string, per: number, at: Position | undefined): ParseYamlResult | undefined => {
    const budget = per * text.length;
    if (count <= budget) return undefined;
    const amount = count < 1e9 ? count.toLocaleString('en-US') : 'more than a billion';
    const message = `aliases expand this document to ${amount} ${unit}, over the ${budget.toLocaleString('en-US')} allowed for its size (${per} per character): an alias bomb? The file is rejected; the alias that expands the most is here`;
    return { ok: false, problems: [{ pos: at ?? { line: 1, col: 1 }, message }] };
  };
  return (
    over(expansion.nodes, 'nodes', EXPANDED_NODES_PER_CHAR, expansion.biggest) ??
    over(expansion.chars, 'characters of text', EXPANDED_CHARS_PER_CHAR, expansion.longest) ?? { ok: true, root }
  );
}

/**
 * How many nodes the document holds once every alias is replaced by what it stands for, and how
 * many characters its keys and scalars then hold, counted without expanding anything (each node's
 * counts are kept), so in one walk of the tree as written; and the aliases that stand for the most
 * of each. An alias inside what it refers to (a cycle, which readTree reports) counts as one node.
 */
function measureExpansion(root: SourceNode): { nodes: number; chars: number; biggest: Position | undefined; longest: Position | undefined } {
  const counts = new Map<SourceNode, Size>();
  const inProgress = new Set<SourceNode>();
  let biggest: { pos: Position; nodes: number } | undefined;
  let longest: { pos: Position; chars: number } | undefined;
  const count = (node: SourceNode): Size => {
    const known = counts.get(node);
    if (known !== undefined) return known;
    const size: Size = { nodes: 1, chars: 0 };
    switch (node.kind) {
      case 'alias': {
        const target = inProgress.has(node.target) ? { nodes: 1, chars: 0 } : count(node.target);
        if (biggest === undefined || target.nodes > biggest.nodes) biggest = { pos: node.pos, nodes: target.nodes };
        if (longest === undefined || target.chars > longest.chars) longest = { pos: node.pos, chars: target.chars };
        return target; // not kept: each alias is its own node, met once
      }
      case 'map':
        inProgress.add(node);
        for (const pair of node.pairs) {
          const value = count(pair.value);
          size.nodes += 1 + value.nodes;
          size.chars += pair.key.source.length + value.chars;
        }
        break;
      case 'seq':
        inProgress.add(node);
        for (const item of node.items) {
          const value = count(item);
          size.nodes += value.nodes;
          size.chars += value.chars;
        }
        break;
      case 'scalar':
        return { nodes: 1, chars: node.source.length };
    }
    inProgress.delete(node);
    counts.set(node, size);
    return size;
  };
  const { nodes, chars } = count(root);
  return { nodes, chars, biggest: biggest?.pos, longest: longest?.pos };
}

interface Size {
  nodes: number;
  chars: number;
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
