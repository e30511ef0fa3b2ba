import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatProblem, loadConfig } from '../../src/config/load-config.js';

const CORPUS = join(import.meta.dirname, 'corpus');
const BAD = join(CORPUS, 'bad');
const GOOD = join(CORPUS, 'good');

/** The environment every corpus file is loaded with; the other ORGFORM_VAR_TEST_ variables are unset on purpose. */
export const CORPUS_ENV = { ORGFORM_VAR_TEST_EMAIL_USER: 'billing', ORGFORM_VAR_TEST_SLUG: 'acme' };

// A case is a .yaml file or a directory of them, beside NAME.expected.
const badCases = readdirSync(BAD)
  .filter((name) => name.endsWith('.yaml') || statSync(join(BAD, name)).isDirectory())
  .sort();
const goodCases = readdirSync(GOOD)
  .filter((name) => name.endsWith('.yaml'))
  .sort();

function expectedLines(name: string): string[] {
  const text = readFileSync(join(BAD, `${name.replace(/\.yaml$/, '')}.expected`), 'utf8');
  return text.split('\n').filter((line) => line !== '');
}

describe('the corpus of bad files', () => {
  it('has an .expected file for every case, and cases for every .expected file', () => {
    const expected = readdirSync(BAD).filter((name) => name.endsWith('.expected'));
    expect(expected.map((name) => name.replace(/\.expected$/, '')).sort()).toEqual(badCases.map((name) => name.replace(/\.yaml$/, '')).sort());
    expect(badCases.length).toBeGreaterThan(20);
  });

  it.each(badCases)('%s gives exactly its expected problems, in order', async (name) => {
    const result = await loadConfig([name], { cwd: BAD, variables: CORPUS_ENV });
    expect(result.ok).toBe(false);
    const lines = result.ok ? [] : result.problems.map(formatProblem);
    expect(lines).toEqual(expectedLines(name));
  });
});

describe('the corpus of good files', () => {
  it.each(goodCases)('%s loads to the desired state in its .json', async (name) => {
    const result = await loadConfig([name], { cwd: GOOD, variables: CORPUS_ENV });
    if (!result.ok) throw new Error(result.problems.map(formatProblem).join('\n'));
    const { files, ...state } = result.state;
    expect(state).toEqual(JSON.parse(readFileSync(join(GOOD, name.replace(/\.yaml$/, '.json')), 'utf8')));
    expect(files).toEqual([{ path: name, sha256: createHash('sha256').update(readFileSync(join(GOOD, name))).digest('hex') }]);
  });
});
