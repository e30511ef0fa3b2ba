/**
 * An orgs.yaml parsed so that single values can be changed and the rest written back exactly as it
 * was: the yaml Document (to find values by key, through aliases) over the source tokens it came
 * from (to write), with the positions of every node for messages. Parsed with the loader's options
 * (YAML 1.2, core schema), so that a value means here what it means to plan. Pure.
 */
import { Composer, CST, isAlias, isMap, isScalar, LineCounter, Parser, visit, type Alias, type Document, type Node, type Scalar, type YAMLMap } from 'yaml';
import { ConfigError } from '../errors.js';
import type { TextEdit } from './create-file-patch.js';
import { setScalarText } from './set-scalar-text.js';

export interface ParsedForUpdate {
  doc: Document.Parsed;
  /** `FILE:LINE:COL` of a node, for messages. */
  at(node: Node | null | undefined): string;
  /** The node an alias stands for; any other node itself. */
  resolve(node: unknown): unknown;
  /** A value reached through an alias, or anchored and used by one: changing it would change another place too. */
  isShared(node: unknown): boolean;
  /** Sets a scalar's text in its source tokens (setScalarText), keeping where the file changes. */
  setValue(node: Scalar, text: string): void;
  /** The document as text, with whatever was changed in its tokens. */
  toText(): string;
  /** The changes as edits of the text read, in order; undefined when the tokens changed did not stand where they were read. */
  edits(): TextEdit[] | undefined;
}

export function parseForUpdate(file: string, text: string): ParsedForUpdate {
  // Lines that end with CR alone are valid YAML, which the yaml package does not read as line
  // breaks: such a file is read with LF (as the loader does) and written back with CR. A file that
  // mixes them cannot be written back byte for byte.
  const loneCr = /\r(?!\n)/.test(text);
  if (loneCr && text.includes('\n')) {
    throw new ConfigError(`${file} cannot be updated: some of its lines end with CR alone and others with LF. Save it with one kind of line ending, then run export again`);
  }
  return new UpdatableDocument(file, loneCr ? text.replaceAll('\r', '\n') : text, loneCr);
}

/** One edit of the text read, and what stood there when it was made (checked against the text). */
interface Recorded extends TextEdit {
  was: string;
}

class UpdatableDocument implements ParsedForUpdate {
  readonly doc: Document.Parsed;
  private readonly lines = new LineCounter();
  private readonly tokens: CST.Token[];
  /** What each alias stands for, found in one walk (yaml's Alias.resolve walks the whole document on each call: quadratic over a bulk file). */
  private readonly targets = new Map<Alias, Node | undefined>();
  /** The anchors that an alias uses. */
  private readonly used = new Set<string>();
  private readonly recorded: Recorded[] = [];

  constructor(
    private readonly file: string,
    private readonly source: string,
    private readonly loneCr: boolean,
  ) {
    this.tokens = Array.from(new Parser(this.lines.addNewLine).parse(source));
    const docs = Array.from(new Composer({ version: '1.2', schema: 'core', strict: true, uniqueKeys: false, keepSourceTokens: true }).compose(this.tokens));
    const doc = docs[0];
    // The CLI validates the file with the loader first; this is a guard, not the place users meet.
    const error = docs.length === 1 ? doc?.errors[0] : undefined;
    if (doc === undefined || docs.length !== 1 || error !== undefined) {
      const why = error?.message ?? 'not exactly one YAML document';
      throw new ConfigError(`${file} cannot be updated: ${why}. Check it with: orgform validate -f ${file}`);
    }
    this.doc = doc;
    this.findAliasTargets();
  }

  /** Each alias's anchor: the most recent of its name before it. */
  private findAliasTargets(): void {
    const anchors = new Map<string, Node>();
    visit(this.doc, {
      Node: (_, node) => {
        if (isAlias(node)) {
          this.used.add(node.source);
          this.targets.set(node, anchors.get(node.source));
        } else if (typeof node.anchor === 'string') {
          anchors.set(node.anchor, node);
        }
      },
    });
  }

  at(node: Node | null | undefined): string {
    const { line, col } = this.lines.linePos(node?.range?.[0] ?? 0);
    return `${this.file}:${Math.max(line, 1)}:${col}`;
  }

  resolve(node: unknown): unknown {
    return isAlias(node) ? this.targets.get(node) : node;
  }

  isShared(node: unknown): boolean {
    return isAlias(node) || (typeof node === 'object' && node !== null && typeof (node as Node).anchor === 'string' && this.used.has((node as Node).anchor as string));
  }

  setValue(node: Scalar, text: string): void {
    const token = node.srcToken as CST.FlowScalar | CST.BlockScalar | undefined;
    const was = token === undefined ? '' : CST.stringify(token);
    // A block scalar starts at its header (`|`, `>`), which its props hold.
    const start = token === undefined ? -1 : token.type === 'block-scalar' ? (token.props[0]?.offset ?? token.offset) : token.offset;
    setScalarText(node, text);
    if (token !== undefined) this.recorded.push({ start, end: start + was.length, text: this.written(CST.stringify(token)), was });
  }

  toText(): string {
    return this.written(this.tokens.map((token) => CST.stringify(token)).join(''));
  }

  edits(): TextEdit[] | undefined {
    const edits = this.recorded.slice().sort((a, b) => a.start - b.start);
    for (let i = 0; i < edits.length; i++) {
      const edit = edits[i]!;
      if (edit.start < 0 || this.source.slice(edit.start, edit.end) !== edit.was || (i > 0 && edit.start < edits[i - 1]!.end)) return undefined;
    }
    return edits.map(({ start, end, text }) => ({ start, end, text }));
  }

  /** Text as the file writes it: with CR alone where the file read had it. */
  private written(text: string): string {
    return this.loneCr ? text.replaceAll('\n', '\r') : text;
  }
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
