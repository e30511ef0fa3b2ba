/**
 * A path as one word a POSIX shell reads back as that path, for the commands orgform suggests
 * (`orgform apply PLANFILE`): pasted as shown, `my plan.json` was two words and `-x.json` an option.
 */

/** Characters no shell gives a meaning to in a word. */
const PLAIN = /^[\w@%+=:,./-]+$/;

export function shellWord(path: string): string {
  // A word starting with - would be read as an option; ./ keeps it the same file.
  const word = path.startsWith('-') ? `./${path}` : path;
  return PLAIN.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`;
}
