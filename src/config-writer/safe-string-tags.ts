/**
 * The yaml package's tags with one change: every string is written by formatYamlString, plain
 * only when no YAML reader, 1.1 or 1.2, could take it for anything but that string, and otherwise
 * double-quoted with orgform's own escapes. yaml's own string writer would choose plain for `on`
 * or `0123` under the 1.2 core schema (which the loader refuses unquoted, because YAML 1.1 tools
 * read them as a boolean and a number), fold long lines, and write some control characters, the
 * line separators and lone surrogates as themselves. Pure.
 */
import type { ScalarTag, Tags } from 'yaml';
import { formatYamlString } from './format-yaml-string.js';

const STRING_TAG = 'tag:yaml.org,2002:str';

function isStringTag(tag: Tags[number]): tag is ScalarTag {
  return typeof tag === 'object' && tag.tag === STRING_TAG && !('collection' in tag && tag.collection !== undefined);
}

/**
 * For `customTags` of a Document. The caller stores values exactly as the loader must read them
 * back before interpolation (`${` already escaped as `$${`), so keys and values alike go through
 * here unchanged, on one line, whatever the context (block, flow or key).
 */
export function safeStringTags(tags: Tags): Tags {
  return tags.map((tag) => (isStringTag(tag) ? { ...tag, stringify: (item) => formatYamlString(String(item.value)) } : tag));
}
