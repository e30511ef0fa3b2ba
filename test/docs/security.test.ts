/**
 * docs/security.md states the promise row by row, each row with the tests that check it: every test
 * file it names exists, and every test it names by its title is in that file, so that a renamed or
 * removed test cannot leave a promise unchecked without the page saying so.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');
const PAGE = readFileSync(join(ROOT, 'docs', 'security.md'), 'utf8');

/** The table's rows: the cells of each line that starts with `|`, header and rule left out. */
function rows(): string[][] {
  return PAGE.split('\n')
    .filter((line) => line.startsWith('| ') && !line.startsWith('| Actor') && !line.startsWith('|---'))
    .map((line) => line.split(/ \| /).map((cell) => cell.replace(/^\| |\|$/g, '').trim()));
}

/** The tests a cell names: `test/….ts` alone, or followed by › "title" (several titles after one file). */
function citations(cell: string): Array<{ file: string; title?: string }> {
  const found: Array<{ file: string; title?: string }> = [];
  let file: string | undefined;
  for (const match of cell.matchAll(/`(test\/[^`]+\.ts)`|› "((?:[^"\\]|\\.)*?)"(?=;|$| \|)/g)) {
    if (match[1] !== undefined) {
      file = match[1];
      found.push({ file });
    } else if (file !== undefined) found.push({ file, title: match[2]! });
  }
  return found;
}

describe('docs/security.md', () => {
  it('has a row for each actor, and a test for every promise', () => {
    const table = rows();
    expect(table.map((row) => row[0])).toEqual(expect.arrayContaining(['Pull request author', 'Reviewer', 'The service', 'The network', 'A runner neighbour']));
    for (const row of table) {
      const checkedBy = row[row.length - 1]!;
      expect(citations(checkedBy).length, row[0]).toBeGreaterThan(0);
    }
  });

  it('names test files that exist and test titles that are in them', () => {
    const cited = rows().flatMap((row) => citations(row[row.length - 1]!));
    expect(cited.length).toBeGreaterThan(20);
    for (const { file, title } of cited) {
      expect(existsSync(join(ROOT, file)), file).toBe(true);
      if (title !== undefined) expect(readFileSync(join(ROOT, file), 'utf8'), `${file} › ${title}`).toContain(title);
    }
  });
});
