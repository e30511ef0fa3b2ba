#!/usr/bin/env node
// The release workflow's gate (.github/workflows/release.yml): `node scripts/release-notes.mjs TAG`
// checks that TAG is `v` + package.json's version and prints CHANGELOG.md's section for that version,
// the release's notes. It fails, naming what to fix, when the tag and package.json disagree or the
// changelog has no section for the version (move the Unreleased entries under `## [X.Y.Z] - DATE`).
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * @param {string | undefined} tag
 * @param {string} packageJson  the text of package.json
 * @param {string} changelog    the text of CHANGELOG.md
 * @returns {{ ok: true, notes: string } | { ok: false, error: string }}
 */
export function releaseNotes(tag, packageJson, changelog) {
  const { version } = JSON.parse(packageJson);
  if (tag !== `v${version}`) return { ok: false, error: `the tag ${tag ?? '(none)'} does not match package.json's version ${version}: tag v${version}, or change the version and tag again` };
  const lines = changelog.split('\n');
  const escaped = version.replace(/[.+]/g, '\\$&');
  const start = lines.findIndex((line) => new RegExp(`^## \\[${escaped}\\]`).test(line));
  if (start < 0) return { ok: false, error: `CHANGELOG.md has no section "## [${version}] - YYYY-MM-DD": move the Unreleased entries under it` };
  const end = lines.findIndex((line, i) => i > start && /^## /.test(line));
  const notes = lines.slice(start + 1, end < 0 ? undefined : end).join('\n').trim();
  if (notes === '') return { ok: false, error: `CHANGELOG.md's section for ${version} is empty` };
  return { ok: true, notes: `${notes}\n` };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const root = new URL('..', import.meta.url);
  const result = releaseNotes(process.argv[2], readFileSync(new URL('package.json', root), 'utf8'), readFileSync(new URL('CHANGELOG.md', root), 'utf8'));
  if (result.ok) process.stdout.write(result.notes);
  else {
    console.error(`release: ${result.error}`);
    process.exitCode = 1;
  }
}
