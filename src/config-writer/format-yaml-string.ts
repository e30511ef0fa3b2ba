/**
 * A string as one YAML scalar that every YAML reader, 1.1 or 1.2, reads back as that same string:
 * plain when it is an unremarkable word, double-quoted otherwise, or single-quoted where the text
 * being replaced was and can stay so. The loader refuses unquoted text that some reader would take
 * for a number, boolean, date or null (`0123`, `on`, `2024-01-02`), so such text is always quoted
 * here.
 */
import { detectImplicitType } from '../config/detect-implicit-type.js';
import { hasInvisibleCharacters, replaceInvisibleCharacters } from '../model/invisible-characters.js';

/** Narrower than YAML allows, on purpose: anything else is quoted. */
const PLAIN = /^[A-Za-z0-9_][A-Za-z0-9_.@/+~=-]*$/;

// C0 and C1 controls, DEL, the Unicode line and paragraph separators, the byte-order mark and
// lone surrogates (which UTF-8 cannot carry), and the quote and backslash themselves: written as
// escapes, never as themselves. So are the invisible and bidirectional characters of
// model/invisible-characters.ts, so that a review shows them.
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\ufeff]|[\ud800-\udfff]/u;
const ESCAPED = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\ufeff"\\]|[\ud800-\udfff]/gu;

const SHORT_ESCAPES: Readonly<Record<string, string>> = {
  '"': '\\"',
  '\\': '\\\\',
  '\n': '\\n',
  '\t': '\\t',
  '\r': '\\r',
};

/** YAML's escapes: `\u` with four hex digits, `\U` with eight beyond the Basic Multilingual Plane. */
function escape(c: string): string {
  const short = SHORT_ESCAPES[c];
  if (short !== undefined) return short;
  const codePoint = c.codePointAt(0)!;
  return codePoint > 0xffff ? `\\U${codePoint.toString(16).padStart(8, '0')}` : `\\u${codePoint.toString(16).padStart(4, '0')}`;
}

/** An invisible character as the human views write it too (`\u200B`, upper case), in YAML's syntax (`\U000E0041` beyond 16 bits). */
function escapeInvisible(_: string, codePoint: number): string {
  const hex = codePoint.toString(16).toUpperCase();
  return codePoint > 0xffff ? `\\U${hex.padStart(8, '0')}` : `\\u${hex.padStart(4, '0')}`;
}

/** Double-quoted YAML (also valid as the inside of a comment: it holds no line break). */
export function quoteYamlString(text: string): string {
  return `"${replaceInvisibleCharacters(text.replace(ESCAPED, escape), escapeInvisible)}"`;
}

/** Whether `text` can be written as itself (single-quoted, or line by line in a block scalar): nothing in it needs an escape. */
export function needsNoEscape(text: string, allowLineBreaks = false): boolean {
  const checked = allowLineBreaks ? text.replaceAll('\n', '') : text;
  return !CONTROL.test(checked) && !hasInvisibleCharacters(checked);
}

/** Single-quoted YAML (`'it''s'`), or undefined when the text needs an escape, which only double quotes have. */
export function singleQuoteYamlString(text: string): string | undefined {
  return needsNoEscape(text) ? `'${text.replaceAll("'", "''")}'` : undefined;
}

export function formatYamlString(text: string): string {
  return PLAIN.test(text) && detectImplicitType(text) === undefined ? text : quoteYamlString(text);
}
