import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFilePatch } from '../../src/config-writer/create-file-patch.js';

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
