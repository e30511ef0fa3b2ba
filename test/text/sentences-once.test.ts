/**
 * Every sentence the user sees is written once in src/: a message said in two places is one
 * constant or one function that both use, so that a fix of its words reaches every place it is
 * shown. Sentences are read with TypeScript's own parser from the text of string and template
 * literals (the fixed parts; each `${…}` read as `…`), split after `.`, `!`, `?`, `:` or `;`
 * before a capital, a quote or a bracket, white space folded; one of at least 4 words (or of 3
 * that ends in a full stop) counts. Imports, exports and literal types are not text.
 *
 * WRITTEN_TWICE holds what may repeat for good: the emulator's answers (a service plays its
 * answers where they happen) and the examples of `--help` (a command's and its group's help show
 * the same example). OWNED_ELSEWHERE is a ratchet, as LONG_FUNCTIONS is: the sentences that were
 * repeated when this test came in, outside the views and text/, each with how often it was
 * written; a count may fall, never rise, and an entry goes once its sentence is written once.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { sourceFiles } from '../support/source-files.js';

const SRC = fileURLToPath(new URL('../../src', import.meta.url));

const WRITTEN_TWICE: Readonly<Record<string, string>> = {
  'orgform state pull > state.json': 'a --help example',
  "orgform state migrate --to 'postgres://ci@db/ops?state=prod'": 'a --help example',
  'orgform slugs check new-team other-team': 'a --help example',
  'every slug is available': "a --help example's exit status",
  'a slug is unavailable or invalid, or could not be checked': "a --help example's exit status",
  // cli/program.ts checks the form before it loads the emulator, in the emulator's words.
  '--rate-limit takes RPS or RPS:BURST, whole numbers of at least 1 (got "…")': 'the emulator',
  '--quota takes REQUESTS:SECONDS, whole numbers of at least 1, such as 5000:86400 (got "…")': 'the emulator',
  'status must be a status code from 200 to 599': 'the emulator',
  'The body must be empty or a JSON object such as {"user":': 'the emulator',
  'The emulator has no users': 'the emulator',
  'The request body is over 64 KiB': 'the emulator',
  'A valid bearer token is required': 'the emulator',
};

/** Sentence → how many times it was written when this test came in. Emptied by their owners. */
const OWNED_ELSEWHERE: Readonly<Record<string, number>> = {
  // state/ (issue 36): its refusals end as text/plan/plan-headline.ts's NOTHING_CHANGED does, below the layer that holds it.
  'Nothing was changed': 2,
  'is not a JSON object': 2,
  'Cannot remove the state lock': 2,
  '(check the user and the password: in the URL, PGPASSWORD or ~/.pgpass)': 2,
  // api/ and the transport (issue 32 P3).
  'Nothing was read from it': 2,
  // executor/ and plan/read/ (issue 32 P2).
  'Nothing was written; run orgform apply again': 3,
  // config/ and the token command (issue 32 P5).
  'unknown key "…"; did you mean "…"?': 2,
};

/** Where each sentence is written, as `file:line` relative to src/. */
export function findSentences(file: string, text: string, places = new Map<string, string[]>()): Map<string, string[]> {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const add = (literal: string, node: ts.Node) => {
    const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
    for (const raw of literal.split(/(?<=[.!?:;])\s+(?=[A-Z"(])/)) {
      const sentence = raw.replace(/\s+/g, ' ').trim();
      const words = sentence.split(' ').filter((w) => /[a-z]/i.test(w)).length;
      if (words < 4 && !(words >= 3 && sentence.endsWith('.'))) continue;
      if (/^[\w./-]+$/.test(sentence) || /^(import|export) /.test(sentence)) continue;
      const key = sentence.replace(/[.\n]+$/, '');
      places.set(key, [...(places.get(key) ?? []), `${file}:${line}`]);
    }
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node) || ts.isLiteralTypeNode(node)) return;
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) add(node.text, node);
    else if (ts.isTemplateExpression(node)) add(node.head.text + node.templateSpans.map((s) => `…${s.literal.text}`).join(''), node);
    else ts.forEachChild(node, visit);
  };
  visit(source);
  return places;
}

/** What breaks the rule: a sentence written twice and not allowed, a listed one written more often, an entry no longer needed. */
export function repetitionProblems(places: ReadonlyMap<string, readonly string[]>, allowed: Readonly<Record<string, string>>, ratchet: Readonly<Record<string, number>>): string[] {
  const problems: string[] = [];
  for (const [sentence, where] of places) {
    if (where.length < 2 || allowed[sentence] !== undefined) continue;
    const was = ratchet[sentence];
    if (was === undefined) problems.push(`${JSON.stringify(sentence)} is written ${where.length} times (${where.join(', ')}): write it once and use it`);
    else if (where.length > was) problems.push(`${JSON.stringify(sentence)} is written ${where.length} times (${where.join(', ')}), more than the ${was} it was`);
  }
  for (const [sentence, was] of Object.entries(ratchet)) {
    const now = places.get(sentence)?.length ?? 0;
    if (now < 2) problems.push(`${JSON.stringify(sentence)} is written once now (or not at all): remove it from OWNED_ELSEWHERE`);
    else if (now < was) problems.push(`${JSON.stringify(sentence)} is written ${now} times now: lower its count in OWNED_ELSEWHERE from ${was}`);
  }
  return problems;
}

describe('the sentences of src/', () => {
  const places = new Map<string, string[]>();
  for (const file of sourceFiles(SRC)) findSentences(file, readFileSync(join(SRC, file), 'utf8'), places);

  it('are read from every module (a check over no text would pass whatever the code)', () => {
    expect(places.size).toBeGreaterThan(800);
    expect(places.get('Your organisations match the configuration')).toEqual(['text/plan/plan-headline.ts:11']);
  });

  it('are each written once, but for the emulator’s answers, the help’s examples and the listed ones, which only fall', () => {
    expect(repetitionProblems(places, WRITTEN_TWICE, OWNED_ELSEWHERE)).toEqual([]);
  });
});

describe('the sentence rule', () => {
  it('reads the fixed text of literals, a substitution as …, and splits it into sentences', () => {
    const text = "const a = 'Plan: 2 to change, 1 to remove. Nothing was changed.';\nconst b = `${n} organisations could not be read. Run plan again.`;\nimport x from 'a long module name here';";
    expect(Object.fromEntries(findSentences('a.ts', text))).toEqual({
      'Plan: 2 to change, 1 to remove': ['a.ts:1'],
      'Nothing was changed': ['a.ts:1'],
      '… organisations could not be read': ['a.ts:2'],
      'Run plan again': ['a.ts:2'],
    });
  });

  it('refuses a sentence written twice, a listed one written more often, and an entry no longer needed', () => {
    const places = findSentences('a.ts', "x('Nothing was changed here.'); y('Nothing was changed here.'); z('Once is enough here.'); w('Twice is allowed here.', 'Twice is allowed here.');");
    findSentences('b.ts', "x('Listed and grown here.'); x('Listed and grown here.'); x('Listed and grown here.');", places);
    expect(repetitionProblems(places, { 'Twice is allowed here': 'an example' }, { 'Listed and grown here': 2, 'Once is enough here': 2 })).toEqual([
      '"Nothing was changed here" is written 2 times (a.ts:1, a.ts:1): write it once and use it',
      '"Listed and grown here" is written 3 times (b.ts:1, b.ts:1, b.ts:1), more than the 2 it was',
      '"Once is enough here" is written once now (or not at all): remove it from OWNED_ELSEWHERE',
    ]);
  });
});
