/**
 * Slugs from a text with one per line (`orgform slugs check -`): surrounding white space trimmed,
 * blank lines and `#` comment lines skipped.
 */
export function parseSlugLines(text: string): string[] {
  return text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
}
