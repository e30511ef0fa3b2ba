import { mkdir, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { jobCheckout } from '../src/ci/ci-settings.js';
import { readCiSettings } from '../src/cli/output-settings.js';
import { describeEscape, findWorkTree, followLinks, openInTree } from '../src/work-tree.js';
import { makeWorkspace } from './support/workspace.js';

/** The work tree of `cwd` in the CI job the variables of `env` describe (the checkout as cli/ reads it). */
const findWorkTreeInJob = (cwd: string, env: Record<string, string | undefined>) => findWorkTree(cwd, jobCheckout(readCiSettings(env)));

/** A repository (`repo/.git`) with a file in it, and a secret beside it, outside. */
async function repository() {
  const base = await makeWorkspace({ 'repo/.git/config': '[http]\n\textraheader = AUTHORIZATION: basic c2VjcmV0\n', 'repo/conf/orgs.yaml': 'version: 1\n', 'secret.txt': 'canary\n' });
  const root = join(base, 'repo');
  return { base, root, tree: await findWorkTree(join(root, 'conf')) };
}

describe('findWorkTree', () => {
  it('walks up to the directory that holds .git, a directory or a file (a worktree, a submodule)', async () => {
    const { root, tree } = await repository();
    expect(tree.root).toBe(root);
    const worktree = await makeWorkspace({ 'wt/.git': 'gitdir: /elsewhere\n', 'wt/a/b/.keep': '' });
    expect((await findWorkTree(join(worktree, 'wt', 'a', 'b'))).root).toBe(join(worktree, 'wt'));
  });

  it("is the job's checkout in CI when the working directory lies outside it (a link), and the enclosing tree inside it", async () => {
    const { base, root } = await repository();
    await mkdir(join(base, 'runner'));
    await symlink(join(base, 'runner'), join(root, 'infra'));
    for (const env of [{ GITHUB_ACTIONS: 'true', GITHUB_WORKSPACE: root }, { GITLAB_CI: 'true', CI_PROJECT_DIR: root }]) {
      expect((await findWorkTreeInJob(join(base, 'runner'), env)).root).toBe(root);
      expect((await findWorkTreeInJob(join(root, 'conf'), env)).root).toBe(root);
    }
    // Outside CI (or naming no checkout), the working directory as ever.
    expect((await findWorkTreeInJob(join(base, 'runner'), { GITHUB_WORKSPACE: root })).root).toBe(join(base, 'runner'));
  });

  it('is the working directory where no .git is above it', async () => {
    const cwd = await makeWorkspace({ 'a/.keep': '' });
    expect(await findWorkTree(join(cwd, 'a'))).toEqual({ root: join(cwd, 'a'), real: join(cwd, 'a') });
  });
});

describe('describeEscape', () => {
  it('lets a file of the tree, and a link that stays in it, be read', async () => {
    const { root, tree } = await repository();
    await symlink('conf/orgs.yaml', join(root, 'orgs.yaml'));
    expect(await describeEscape(tree, join(root, 'conf', 'orgs.yaml'), 'inside', 'conf/orgs.yaml')).toBeUndefined();
    expect(await describeEscape(tree, join(root, 'orgs.yaml'), 'inside', 'orgs.yaml')).toBeUndefined();
  });

  it('names a link out of the tree and what it holds, never what is behind it', async () => {
    const { base, root, tree } = await repository();
    await symlink('../secret.txt', join(root, 'orgs.yaml'));
    const reason = await describeEscape(tree, join(root, 'orgs.yaml'), 'inside', 'orgs.yaml');
    expect(reason).toBe(`orgs.yaml is a symbolic link to "../secret.txt", which leads outside the repository's working tree (${root})`);
    expect(reason).not.toContain('canary');
    // Named directly, with no link: outside all the same.
    expect(await describeEscape(tree, join(base, 'secret.txt'), 'inside', '../secret.txt')).toBe(`../secret.txt is outside the repository's working tree (${root})`);
  });

  it('refuses .git, named or linked to, even though it lies in the tree', async () => {
    const { root, tree } = await repository();
    await symlink('.git/config', join(root, 'orgs.yaml'));
    expect(await describeEscape(tree, join(root, 'orgs.yaml'), 'inside', 'orgs.yaml')).toBe('orgs.yaml is a symbolic link to ".git/config", which leads into the repository\'s .git directory');
    expect(await describeEscape(tree, join(root, '.git', 'config'), 'inside', '.git/config')).toBe(".git/config is in the repository's .git directory");
    expect(await describeEscape(tree, join(root, '.GIT', 'config'), 'stay', '.GIT/config')).toBe(".GIT/config is in the repository's .git directory");
  });

  it('names a linked directory on the way, and a dangling link by where it would lead', async () => {
    const { base, root, tree } = await repository();
    await mkdir(join(base, 'elsewhere'));
    await symlink(join(base, 'elsewhere'), join(root, 'plans'));
    expect(await describeEscape(tree, join(root, 'plans', 'plan.json'), 'stay', 'plans/plan.json')).toBe(
      `plans (on the way to plans/plan.json) is a symbolic link to "${join(base, 'elsewhere')}", which leads outside the repository's working tree (${root})`,
    );
    // A write through a dangling link would create the file it names, outside.
    await symlink('../made-by-the-write.json', join(root, 'report.json'));
    expect(await followLinks(join(root, 'report.json'))).toBe(join(base, 'made-by-the-write.json'));
    expect(await describeEscape(tree, join(root, 'report.json'), 'stay', 'report.json')).toMatch(/^report\.json is a symbolic link to "\.\.\/made-by-the-write\.json", which leads outside/);
  });

  it('under "stay", lets a path named outside the tree be used as named (the pipeline chose it)', async () => {
    const { base, tree } = await repository();
    expect(await describeEscape(tree, join(base, 'runner-temp', 'plan.json'), 'stay', 'plan.json')).toBeUndefined();
    expect(await describeEscape(tree, join(base, 'runner-temp', 'plan.json'), 'inside', 'plan.json')).toMatch(/is outside the repository's working tree/);
  });
});

describe('openInTree', () => {
  it('opens what stays in the tree and refuses, unopened, what does not', async () => {
    const { root, tree } = await repository();
    const opened = await openInTree(tree, join(root, 'conf', 'orgs.yaml'), 'inside', 'conf/orgs.yaml');
    expect(opened.ok).toBe(true);
    if (opened.ok) {
      expect(await opened.handle.readFile('utf8')).toBe('version: 1\n');
      await opened.handle.close();
    }
    await symlink('.git/config', join(root, 'linked.yaml'));
    expect(await openInTree(tree, join(root, 'linked.yaml'), 'inside', 'linked.yaml')).toEqual({ ok: false, reason: expect.stringContaining('.git directory') });
  });
});
