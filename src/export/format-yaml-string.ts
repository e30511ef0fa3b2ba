/**
 * A string as one YAML scalar that every YAML reader, 1.1 or 1.2, reads back as that same string:
 * plain when it is an unremarkable word, double-quoted otherwise. The loader refuses unquoted text
 * that some reader would take for a number, boolean, date or null (`0123`, `on`, `2024-01-02`), so
 * such text is always quoted here.
 */
import { detectImplicitType } from '../config/detect-implicit-type.js';

/** Narrower than YAML allows, on purpose: anything else is quoted. */
const PLAIN = /^[A-Za-z0-9_][A-Za-z0-9_.@/+~=-]*$/;

// C0 and C1 controls, DEL, the Unicode line and paragraph separators, the byte-order mark, and
// lone surrogates (which UTF-8 cannot carry): written as escapes, never as themselves.
const ESCAPED = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\ufeff"\\]|[\ud800-\udfff]/gu;

const SHORT_ESCAPES: Readonly<Record<string, string>> = {
  '"': '\\"',
  '\\': '\\\\',
  '\n': '\\n',
  '\t': '\\t',
  '\r': '\\r',
};

/** Double-quoted YAML (also valid as the inside of a comment: it holds no line break). */
export function quoteYamlString(text: string): string {
  return `"${text.replace(ESCAPED, (c) => SHORT_ESCAPES[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)}"`;
}

export function formatYamlString(text: string): string {
  return PLAIN.test(text) && detectImplicitType(text) === undefined ? text : quoteYamlString(text);
}
