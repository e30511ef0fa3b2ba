/**
 * Characters a person cannot see for what they are: they print as nothing (zero-width spaces and
 * joiners, soft hyphens, fillers, variation selectors, tag characters, C1 controls, and the rest of
 * Unicode's default-ignorable code points), look like a plain space and are not (no-break and other
 * spaces, the blank Braille pattern), or reorder the text around them (bidirectional controls:
 * the Trojan Source trick, CVE-2021-42574). A lone surrogate is no character at all and prints as
 * a replacement mark. `"sub\u200b_acme"` then reads as `"sub_acme"`, and a plan that changes one
 * into the other looks like no change.
 *
 * One list, for every use: the human views escape these (`\u200B`) and mark the value; validate
 * warns about them in values and refuses them in identifiers. Machine outputs (JSON, NDJSON) keep
 * the exact values.
 */

const OTHER_SPACE = 'space other than a plain space';

/** [first, last] code points, with what they are. */
const RANGES: ReadonlyArray<readonly [number, number, string]> = [
  [0x0080, 0x009f, 'C1 control character'],
  [0x00a0, 0x00a0, 'no-break space'],
  [0x00ad, 0x00ad, 'soft hyphen'],
  [0x034f, 0x034f, 'combining grapheme joiner'],
  [0x061c, 0x061c, 'bidirectional control'],
  [0x115f, 0x1160, 'Hangul filler'],
  [0x1680, 0x1680, OTHER_SPACE],
  [0x17b4, 0x17b5, 'invisible Khmer vowel'],
  [0x180b, 0x180d, 'Mongolian variation selector'],
  [0x180e, 0x180e, 'invisible format character'],
  [0x180f, 0x180f, 'Mongolian variation selector'],
  [0x2000, 0x200a, OTHER_SPACE],
  [0x200b, 0x200d, 'zero-width character'],
  [0x200e, 0x200f, 'bidirectional control'],
  [0x2028, 0x2029, 'line or paragraph separator'],
  [0x202a, 0x202e, 'bidirectional control'],
  [0x202f, 0x202f, 'no-break space'],
  [0x205f, 0x205f, OTHER_SPACE],
  [0x2060, 0x2065, 'invisible format character'],
  [0x2066, 0x2069, 'bidirectional control'],
  [0x206a, 0x206f, 'invisible format character'],
  [0x2800, 0x2800, 'blank Braille pattern, which looks like a space'],
  [0x3000, 0x3000, OTHER_SPACE],
  [0x3164, 0x3164, 'Hangul filler'],
  [0xfe00, 0xfe0d, 'variation selector'],
  [0xfeff, 0xfeff, 'zero-width character'],
  [0xffa0, 0xffa0, 'Hangul filler'],
  [0xfff0, 0xfff8, 'invisible format character'],
  [0xfff9, 0xfffb, 'invisible format character'],
  [0x1bca0, 0x1bca3, 'invisible format character'],
  [0x13430, 0x1343f, 'invisible format character'],
  [0x1d173, 0x1d17a, 'invisible format character'],
  [0xe0000, 0xe007f, 'tag character'],
  [0xe0080, 0xe00ff, 'invisible format character'],
  [0xe0100, 0xe01ef, 'variation selector'],
  [0xe01f0, 0xe0fff, 'invisible format character'],
];

const hex = (n: number) => n.toString(16).toUpperCase().padStart(4, '0');
const classOf = (first: number, last: number) => (first === last ? `\\u{${hex(first)}}` : `\\u{${hex(first)}}-\\u{${hex(last)}}`);

/**
 * The text and emoji presentation selectors (U+FE0E, U+FE0F) are invisible too, except where they
 * do their job: after a pictograph (`⚠️`) or in a keycap (`1️⃣`).
 */
const PRESENTATION_SELECTOR = '(?<!\\p{Extended_Pictographic})[\\uFE0E\\uFE0F](?!\\u20E3)';

/** Every such character (and every lone surrogate), for `replace` and `matchAll`. */
const INVISIBLE = new RegExp(`[${RANGES.map(([first, last]) => classOf(first, last)).join('')}]|${PRESENTATION_SELECTOR}|\\p{Surrogate}`, 'gu');
/** The same, for a test: no `g`, so no state between calls. */
const ANY_INVISIBLE = new RegExp(INVISIBLE.source, 'u');
const LONE_SURROGATE = /\p{Surrogate}/u;

/** What a value holding such characters is marked with in the human views. */
export const INVISIBLE_NOTE = 'contains invisible characters';

export function hasInvisibleCharacters(text: string): boolean {
  return ANY_INVISIBLE.test(text);
}

/** `U+200B` for one code point (a lone surrogate included). */
export function codePointName(char: string): string {
  return `U+${hex(char.codePointAt(0)!)}`;
}

/** What a character is, for validate's messages: `zero-width character`, `bidirectional control`, `lone surrogate`. */
export function describeInvisibleCharacter(char: string): string {
  const cp = char.codePointAt(0)!;
  if (cp >= 0xd800 && cp <= 0xdfff) return 'lone surrogate';
  if (cp === 0xfe0e || cp === 0xfe0f) return 'variation selector';
  return RANGES.find(([first, last]) => cp >= first && cp <= last)?.[2] ?? 'invisible character';
}

/** The distinct such characters in `text`, in order of appearance: `['U+200B', 'U+202E']`. */
export function findInvisibleCharacters(text: string): string[] {
  const found = new Set<string>();
  for (const [char] of text.matchAll(INVISIBLE)) found.add(codePointName(char));
  return [...found];
}

/** The first such character of `text` (a lone surrogate included), with its UTF-16 index; undefined when there is none. */
export function firstInvisibleCharacter(text: string): { index: number; char: string } | undefined {
  const match = ANY_INVISIBLE.exec(text);
  return match === null ? undefined : { index: match.index, char: match[0] };
}

/** The first lone surrogate of `text`: no character at all, which UTF-8 (so no file and no request) can carry. */
export function firstLoneSurrogate(text: string): { index: number; char: string } | undefined {
  const match = LONE_SURROGATE.exec(text);
  return match === null ? undefined : { index: match.index, char: match[0] };
}

/** `text` with each such character replaced by what `write` makes of it (an escape, in some syntax). */
export function replaceInvisibleCharacters(text: string, write: (char: string, codePoint: number) => string): string {
  return text.replace(INVISIBLE, (char) => write(char, char.codePointAt(0)!));
}

/**
 * Each such character written as an escape that shows it: `\u200B`, `\u{E0041}` beyond the Basic
 * Multilingual Plane. Everything else is left as it is.
 */
export function escapeInvisibleCharacters(text: string): string {
  return replaceInvisibleCharacters(text, (_, cp) => (cp > 0xffff ? `\\u{${hex(cp)}}` : `\\u${hex(cp)}`));
}
