/**
 * Whether the apply job's commit may still be applied (pipeline/newer-config.mjs): it is the
 * branch's head, or what was merged since left the configuration as it is; otherwise a newer
 * configuration is on the branch and nothing is applied. Against GitHub's and GitLab's APIs faked on
 * 127.0.0.1.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { checkNewest, configPaths, gitRootOf, githubBranch, gitlabBranch, SupersededError } from '../../pipeline/newer-config.mjs';
import { startFakeGithub, startFakeGitlab, type FakeForge } from '../support/fake-forges.js';
import { makeWorkspace } from '../support/workspace.js';

const OLD = '1'.repeat(40);
const NEW = '2'.repeat(40);

let forges: FakeForge[] = [];
afterEach(async () => {
  await Promise.all(forges.map((f) => f.close()));
  forges = [];
});

async function onGithub(branch = 'main') {
  const fake = await startFakeGithub({ repository: 'acme/config', number: 7, token: 'ghs_job' });
  forges.push(fake);
  return { fake, branch: githubBranch({ apiUrl: fake.url, repository: 'acme/config', token: 'ghs_job', branch, sha: OLD }) };
}

async function onGitlab(branch = 'main') {
  const fake = await startFakeGitlab({ projectId: '42', iid: '7', token: 'glpat-api', userId: 9, jobToken: 'job' });
  forges.push(fake);
  return { fake, branch: gitlabBranch({ apiUrl: `${fake.url}/api/v4`, projectId: '42', token: 'glpat-api', branch, sha: OLD }) };
}

describe('configPaths', () => {
  it('takes each -f or --file value, else orgs.yaml, where orgform runs, relative to the repository’s root', () => {
    expect(configPaths(['plan', '--format', 'markdown'], '/repo', '/repo')).toEqual(['orgs.yaml']);
    expect(configPaths(['plan', '-f', 'orgs.yaml', '--file', 'teams/', '--file=b.yaml', '-fc.yaml', '--max-changes', '5'], '/repo/infra', '/repo')).toEqual([
      'infra/orgs.yaml',
      'infra/teams',
      'infra/b.yaml',
      'infra/c.yaml',
    ]);
    // Outside the repository: the whole of it counts.
    expect(configPaths(['-f', '../elsewhere.yaml'], '/repo', '/repo')).toEqual(['']);
  });
});

describe('gitRootOf', () => {
  it('is where .git is above the directory (a checkout into a subdirectory has its own), else the fallback', async () => {
    const workspace = await makeWorkspace({ 'repo/.git/HEAD': 'ref: refs/heads/main\n', 'repo/infra/orgs.yaml': 'version: 1\n', 'plain/orgs.yaml': 'version: 1\n' });
    expect(gitRootOf(join(workspace, 'repo', 'infra'), workspace)).toBe(join(workspace, 'repo'));
    expect(configPaths(['-f', 'orgs.yaml'], join(workspace, 'repo', 'infra'), gitRootOf(join(workspace, 'repo', 'infra'), workspace))).toEqual(['infra/orgs.yaml']);
    expect(gitRootOf(join(workspace, 'plain'), '/fallback')).toBe('/fallback');
  });
});

describe('checkNewest', () => {
  const config = ['infra/orgs.yaml', 'infra/teams'];

  it('lets the branch’s head be applied, asking nothing more', async () => {
    const { fake, branch } = await onGithub();
    fake.heads.set('main', OLD);
    await expect(checkNewest({ sha: OLD, branch: 'main', config, ...branch })).resolves.toBeUndefined();
    expect(fake.requests).toEqual(['GET /repos/acme/config/git/ref/heads/main']);
  });

  it('lets an older commit be applied when what was merged since left its configuration as it is (the paths filter ran no apply for it)', async () => {
    const { fake, branch } = await onGithub();
    fake.heads.set('main', NEW);
    fake.changes.set(`${OLD}...${NEW}`, ['README.md', 'infra/orgs.yaml.bak', 'infra/teamsX/a.yaml']);
    await expect(checkNewest({ sha: OLD, branch: 'main', config, ...branch })).resolves.toBeUndefined();
  });

  it('refuses an older commit when the configuration changed since, a file or one in a directory of it, on GitHub and on GitLab (a branch with a slash too)', async () => {
    const { fake, branch } = await onGithub('release/2026');
    fake.heads.set('release/2026', NEW);
    fake.changes.set(`${OLD}...${NEW}`, ['README.md', 'infra/teams/b.yaml']);
    const refused = checkNewest({ sha: OLD, branch: 'release/2026', config, ...branch });
    await expect(refused).rejects.toBeInstanceOf(SupersededError);
    await expect(refused).rejects.toThrow(
      'this commit, 1111111, is no longer the head of release/2026, which is now 2222222, and the configuration changed since (infra/teams/b.yaml): applying this older configuration would undo what was merged since.',
    );
    const lab = await onGitlab('release/2026');
    lab.fake.heads.set('release/2026', NEW);
    lab.fake.changes.set(`${OLD}...${NEW}`, ['infra/orgs.yaml']);
    await expect(checkNewest({ sha: OLD, branch: 'release/2026', config, ...lab.branch })).rejects.toThrow('and the configuration changed since (infra/orgs.yaml)');
    expect(lab.fake.requests).toEqual(['GET /api/v4/projects/42/repository/branches/release%2F2026', `GET /api/v4/projects/42/repository/compare?from=${OLD}&to=${NEW}`]);
  });

  it('refuses when it cannot tell: a branch not found, changes that cannot be listed', async () => {
    const { fake, branch } = await onGithub();
    await expect(checkNewest({ sha: OLD, branch: 'main', config, ...branch })).rejects.toThrow('GET the head of main: HTTP 404');
    fake.heads.set('main', NEW);
    await expect(checkNewest({ sha: OLD, branch: 'main', config, ...branch })).rejects.toThrow(/GET the changes since 1111111: HTTP 404/);
    // GitHub lists at most 300 files: a list that long may be cut.
    fake.changes.set(`${OLD}...${NEW}`, Array.from({ length: 300 }, (_, i) => `docs/${i}.md`));
    await expect(checkNewest({ sha: OLD, branch: 'main', config, ...branch })).rejects.toThrow('and which files changed since cannot be told');
  });
});
