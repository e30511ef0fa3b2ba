import { describe, expect, it } from 'vitest';
import { splitWords, WordsError } from '../../action/split-words.mjs';

describe('splitWords', () => {
  it('splits on spaces, tabs and line breaks, and drops empty words', () => {
    expect(splitWords('  plan\t-f a.yaml\n\n-f  b.yaml ')).toEqual(['plan', '-f', 'a.yaml', '-f', 'b.yaml']);
    expect(splitWords('')).toEqual([]);
  });

  it('groups quoted text: single quotes literally, double quotes with \\" and \\\\', () => {
    expect(splitWords(`--target 'a b' "c \\"d\\" \\\\ \\n" e\\ f ''`)).toEqual(['--target', 'a b', 'c "d" \\ \\n', 'e f', '']);
  });

  it('expands nothing: variables, command substitution, globs and separators stay text', () => {
    expect(splitWords('$HOME $(id) `id` *.yaml a;b && c')).toEqual(['$HOME', '$(id)', '`id`', '*.yaml', 'a;b', '&&', 'c']);
  });

  it('refuses an unterminated quote', () => {
    expect(() => splitWords(`--target 'a`)).toThrow(WordsError);
    expect(() => splitWords('--target "a')).toThrow('unterminated " quote');
  });
});
