import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatPatch, structuredPatch } from 'diff';
import fc from 'fast-check';
import { applyEdits, createFilePatch } from '../../src/config-writer/create-file-patch.js';

let repo: string;
beforeAll(async () => {
  repo = await mkdtemp(join(tmpdir(), 'orgform-patch-'));
  execFileSync('git', ['init', '--quiet'], { cwd: repo });
});
afterAll(async () => rm(repo, { recursive: true, force: true }));

/** Writes `before` at `path` in a git repository, applies the patch with git, and gives back the file. */
async function gitApply(path: string, before: string, patch: string): Promise<string> {
  await mkdir(dirname(join(repo, path)), { recursive: true });
  await writeFile(join(repo, path), before);
  execFileSync('git', ['apply', '--check'], { cwd: repo, input: patch, stdio: ['pipe', 'pipe', 'pipe'] });
  execFileSync('git', ['apply'], { cwd: repo, input: patch, stdio: ['pipe', 'pipe', 'pipe'] });
  return readFile(join(repo, path), 'utf8');
}

const BEFORE = ['# comment', 'version: 1', 'organisations:', '  acme:', '    billing:', '      customerID: cus_1', '      platformID: p', '  beta: {}', '  gamma: {}', ''].join('\n');

describe('createFilePatch', () => {
  it('writes a patch as git diff does, with three lines of context', () => {
    const after = BEFORE.replace('cus_1', 'cus_2');
    expect(createFilePatch('orgs.yaml', BEFORE, after)).toBe(
      [
        'diff --git a/orgs.yaml b/orgs.yaml',
        '--- a/orgs.yaml',
        '+++ b/orgs.yaml',
        '@@ -3,7 +3,7 @@',
        ' organisations:',
        '   acme:',
        '     billing:',
        '-      customerID: cus_1',
        '+      customerID: cus_2',
        '       platformID: p',
        '   beta: {}',
        '   gamma: {}',
        '',
      ].join('\n'),
    );
  });

  it('writes nothing at all when nothing changed', () => {
    expect(createFilePatch('orgs.yaml', BEFORE, BEFORE)).toBe('');
  });

  it.each([
    ['a file in a directory', 'config/orgs.yaml', BEFORE],
    ['a name with a space', 'my orgs.yaml', BEFORE],
    ['a name git quotes', 'örgs "eu".yaml', BEFORE],
    ['CRLF line ends', 'crlf.yaml', BEFORE.replaceAll('\n', '\r\n')],
    ['no line break after a changed last line', 'no-eol.yaml', BEFORE.slice(0, -1)],
  ])('gives a patch that git apply accepts: %s', async (_, path, before) => {
    const after = before.replace('cus_1', 'cus_2').replace('gamma', 'epsilon');
    expect(await gitApply(path, before, createFilePatch(path, before, after))).toBe(after);
  });
});

describe('createFilePatch from the edits made', () => {
  /** Lines of a file, each unlike any other, as an orgs.yaml's keys make them. */
  const fileOf = (n: number) => Array.from({ length: n }, (_, i) => `  key${i}: value${i}  # note ${i}`).join('\n') + '\n';

  it('gives the very patch a diff of the two texts gives, for values changed in place', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 60 }), fc.uniqueArray(fc.nat(59), { maxLength: 12 }), (n, picked) => {
        const before = fileOf(n);
        const edits = picked
          .filter((i) => i < n)
          .sort((a, b) => a - b)
          .map((i) => {
            const start = before.indexOf(`value${i} `);
            return { start, end: start + `value${i}`.length, text: `renewed${i}` };
          });
        const after = applyEdits(before, edits);
        const diffed = before === after ? '' : formatPatch({ ...structuredPatch('a/orgs.yaml', 'b/orgs.yaml', before, after, undefined, undefined, { context: 3 }), isGit: true });
        expect(createFilePatch('orgs.yaml', before, edits)).toBe(diffed);
        expect(createFilePatch('orgs.yaml', before, after)).toBe(diffed);
      }),
      { numRuns: 200 },
    );
  });

  it('shows a value that changed its number of lines as the lines it replaced, and git apply gives the text edited', async () => {
    const before = ['version: 1', 'organisations:', '  acme:', '    billing:', '      customerID: |', '        line 1', '        line 2', ...Array.from({ length: 12 }, (_, i) => `  org${i}: {}`), '  beta:', '    billing:', '      customerID: cus_1', ''].join('\n');
    const block = before.indexOf('|');
    const edits = [
      { start: block, end: before.indexOf('  org0'), text: '"one line"\n' },
      { start: before.indexOf('cus_1'), end: before.indexOf('cus_1') + 5, text: 'cus_2' },
    ];
    const patch = createFilePatch('orgs.yaml', before, edits);
    expect(patch.split('\n').filter((line) => /^[-+@]/.test(line))).toEqual([
      '--- a/orgs.yaml',
      '+++ b/orgs.yaml',
      '@@ -2,9 +2,7 @@',
      '-      customerID: |',
      '-        line 1',
      '-        line 2',
      '+      customerID: "one line"',
      '@@ -19,4 +17,4 @@',
      '-      customerID: cus_1',
      '+      customerID: cus_2',
    ]);
    expect(await gitApply('edited.yaml', before, patch.replaceAll('orgs.yaml', 'edited.yaml'))).toBe(applyEdits(before, edits));
  });
});
