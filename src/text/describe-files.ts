/**
 * How messages speak of the user's files: a path as one word a POSIX shell reads back as that path
 * (for the commands orgform suggests, `orgform apply PLANFILE`), and the refusal to overwrite
 * files that are there already.
 */

/** What a refusal to write adds: the files are as they were. */
export const NOTHING_WRITTEN = 'Nothing was written.';

/** Characters no shell gives a meaning to in a word. */
const PLAIN = /^[\w@%+=:,./-]+$/;

/** Pasted as shown, `my plan.json` was two words and `-x.json` an option. */
export function shellWord(path: string): string {
  // A word starting with - would be read as an option; ./ keeps it the same file.
  const word = path.startsWith('-') ? `./${path}` : path;
  return PLAIN.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`;
}

/** `orgs.yaml already exists. Nothing was written. Pass --force to overwrite it, or OTHERWISE.` */
export function describeExisting(names: readonly string[], otherwise: string): string {
  const one = names.length === 1;
  return `${names.join(' and ')} already exist${one ? 's' : ''}. ${NOTHING_WRITTEN} Pass --force to overwrite ${one ? 'it' : 'them'}, or ${otherwise}.`;
}
