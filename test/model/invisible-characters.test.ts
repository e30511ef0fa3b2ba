import { describe, expect, it } from 'vitest';
import {
  codePointName,
  describeInvisibleCharacter,
  escapeInvisibleCharacters,
  findInvisibleCharacters,
  firstInvisibleCharacter,
  firstLoneSurrogate,
  hasInvisibleCharacters,
  replaceInvisibleCharacters,
} from '../../src/model/invisible-characters.js';

describe('invisible characters', () => {
  it('escapes zero-width, bidirectional, tag and space-like characters so that they show, and leaves the rest alone', () => {
    expect(escapeInvisibleCharacters('sub\u200b_acme')).toBe('sub\\u200B_acme');
    expect(escapeInvisibleCharacters('abc\u202Edef\u2066x\u2069')).toBe('abc\\u202Edef\\u2066x\\u2069');
    expect(escapeInvisibleCharacters('a\u00a0b\u3000c\ufeff')).toBe('a\\u00A0b\\u3000c\\uFEFF');
    expect(escapeInvisibleCharacters('tag\u{E0041}')).toBe('tag\\u{E0041}');
    expect(escapeInvisibleCharacters('plain ascii, café, 日本, 😀, 👍🏽')).toBe('plain ascii, café, 日本, 😀, 👍🏽');
  });

  it('escapes every default-ignorable code point, C1 controls and the blank Braille pattern, which print as nothing or as a space', () => {
    const hidden = ['\u0085', '\u009B', '\u180E', '\u2800', '\uFFF0', '\u{13430}', '\u{E0080}', '\u{E0FFF}'];
    expect(hidden.map((c) => escapeInvisibleCharacters(`a${c}b`))).toEqual([
      'a\\u0085b',
      'a\\u009Bb',
      'a\\u180Eb',
      'a\\u2800b',
      'a\\uFFF0b',
      'a\\u{13430}b',
      'a\\u{E0080}b',
      'a\\u{E0FFF}b',
    ]);
    const ignorable = /^\p{Default_Ignorable_Code_Point}$/u;
    const missed: string[] = [];
    for (let cp = 0; cp <= 0x10ffff; cp++) {
      const c = String.fromCodePoint(cp);
      // U+FE0E and U+FE0F are tested apart: they are left where they do their job.
      if (ignorable.test(c) && cp !== 0xfe0e && cp !== 0xfe0f && !hasInvisibleCharacters(`a${c}b`)) missed.push(codePointName(c));
    }
    expect(missed).toEqual([]);
    expect(describeInvisibleCharacter('\u009B')).toBe('C1 control character');
  });

  it('leaves a presentation selector where it does its job (after a pictograph, in a keycap) and escapes it anywhere else', () => {
    expect(escapeInvisibleCharacters('⚠️ 1 problem, 1️⃣, ❤︎')).toBe('⚠️ 1 problem, 1️⃣, ❤︎');
    expect(escapeInvisibleCharacters('sub\uFE0F_acme')).toBe('sub\\uFE0F_acme');
    expect(escapeInvisibleCharacters('a\uFE00b\u{E0100}')).toBe('a\\uFE00b\\u{E0100}');
  });

  it('escapes a lone surrogate, which prints as a replacement mark, but not a surrogate pair', () => {
    expect(escapeInvisibleCharacters('a\uD800b\uDC00')).toBe('a\\uD800b\\uDC00');
    expect(escapeInvisibleCharacters('\uD83D\uDE00')).toBe('😀');
  });

  it('finds each such character once, in order, and tests for any', () => {
    expect(findInvisibleCharacters('\u202Ex\u200By\u202E')).toEqual(['U+202E', 'U+200B']);
    expect(hasInvisibleCharacters('sub_acme')).toBe(false);
    expect(hasInvisibleCharacters('sub\u200b_acme')).toBe(true);
    // No state kept between calls (a global regular expression would alternate).
    expect([1, 2, 3].map(() => hasInvisibleCharacters('x\u2066'))).toEqual([true, true, true]);
  });

  it('says what a character is, for messages', () => {
    expect(describeInvisibleCharacter('\u202E')).toBe('bidirectional control');
    expect(describeInvisibleCharacter('\u200B')).toBe('zero-width character');
    expect(describeInvisibleCharacter('\uD800')).toBe('lone surrogate');
    expect(describeInvisibleCharacter('\u{E0041}')).toBe('tag character');
  });

  it('finds the first one, by its UTF-16 index, astral ones whole, and names it by its code point', () => {
    expect(firstInvisibleCharacter('sub\u200b_a\u202e')).toEqual({ index: 3, char: '\u200b' });
    expect(firstInvisibleCharacter('x\u{e0041}')).toEqual({ index: 1, char: '\u{e0041}' });
    expect(firstInvisibleCharacter('plain text, café, ⚠️, 😀')).toBeUndefined();
    expect(codePointName('\u{e0041}')).toBe('U+E0041');
  });

  it('finds a lone surrogate, whatever comes before it, but not a whole pair', () => {
    expect(firstLoneSurrogate('a\u200bb\ud800')).toEqual({ index: 3, char: '\ud800' });
    expect(firstLoneSurrogate('a😀\udc00')).toEqual({ index: 3, char: '\udc00' });
    expect(firstLoneSurrogate('a😀\u200b')).toBeUndefined();
  });

  it('replaces each one with what it is given to write, for escapes of another syntax', () => {
    expect(replaceInvisibleCharacters('a\u200bb\u{e0041}c', (_, cp) => `<${cp.toString(16)}>`)).toBe('a<200b>b<e0041>c');
  });
});

