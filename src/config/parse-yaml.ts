/**
 * Full YAML 1.2 through the yaml package, reduced to a SourceTree. Used for the files that the fast
 * parser leaves alone; it is the reference that the fast parser must agree with.
 */
import { LineCounter, isAlias, isMap, isPair, isScalar, isSeq, parseDocument, type Document, type YAMLError } from 'yaml';
import { emptyScalar, type Position, type SourceMap, type SourceNode, type SourcePair, type SourceScalar } from './source-tree.js';

/** Aliases may repeat a node at most this many times over (yaml's measure): more is an alias bomb. */
export const MAX_ALIAS_COUNT = 100;

export interface PositionedMessage {
  pos: Position;
  message: string;
}

export type ParseYamlResult = { ok: true; root: SourceNode | null } | { ok: false; problems: PositionedMessage[] };

function describeYamlError(error: YAMLError): string {
  switch (error.code) {
    case 'MULTIPLE_DOCS':
      return 'only one YAML document per file: split the documents into separate files';
    default:
      return error.message;
  }
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

  const yamlProblems = [...doc.errors, ...doc.warnings].map((error) => ({
    pos: positionOf(error.pos[0]),
    message: describeYamlError(error),
  }));
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
  let aliasSeen = false;
  const converted = new Map<unknown, SourceNode>();

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
      return { kind: 'scalar', pos, value: null, source: '', plain: false };
    }
    const plain = node.type === 'PLAIN' && node.tag === undefined;
    return { kind: 'scalar', pos, value, source: node.source ?? String(value), plain };
  };

  const convert = (node: unknown, fallback: Position): SourceNode => {
    const seen = converted.get(node);
    if (seen !== undefined) return seen;
    if (isAlias(node)) {
      aliasSeen = true;
      const pos = node.range ? positionOf(node.range[0]) : fallback;
      const target = node.resolve(doc);
      // yaml reports an alias without its anchor as an error, so target is there; be safe anyway.
      return target === undefined ? emptyScalar(pos) : { kind: 'alias', pos, target: convert(target, pos) };
    }
    if (isMap(node)) {
      const pos = node.range ? positionOf(node.range[0]) : fallback;
      const map: SourceMap = { kind: 'map', pos, pairs: [] };
      converted.set(node, map); // before the children, for aliases that point back up
      for (const pair of node.items) map.pairs.push(convertPair(pair.key, pair.value, pos));
      return map;
    }
    if (isSeq(node)) {
      const pos = node.range ? positionOf(node.range[0]) : fallback;
      const seq: SourceNode = { kind: 'seq', pos, items: [] };
      converted.set(node, seq);
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
    if (isScalar(node)) {
      const scalar = convertScalar(node, fallback);
      converted.set(node, scalar);
      return scalar;
    }
    return emptyScalar(fallback);
  };

  const convertPair = (keyNode: unknown, valueNode: unknown, fallback: Position): SourcePair => {
    let key: SourceScalar;
    if (keyNode === null || keyNode === undefined) {
      key = emptyScalar(fallback);
    } else if (isAlias(keyNode)) {
      aliasSeen = true;
      key = convertScalar(keyNode.resolve(doc), keyNode.range ? positionOf(keyNode.range[0]) : fallback);
    } else {
      key = convertScalar(keyNode, fallback);
    }
    const value =
      valueNode === null || valueNode === undefined || isEmptyPlain(valueNode) ? emptyScalar(key.pos) : convert(valueNode, key.pos);
    return { key, value };
  };

  const root = doc.contents === null ? null : convert(doc.contents, { line: 1, col: 1 });
  if (problems.length > 0) return { ok: false, problems };

  if (aliasSeen) {
    try {
      doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
    } catch (err) {
      if (!(err instanceof ReferenceError)) throw err;
      const firstAlias = findFirstAlias(root);
      return {
        ok: false,
        problems: [
          {
            pos: firstAlias ?? { line: 1, col: 1 },
            message: `aliases expand this document too far (over ${MAX_ALIAS_COUNT} repetitions): an alias bomb? The file is rejected`,
          },
        ],
      };
    }
  }
  return { ok: true, root };
}

function hasRange(node: unknown): node is { range: [number, number, number] } {
  return typeof node === 'object' && node !== null && Array.isArray((node as { range?: unknown }).range);
}

function isEmptyPlain(node: unknown): boolean {
  return isScalar(node) && node.type === 'PLAIN' && node.tag === undefined && node.source === '' && node.value === null;
}

function findFirstAlias(root: SourceNode | null): Position | undefined {
  let first: Position | undefined;
  const visited = new Set<SourceNode>();
  const visit = (node: SourceNode): void => {
    if (visited.has(node)) return;
    visited.add(node);
    if (node.kind === 'alias') {
      if (first === undefined || node.pos.line < first.line || (node.pos.line === first.line && node.pos.col < first.col)) {
        first = node.pos;
      }
      return;
    }
    if (node.kind === 'map') for (const pair of node.pairs) visit(pair.value);
    if (node.kind === 'seq') for (const item of node.items) visit(item);
  };
  if (root !== null) visit(root);
  return first;
}
