/**
 * The release workflow (.github/workflows/release.yml) and its gate (scripts/release-notes.mjs):
 * what triggers it, who may do what, and its publishing steps run through bash with `npm` and `gh`
 * played by stand-ins that record their arguments. action-validator checks the file's schema
 * (test/examples/validators.test.ts).
 */
import { chmod, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { releaseNotes } from '../../scripts/release-notes.mjs';
import { pinRelease } from '../../scripts/pin-release.mjs';
import { runProcess } from '../support/run-process.js';
import { checkoutProblems, pinningProblems } from '../support/workflow-checks.js';
import { makeWorkspace } from '../support/workspace.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const WORKFLOW = join(ROOT, '.github', 'workflows', 'release.yml');
const PACKAGE = '{ "name": "orgform", "version": "1.2.0" }';
const CHANGELOG = '# Changelog\n\n## [Unreleased]\n\n## [1.2.0] - 2026-12-01\n\n### Added\n\n- Things.\n\n## [1.1.0] - 2026-11-01\n\n- Old.\n';

describe('scripts/release-notes.mjs', () => {
  it('prints the changelog section of the version that the tag names', () => {
    expect(releaseNotes('v1.2.0', PACKAGE, CHANGELOG)).toEqual({ ok: true, notes: '### Added\n\n- Things.\n' });
  });

  it('refuses a tag that does not match package.json, saying what to do', () => {
    expect(releaseNotes('v1.2.1', PACKAGE, CHANGELOG)).toEqual({ ok: false, error: expect.stringContaining("the tag v1.2.1 does not match package.json's version 1.2.0") });
    expect(releaseNotes('1.2.0', PACKAGE, CHANGELOG)).toMatchObject({ ok: false });
  });

  it('refuses a version the changelog has no section for, or an empty one', () => {
    expect(releaseNotes('v1.3.0', '{ "version": "1.3.0" }', CHANGELOG)).toEqual({ ok: false, error: expect.stringContaining('no section "## [1.3.0] - YYYY-MM-DD"') });
    expect(releaseNotes('v1.2.0', PACKAGE, '## [1.2.0] - 2026-12-01\n\n## [1.1.0]\n- x\n')).toEqual({ ok: false, error: "CHANGELOG.md's section for 1.2.0 is empty" });
  });

  it('tells 1.2.0 from 1.2.0-rc.1 and 10.2.0', () => {
    const log = '## [1.2.0-rc.1]\n\n- rc\n\n## [10.2.0]\n\n- ten\n\n## [1.2.0]\n\n- one\n';
    expect(releaseNotes('v1.2.0', PACKAGE, log)).toEqual({ ok: true, notes: '- one\n' });
  });
});

async function readWorkflow(): Promise<Json> {
  return parse(await readFile(WORKFLOW, 'utf8')) as Json;
}

describe('.github/workflows/release.yml', () => {
  it('runs on a v* tag: checks the tag, tests as CI does, pins the shipped examples to the commit, packs once (the bundle) and tries it unpacked', async () => {
    const workflow = await readWorkflow();
    expect(workflow.on).toEqual({ push: { tags: ['v*'] } });
    expect(workflow.permissions).toEqual({});
    const runs = (workflow.jobs.build.steps as Json[]).map((s) => s.run).filter(Boolean);
    expect(runs[0]).toBe('node scripts/release-notes.mjs "$GITHUB_REF_NAME" > release-notes.md');
    expect(runs[1]).toBe('.ci/run');
    expect(runs[2]).toBe('node scripts/pin-release.mjs "$GITHUB_SHA"');
    expect(runs[3]).toContain('npm pack --json');
    expect(runs[3]).toContain('sha256sum "$file" > SHA256SUMS');
    expect(runs[4]).toContain('node "$try/package/bin/orgform.js" --version');
    expect(JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')).scripts.prepack).toBe('npm run build && node scripts/bundle.mjs');
  });

  it('pins every action by commit, the tag as the comment', async () => {
    expect(pinningProblems(await readFile(WORKFLOW, 'utf8'))).toEqual([]);
    expect(checkoutProblems(await readWorkflow())).toEqual([]);
  });

  it('keeps the rights to publish away from the tests: build reads only, publish runs no checkout and no npm ci', async () => {
    const { jobs } = await readWorkflow();
    expect(jobs.build.permissions).toEqual({ contents: 'read' });
    expect(jobs.build.steps[0]).toEqual({ uses: 'actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683', with: { 'persist-credentials': false } });
    expect(jobs.publish.needs).toBe('build');
    expect(jobs.publish.permissions).toEqual({ contents: 'write', 'id-token': 'write' });
    const publishing = JSON.stringify(jobs.publish.steps);
    expect(publishing).not.toContain('actions/checkout');
    expect(publishing).not.toMatch(/npm (ci|install)/);
  });

  describe('its publishing steps, through bash', () => {
    async function publish(published: string, version = '1.2.0'): Promise<{ code: number; stdout: string; calls: string[] }> {
      const { jobs } = await readWorkflow();
      const cwd = await makeWorkspace({
        [`orgform-${version}.tgz`]: 'tarball',
        'pack.json': JSON.stringify([{ filename: `orgform-${version}.tgz`, version, integrity: 'sha512-ours' }]),
        'release-notes.md': '- Things.\n',
      });
      const log = join(cwd, 'calls.log');
      for (const [tool, script] of [
        ['npm', `echo "npm $*" >> ${log}; if [ "$1" = view ]; then printf '%s' '${published}'; fi`],
        ['gh', `echo "gh $*" >> ${log}; if [ "$2" = view ]; then exit 1; fi`],
      ] as const) {
        await writeFile(join(cwd, tool), `#!/bin/sh\n${script}\n`);
        await chmod(join(cwd, tool), 0o755);
      }
      const steps = (jobs.publish.steps as Json[]).filter((s) => typeof s.run === 'string');
      const script = `sha256sum orgform-${version}.tgz > SHA256SUMS\n${steps.map((s) => s.run).join('\n')}`;
      const env = { PATH: `${cwd}:${process.env.PATH ?? ''}`, GITHUB_REF_NAME: `v${version}`, NODE_AUTH_TOKEN: 'npm_x', GH_TOKEN: 'ghs_x', GH_REPO: 'orgform/orgform' };
      const ran = await runProcess('bash', ['--noprofile', '--norc', '-eo', 'pipefail', '-c', script], cwd, env);
      const result = { code: ran.code, stdout: ran.stdout + ran.stderr };
      const calls = await readFile(log, 'utf8').catch(() => '');
      return { ...result, calls: calls.trim().split('\n').filter(Boolean) };
    }

    it('publishes the tarball with provenance, then makes the release with the tarball and SHA256SUMS', async () => {
      const result = await publish('');
      expect(result.code).toBe(0);
      expect(result.calls).toEqual([
        'npm view orgform@1.2.0 dist.integrity',
        'npm publish ./orgform-1.2.0.tgz --provenance --access public --tag latest',
        'gh release view v1.2.0',
        'gh release create v1.2.0 orgform-1.2.0.tgz SHA256SUMS --verify-tag --title orgform 1.2.0 --notes-file release-notes.md',
      ]);
    });

    it('sends a pre-release to npm’s next tag and marks the release a pre-release', async () => {
      const result = await publish('', '1.3.0-rc.1');
      expect(result.calls).toContain('npm publish ./orgform-1.3.0-rc.1.tgz --provenance --access public --tag next');
      expect(result.calls.at(-1)).toContain('--verify-tag --prerelease');
    });

    it('run again after npm took the same tarball, goes on to the release; a different tarball already there is an error', async () => {
      const again = await publish('sha512-ours');
      expect(again.code).toBe(0);
      expect(again.calls.filter((c) => c.startsWith('npm publish'))).toEqual([]);
      expect(again.calls.at(-1)).toMatch(/^gh release create v1\.2\.0/);

      const other = await publish('sha512-theirs');
      expect(other.code).toBe(1);
      expect(other.stdout).toContain('::error::orgform@1.2.0 is already on npm, from another tarball (sha512-theirs).');
      expect(other.calls.filter((c) => c.startsWith('npm publish') || c.startsWith('gh'))).toEqual([]);
    });
  });
});

describe('scripts/pin-release.mjs', () => {
  const SHA = '0123456789abcdef0123456789abcdef01234567';
  it('pins this release’s tag in the GitHub examples and the GitLab include to the commit, the tag as the comment, so that they pass the pinning check', async () => {
    const workflow = await readFile(join(ROOT, 'examples', 'github-actions', 'orgform.yml'), 'utf8');
    const pinned = pinRelease(workflow, '0.1.0', SHA);
    expect(pinned).toContain(`uses: orgform/orgform@${SHA} # v0.1.0`);
    expect(pinningProblems(pinned)).toEqual([]);
    const gitlab = pinRelease(await readFile(join(ROOT, 'examples', 'gitlab-ci.yml'), 'utf8'), '0.1.0', SHA);
    expect(gitlab).toContain(`- remote: https://raw.githubusercontent.com/orgform/orgform/${SHA}/templates/orgform.yml # v0.1.0`);
  });

  it('leaves other versions alone, and refuses what is not a commit SHA', () => {
    expect(pinRelease('- uses: orgform/orgform@v0.0.9\n', '0.1.0', SHA)).toBe('- uses: orgform/orgform@v0.0.9\n');
    expect(() => pinRelease('', '0.1.0', 'main')).toThrow('not a commit SHA: main');
  });
});
