/**
 * The README and docs/ hold together: every relative link names a file or directory that exists,
 * every #anchor names a heading of its page (GitHub's slugs), and the README stays short enough to
 * read (at most 300 lines; the rest lives in docs/).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeWorkspace } from '../support/workspace.js';

const ROOT = join(import.meta.dirname, '..', '..');

/** Each line with fenced code blocks and inline code spans blanked, where links are not read; line numbers kept. */
function proseLines(text: string): string[] {
  let fence: string | undefined;
  return text.split('\n').map((line) => {
    const marker = /^ {0,3}(`{3,}|~{3,})/.exec(line)?.[1];
    if (marker !== undefined && (fence === undefined || marker.startsWith(fence))) {
      fence = fence === undefined ? marker : undefined;
      return '';
    }
    return fence === undefined ? line.replace(/(`+)(?:(?!\1).)+?\1/g, 'CODE') : '';
  });
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens; repeats get -1, -2… */
export function headingAnchors(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fence: string | undefined;
  for (const line of text.split('\n')) {
    const marker = /^ {0,3}(`{3,}|~{3,})/.exec(line)?.[1];
    if (marker !== undefined && (fence === undefined || marker.startsWith(fence))) {
      fence = fence === undefined ? marker : undefined;
      continue;
    }
    const heading = fence === undefined ? /^ {0,3}#{1,6} +(.*?)(?: +#+)? *$/.exec(line)?.[1] : undefined;
    if (heading === undefined) continue;
    const plain = heading
      .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
      .replace(/<[^>]+>/g, '')
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
      .replace(/ /g, '-');
    const count = seen.get(plain) ?? 0;
    seen.set(plain, count + 1);
    anchors.add(count === 0 ? plain : `${plain}-${count}`);
  }
  return anchors;
}

/** Each relative link or #anchor of a markdown file that does not resolve, as `FILE:LINE: target (why)`. */
export function brokenLinks(file: string, root: string): string[] {
  const broken: string[] = [];
  const text = readFileSync(file, 'utf8');
  const name = relative(root, file);
  proseLines(text).forEach((line, i) => {
    for (const m of line.matchAll(/\]\(([^)\s]+)(?: "[^"]*")?\)/g)) {
      const target = m[1]!;
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto: …
      const [path, anchor] = target.split('#') as [string, string | undefined];
      const resolved = path === '' ? file : join(dirname(file), decodeURIComponent(path));
      if (!existsSync(resolved)) {
        broken.push(`${name}:${i + 1}: ${target} (no such file)`);
        continue;
      }
      if (anchor !== undefined && resolved.endsWith('.md') && !headingAnchors(readFileSync(resolved, 'utf8')).has(decodeURIComponent(anchor))) {
        broken.push(`${name}:${i + 1}: ${target} (no heading with that anchor)`);
      }
    }
  });
  return broken;
}

const DOCS = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((n) => n.endsWith('.md')).map((n) => `docs/${n}`)];

describe('the README and docs/', () => {
  it('README.md is at most 300 lines', () => {
    expect(readFileSync(join(ROOT, 'README.md'), 'utf8').trimEnd().split('\n').length).toBeLessThanOrEqual(300);
  });

  it.each(DOCS)('every relative link and anchor in %s resolves', (file) => {
    expect(brokenLinks(join(ROOT, file), ROOT)).toEqual([]);
  });

  it('the README has an Exit codes heading that the docs can link to', () => {
    expect(headingAnchors(readFileSync(join(ROOT, 'README.md'), 'utf8'))).toContain('exit-codes');
  });
});

describe('brokenLinks', () => {
  it('reports a missing file, a missing anchor on another page and on its own, and nothing inside code', async () => {
    const dir = await makeWorkspace({
      'README.md': [
        '# Title',
        'See [the docs](docs/a.md#usage), [gone](docs/gone.md), [bad](docs/a.md#nope) and [self](#title) or [lost](#lost).',
        '`[not a link](nowhere.md)`',
        '```',
        '[also not](nowhere.md)',
        '```',
        '[web](https://example.com/x.md#y) [dir](docs)',
        '[after the code](docs/missing.md)',
      ].join('\n'),
      'docs/a.md': '# Usage\n',
    });
    expect(brokenLinks(join(dir, 'README.md'), dir)).toEqual([
      'README.md:2: docs/gone.md (no such file)',
      'README.md:2: docs/a.md#nope (no heading with that anchor)',
      'README.md:2: #lost (no heading with that anchor)',
      'README.md:8: docs/missing.md (no such file)',
    ]);
  });

  it('slugs headings as GitHub does: code and punctuation kept as text, dots and colons dropped, repeats numbered', () => {
    expect([...headingAnchors('# `orgform plan`\n## Bringing your own orgs.yaml in line: `export -f FILE --diff`\n## Notes\n## Notes\n## The project\'s decisions\n')]).toEqual([
      'orgform-plan',
      'bringing-your-own-orgsyaml-in-line-export--f-file---diff',
      'notes',
      'notes-1',
      'the-projects-decisions',
    ]);
  });
});
