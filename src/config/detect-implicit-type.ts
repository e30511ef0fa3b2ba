/**
 * Which unquoted texts some YAML reader turns into something other than a string. orgform reads
 * YAML 1.2, but files are also read by editors, linters and scripts, many of them YAML 1.1 (where
 * `on` is true, `0123` is octal 83 and `2024-01-02` a date); an identifier must mean the same to
 * all of them, so anything either version would convert must be quoted.
 */
import type { SourceScalar } from './source-tree.js';

export type ImplicitType = 'null' | 'boolean' | 'number' | 'date';

const NULL = /^(?:~|null|Null|NULL)?$/;
// YAML 1.2 core and YAML 1.1 booleans (1.1 adds y/n, yes/no, on/off).
const BOOLEAN = /^(?:[Tt]rue|TRUE|[Ff]alse|FALSE|[Yy]|[Yy]es|YES|[Nn]|[Nn]o|NO|[Oo]n|ON|[Oo]ff|OFF)$/;
const NUMBER = [
  // YAML 1.2 core
  /^[-+]?[0-9]+$/,
  /^0o[0-7]+$/,
  /^0x[0-9a-fA-F]+$/,
  /^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?$/,
  /^(?:[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN)$/,
  // YAML 1.1: underscores, binary, octal with a leading 0, sexagesimal (1:30), loose floats
  /^[-+]?0b[0-1_]+$/,
  /^[-+]?0[0-7_]+$/,
  /^[-+]?[0-9][0-9_]*$/,
  /^[-+]?0x[0-9a-fA-F_]+$/,
  /^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$/,
  /^[-+]?(?:[0-9][0-9_]*)?\.[0-9_]*(?:[eE][-+]?[0-9]+)?$/,
  /^[-+]?(?:[0-9][0-9_]*)?(?:\.[0-9_]*)?[eE][-+]?[0-9]+$/,
];
const DATE =
  /^[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:(?:[Tt]|[ \t]+)[0-9]{1,2}:[0-9]{1,2}:[0-9]{1,2}(?:\.[0-9]*)?(?:[ \t]*(?:Z|[-+][012]?[0-9](?::[0-9]{2})?))?)?$/;

/** The type a YAML 1.1 or 1.2 reader gives this unquoted text, or undefined when every one reads a string. */
export function detectImplicitType(text: string): ImplicitType | undefined {
  // Cheap tests first: this runs on every unquoted string of a file. No null or boolean is longer
  // than 5 characters, and every number and date starts with a sign, a dot or a digit.
  if (text.length <= 5) {
    if (NULL.test(text)) return 'null';
    if (BOOLEAN.test(text)) return 'boolean';
  }
  const first = text.charCodeAt(0);
  const numeric = (first >= 0x30 && first <= 0x39) || first === 0x2b || first === 0x2d || first === 0x2e;
  // "." matches YAML 1.1's float pattern, but no reader makes a number of it; it gets its own message.
  if (!numeric || text === '.') return undefined;
  if (DATE.test(text)) return 'date';
  if (NUMBER.some((pattern) => pattern.test(text))) return 'number';
  return undefined;
}

// Scalars that YAML reads other than as written, where a string is expected: unquoted text that
// some YAML reader turns into a number, boolean, date or null, and keys that cannot be slugs.

const TYPE_WORDS: Record<ImplicitType, string> = { null: 'null', boolean: 'a boolean', number: 'a number', date: 'a date' };

/** Why this scalar would not be read as the string it looks like, or undefined when it would. */
export function describeUnquoted(scalar: SourceScalar): string | undefined {
  if (!scalar.plain) return undefined;
  const type = detectImplicitType(scalar.source);
  if (type === undefined) return undefined;
  if (scalar.source === '') return 'no value here (YAML reads an empty value as null): write a value or remove the key';
  return `unquoted ${scalar.source} would be read as ${TYPE_WORDS[type]}, not a string: quote it: "${scalar.source}"`;
}

/** Why this key cannot name what it stands for (under a map whose keys the schema checks), or undefined. */
export function describeBadKey(key: SourceScalar): string | undefined {
  if (key.plain && key.source === '') return 'empty key: write the slug';
  const unquoted = describeUnquoted(key);
  if (unquoted !== undefined) return unquoted;
  if (typeof key.value === 'string' && key.value.includes('${')) return '${...} is not interpolated in keys: write the slug itself';
  return undefined;
}
