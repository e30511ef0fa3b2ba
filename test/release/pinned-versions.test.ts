/**
 * Every place that pins a release names this one (package.json's version): the docs, the examples,
 * the Action's and the component's defaults. The release workflow runs the tests, so a release
 * cannot go out with docs that pin the previous one: bump them with the version.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
/** Each of these pins a release; the docs may. */
const PINNED = ['examples/github-actions/orgform.yml', 'examples/gitlab-ci.yml', 'templates/orgform.yml'];
const DOCS = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((n) => n.endsWith('.md')).map((n) => `docs/${n}`)];
const FILES = [...DOCS, ...PINNED];

/** `orgform@X.Y.Z`, `orgform/orgform@vX.Y.Z`, `…/vX.Y.Z/…`, `orgform-X.Y.Z.tgz`, and the component's `default: 'X.Y.Z'`. */
const PINS = /orgform@v?(\d+\.\d+\.\d+)|\/v(\d+\.\d+\.\d+)\/|orgform-(\d+\.\d+\.\d+)\.tgz|default: '(\d+\.\d+\.\d+)'/g;

describe('pinned versions', () => {
  it('every pin in the docs, the examples and the component names package.json’s version', () => {
    const pins = FILES.flatMap((file) => [...readFileSync(join(ROOT, file), 'utf8').matchAll(PINS)].map((m) => `${file}: ${m.slice(1).find(Boolean)}`));
    for (const file of [...PINNED, 'README.md']) expect(pins.some((pin) => pin.startsWith(`${file}:`))).toBe(true);
    expect(pins.filter((pin) => !pin.endsWith(`: ${VERSION}`))).toEqual([]);
  });
});
