// @ts-check
/**
 * Splits an input (`args`, `files`) into words the way a shell would, without what makes a shell
 * dangerous: quotes group ('…' literally, "…" with \" and \\), a backslash escapes outside single
 * quotes, and nothing is expanded ($VAR, $(…), `…`, globs and ; stay text). The words go to orgform
 * as separate arguments, never through a shell.
 */

export class WordsError extends Error {}

/**
 * @param {string} text
 * @returns {string[]}
 */
export function splitWords(text) {
  /** @type {string[]} */
  const words = [];
  let word = '';
  let inWord = false;
  /** @type {'"' | "'" | undefined} */
  let quote;
  for (let i = 0; i < text.length; i += 1) {
    const c = /** @type {string} */ (text[i]);
    if (quote === "'") {
      if (c === "'") quote = undefined;
      else word += c;
    } else if (quote === '"') {
      if (c === '"') quote = undefined;
      else if (c === '\\' && (text[i + 1] === '"' || text[i + 1] === '\\')) word += text[++i];
      else word += c;
    } else if (c === "'" || c === '"') {
      quote = c;
      inWord = true;
    } else if (c === '\\' && i + 1 < text.length) {
      word += text[++i];
      inWord = true;
    } else if (/\s/.test(c)) {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
    } else {
      word += c;
      inWord = true;
    }
  }
  if (quote !== undefined) throw new WordsError(`unterminated ${quote} quote`);
  if (inWord) words.push(word);
  return words;
}
