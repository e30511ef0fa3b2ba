/**
 * Scalars that YAML reads other than as written, where a string is expected: unquoted text that
 * some YAML reader turns into a number, boolean, date or null, and keys that cannot be slugs.
 */
import { detectImplicitType, type ImplicitType } from './detect-implicit-type.js';
import type { SourceScalar } from './source-tree.js';

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
