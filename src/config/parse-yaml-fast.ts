/**
 * A parser for the plain YAML that orgs files are usually written in: block mappings, lists of
 * scalars, `[a, b]`, `{}`, unquoted and simply quoted scalars, comments. It reads such a file tens
 * of times faster than the yaml package (docs/performance.md), which is what makes validating a
 * bulk file quick.
 *
 * It never guesses: on anything outside that subset (anchors, tags, multi-line scalars, escapes,
 * tabs, non-ASCII outside comments, YAML-typed keys...) it returns undefined and the caller parses
 * with the yaml package instead. When it does return a tree, that tree is exactly the one the yaml
 * package gives (test/config/parse-yaml-fast.test.ts checks this on generated documents).
 */
import { emptyScalar, type SourceMap, type SourceNode, type SourceScalar, type SourceSeq } from './source-tree.js';

/** Not in the subset: parse with the yaml package. */
const NOT_FAST = undefined;

function charTable(chars: string): Uint8Array {
  const table = new Uint8Array(128);
  for (let i = 0; i < chars.length; i++) table[chars.charCodeAt(i)] = 1;
  return table;
}

// Character classes, narrower than YAML allows: anything else sends the file to the yaml package.
const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const KEY_FIRST = charTable(`${ALNUM}_$`);
const KEY_CHAR = charTable(`${ALNUM}_.@$/+~-`);
const PLAIN_FIRST = charTable(`${ALNUM}_$./~+`);
const PLAIN_CHAR = charTable(`${ALNUM}_$./~+@=(){}-`);
const FLOW_CHAR = charTable(`${ALNUM}_$./~+@=()-`);

const SPACE = 0x20;
const HASH = 0x23;
const COLON = 0x3a;
const DASH = 0x2d;
const DQUOTE = 0x22;
const SQUOTE = 0x27;
const BACKSLASH = 0x5c;
const LBRACKET = 0x5b;
const RBRACKET = 0x5d;
const LBRACE = 0x7b;
const RBRACE = 0x7d;
const COMMA = 0x2c;
const CR = 0x0d;

/** YAML refuses implicit keys longer than 1024 characters; stay well clear. */
const MAX_KEY_LENGTH = 1000;

/** YAML 1.2 core schema: the unquoted texts that are not strings. */
const CORE_NOT_STRING = [
  /^(?:~|[Nn]ull|NULL)?$/,
  /^(?:[Tt]rue|TRUE|[Ff]alse|FALSE)$/,
  /^[-+]?[0-9]+$/,
  /^0o[0-7]+$/,
  /^0x[0-9a-fA-F]+$/,
  /^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+$/,
  /^[-+]?(?:\.[0-9]+|[0-9]+\.[0-9]*)$/,
  /^(?:[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN)$/,
];
/** Only texts starting with one of these can be anything but a string under the core schema. */
const MAY_NOT_BE_STRING = charTable('-+.0123456789~nNtTfF');

function isIn(table: Uint8Array, code: number): boolean {
  return code < 128 && table[code] === 1;
}

/** Comments may hold any text but what YAML would take as a line break, a control character or a BOM. */
function isCommentText(s: string, from: number, to: number): boolean {
  for (let i = from; i < to; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || (c >= 0x7f && c <= 0x9f) || c === 0x2028 || c === 0x2029 || c === 0xfeff) return false;
  }
  return true;
}

interface Token {
  text: string;
  quoted: boolean;
  /** 1-based column. */
  col: number;
}

/** Scans one line, s[i..end), of the whole text; columns are counted from lineStart. One per document, reset per line. */
class LineScanner {
  i = 0;
  lineStart = 0;
  end = 0;
  constructor(readonly s: string) {}
  reset(lineStart: number, end: number): void {
    this.i = lineStart;
    this.lineStart = lineStart;
    this.end = end;
  }
  get done(): boolean {
    return this.i >= this.end;
  }
  code(): number {
    return this.i < this.end ? this.s.charCodeAt(this.i) : -1;
  }
  col(): number {
    return this.i - this.lineStart + 1;
  }
  skipSpaces(): number {
    const start = this.i;
    while (this.i < this.end && this.s.charCodeAt(this.i) === SPACE) this.i++;
    return this.i - start;
  }
  /** Nothing more on the line but, after at least one space, a comment. */
  atLineEnd(): boolean {
    const spaces = this.skipSpaces();
    if (this.done) return true;
    return this.code() === HASH && spaces > 0 && isCommentText(this.s, this.i + 1, this.end);
  }
  quoted(): Token | undefined {
    const quote = this.code();
    const col = this.col();
    const start = this.i + 1;
    let j = start;
    for (; j < this.end; j++) {
      const c = this.s.charCodeAt(j);
      if (c === quote) break;
      if (c < 0x20 || c > 0x7e || c === BACKSLASH) return undefined;
    }
    if (j >= this.end) return undefined;
    // '' inside single quotes is an escaped quote: leave those to the yaml package.
    if (quote === SQUOTE && this.s.charCodeAt(j + 1) === SQUOTE) return undefined;
    this.i = j + 1;
    return { text: this.s.slice(start, j), quoted: true, col };
  }
  /** A quoted scalar, else a run of `chars` that starts with one of `first`. */
  private quotedOrRun(first: Uint8Array, chars: Uint8Array): Token | undefined {
    const c = this.code();
    if (c === DQUOTE || c === SQUOTE) return this.quoted();
    if (!isIn(first, c)) return undefined;
    const start = this.i;
    const col = this.col();
    while (this.i < this.end && isIn(chars, this.s.charCodeAt(this.i))) this.i++;
    return { text: this.s.slice(start, this.i), quoted: false, col };
  }
  key(): Token | undefined {
    const token = this.quotedOrRun(KEY_FIRST, KEY_CHAR);
    return token !== undefined && !token.quoted && token.text.length > MAX_KEY_LENGTH ? undefined : token;
  }
  /** An unquoted scalar in block context: words of PLAIN_CHAR separated by spaces, up to a comment or the end. */
  plain(): Token | undefined {
    if (!isIn(PLAIN_FIRST, this.code())) return undefined;
    const start = this.i;
    const col = this.col();
    let last = this.i;
    while (this.i < this.end) {
      const c = this.s.charCodeAt(this.i);
      if (isIn(PLAIN_CHAR, c)) {
        this.i++;
        last = this.i;
      } else if (c === SPACE) {
        this.skipSpaces();
        if (this.done || this.code() === HASH) break;
      } else {
        return undefined;
      }
    }
    this.i = last;
    return { text: this.s.slice(start, last), quoted: false, col };
  }
  scalar(): Token | undefined {
    const c = this.code();
    return c === DQUOTE || c === SQUOTE ? this.quoted() : this.plain();
  }
  flowItem(): Token | undefined {
    return this.quotedOrRun(PLAIN_FIRST, FLOW_CHAR);
  }
}

function toScalar(token: Token, line: number, asKey: boolean): SourceScalar | undefined {
  const pos = { line, col: token.col };
  const { text } = token;
  if (token.quoted) return { kind: 'scalar', pos, value: text, source: text, plain: false };
  if (text === '' || isIn(MAY_NOT_BE_STRING, text.charCodeAt(0))) {
    if (!asKey && /^[0-9]+$/.test(text)) {
      // As the yaml package resolves a YAML 1.2 decimal integer.
      return { kind: 'scalar', pos, value: parseInt(text, 10), source: text, plain: true };
    }
    if (CORE_NOT_STRING.some((pattern) => pattern.test(text))) return undefined;
  }
  return { kind: 'scalar', pos, value: text, source: text, plain: true };
}

/** The value after `key: `, on the same line. */
function readValue(sc: LineScanner, line: number): SourceNode | undefined {
  const c = sc.code();
  if (c === LBRACE) {
    if (sc.s.charCodeAt(sc.i + 1) !== RBRACE) return undefined;
    const col = sc.col();
    sc.i += 2;
    return { kind: 'map', pos: { line, col }, pairs: [] };
  }
  if (c !== LBRACKET) {
    const token = sc.scalar();
    return token && toScalar(token, line, false);
  }
  const seq: SourceSeq = { kind: 'seq', pos: { line, col: sc.col() }, items: [] };
  sc.i++;
  sc.skipSpaces();
  if (sc.code() === RBRACKET) {
    sc.i++;
    return seq;
  }
  for (;;) {
    const token = sc.flowItem();
    const item = token && toScalar(token, line, false);
    if (item === undefined) return undefined;
    seq.items.push(item);
    sc.skipSpaces();
    const next = sc.code();
    sc.i++;
    if (next === RBRACKET) return seq;
    if (next !== COMMA) return undefined;
    sc.skipSpaces();
  }
}

type Frame = { indent: number } & ({ kind: 'map'; node: SourceMap } | { kind: 'seq'; node: SourceSeq });

/** What one line holds: a list item, or a key with its value on the line (or none yet: the next lines open it). */
interface Line {
  indent: number;
  lineNo: number;
  item?: SourceScalar;
  /** 1-based column of the item's dash. */
  itemCol: number;
  key?: SourceScalar;
  value?: SourceNode;
}

/**
 * The document's tree, null for a document without content (blank or comments only), or
 * undefined when the text is not in the subset this parser handles.
 */
export function parseYamlFast(text: string): SourceNode | null | undefined {
  const sc = new LineScanner(text);
  const tree = new BlockTree();
  let lineNo = 0;
  for (let lineStart = 0; lineStart <= text.length; ) {
    lineNo += 1;
    let next = text.indexOf('\n', lineStart);
    if (next < 0) next = text.length;
    const end = next > lineStart && text.charCodeAt(next - 1) === CR ? next - 1 : next;
    sc.reset(lineStart, end);
    lineStart = next + 1;
    const line = readLine(sc, lineNo);
    if (line === NOT_FAST) return NOT_FAST;
    if (line !== BLANK && !tree.add(line)) return NOT_FAST;
  }
  return tree.finish();
}

const BLANK = null;

/** The line the scanner is set to: blank (or a comment), its content, or NOT_FAST. */
function readLine(sc: LineScanner, lineNo: number): Line | typeof BLANK | undefined {
  const indent = sc.skipSpaces();
  if (sc.done) return BLANK;
  if (sc.code() === HASH) return isCommentText(sc.s, sc.i + 1, sc.end) ? BLANK : NOT_FAST;
  if (sc.code() === DASH && sc.s.charCodeAt(sc.i + 1) === SPACE) {
    const itemCol = sc.col();
    sc.i++;
    sc.skipSpaces();
    const token = sc.scalar();
    const item = token && toScalar(token, lineNo, false);
    return item === undefined || !sc.atLineEnd() ? NOT_FAST : { indent, lineNo, item, itemCol };
  }
  const token = sc.key();
  if (token === undefined || sc.code() !== COLON) return NOT_FAST;
  const key = toScalar(token, lineNo, true);
  if (key === undefined) return NOT_FAST;
  sc.i++;
  if (sc.done) return { indent, lineNo, key, itemCol: 0 };
  if (sc.code() !== SPACE) return NOT_FAST;
  sc.skipSpaces();
  if (sc.code() === HASH) return isCommentText(sc.s, sc.i + 1, sc.end) ? { indent, lineNo, key, itemCol: 0 } : NOT_FAST;
  if (sc.done) return { indent, lineNo, key, itemCol: 0 };
  const value = readValue(sc, lineNo);
  return value === undefined || !sc.atLineEnd() ? NOT_FAST : { indent, lineNo, key, value, itemCol: 0 };
}

/** The block mappings and lists open at each indentation, built line by line. */
class BlockTree {
  private readonly stack: Frame[] = [];
  /** A `key:` with nothing after it: its value is whatever the next lines open, or null. */
  private pending: { map: SourceMap; key: SourceScalar; indent: number } | undefined;

  /** False when the line does not fit where it stands (the yaml package then decides what it is). */
  add(line: Line): boolean {
    const { indent, key, item } = line;
    if (this.stack.length === 0) {
      if (key === undefined || indent !== 0) return false;
      this.stack.push({ kind: 'map', indent: 0, node: { kind: 'map', pos: key.pos, pairs: [] } });
    }
    if (this.pending !== undefined) this.openPending(line);
    const top = this.frameAt(indent, key !== undefined);
    if (top === undefined) return false;
    if (item !== undefined) {
      if (top.kind !== 'seq') return false;
      top.node.items.push(item);
    } else if (key !== undefined) {
      if (top.kind !== 'map') return false;
      if (line.value === undefined) this.pending = { map: top.node, key, indent };
      else top.node.pairs.push({ key, value: line.value });
    }
    return true;
  }

  /** The pending key's value: a mapping or list that this line opens, or null. */
  private openPending(line: Line): void {
    const { map, key, indent } = this.pending!;
    this.pending = undefined;
    if (line.key !== undefined && line.indent > indent) {
      const node: SourceMap = { kind: 'map', pos: line.key.pos, pairs: [] };
      map.pairs.push({ key, value: node });
      this.stack.push({ kind: 'map', indent: line.indent, node });
    } else if (line.item !== undefined && line.indent >= indent) {
      const node: SourceSeq = { kind: 'seq', pos: { line: line.lineNo, col: line.itemCol }, items: [] };
      map.pairs.push({ key, value: node });
      this.stack.push({ kind: 'seq', indent: line.indent, node });
    } else {
      map.pairs.push({ key, value: emptyScalar(key.pos) });
    }
  }

  /** The open mapping or list a line at `indent` belongs to, closing the deeper ones; undefined when none is at that indentation. */
  private frameAt(indent: number, isKey: boolean): Frame | undefined {
    const stack = this.stack;
    while (stack.length > 1 && stack[stack.length - 1]!.indent > indent) stack.pop();
    let top = stack[stack.length - 1]!;
    // A list may stand at the same indentation as the key that holds it; a key there ends it.
    if (top.kind === 'seq' && isKey && top.indent === indent && stack.length > 1) {
      stack.pop();
      top = stack[stack.length - 1]!;
    }
    return top.indent === indent ? top : undefined;
  }

  finish(): SourceNode | null {
    const pending = this.pending;
    if (pending !== undefined) pending.map.pairs.push({ key: pending.key, value: emptyScalar(pending.key.pos) });
    return this.stack[0]?.node ?? null;
  }
}
