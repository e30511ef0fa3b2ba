/**
 * `orgform init` in a fresh directory, then the commands a new user runs next.
 */
import { existsSync } from 'node:fs';
import { mkdir, readFile, readlink, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { setupEmulatorWorkspace } from '../support/emulator-workspace.js';
import { runCli } from '../support/run-cli.js';
import { checkoutProblems, pinningProblems, splitCredentialProblems } from '../support/workflow-checks.js';
import { makeWorkspace } from '../support/workspace.js';
import { parse } from 'yaml';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const read = (cwd: string, name: string) => readFile(join(cwd, name), 'utf8');
const VERSION = (JSON.parse(await read(ROOT, 'package.json')) as { version: string }).version;

describe('orgform init', () => {
  it('sets up an empty directory that validate accepts at once, with the GitHub workflow and the steps left', async () => {
    const cwd = await makeWorkspace();
    const init = await runCli(['init'], { cwd, env: {} });
    expect(init.stderr).toBe('');
    expect(init.code).toBe(0);
    expect(init.stdout).toContain('orgs.yaml (a starter: no service or token set to export from)');
    expect(init.stdout).toMatch(
      /Left to do:\n {2}1\. Add the repository secret ORGFORM_PLAN_TOKEN, a token that can only read.*\n {2}2\. Create the environment orgform-apply \(Settings > Environments\), deployment branches limited to main, and give it the secrets ORGFORM_TOKEN.*\n {2}3\. Add the variable ORGFORM_BASE_URL.*\n {2}4\. Commit and push: git add orgs.yaml \.github\/workflows\/orgform\.yml \.github\/workflows\/orgform-drift\.yml \.gitignore/,
    );
    expect(await read(cwd, '.github/workflows/orgform.yml')).toBe(await read(ROOT, 'examples/github-actions/orgform.yml'));
    expect(await read(cwd, '.github/workflows/orgform-drift.yml')).toBe(await read(ROOT, 'examples/github-actions/orgform-drift.yml'));
    expect(init.stdout).toContain('.github/workflows/orgform-drift.yml (a plan of main every Monday: one issue open while the service differs)');
    expect(await read(cwd, 'orgs.yaml')).toMatch(/^# yaml-language-server: \$schema=\.\/node_modules\/orgform\/schemas\/orgs\.schema\.json\n/);
    expect((await read(cwd, '.gitignore')).split('\n')).toEqual(expect.arrayContaining(['node_modules/', '.orgform/', 'plan.bin']));
    expect(init.stdout).toContain('git push, then open a pull request to see its plan.');

    const validate = await runCli(['validate'], { cwd, env: {} });
    expect(validate.stderr).toBe('');
    expect(validate.code).toBe(0);
  });

  it('applies on merges to the branch the repository is on, not to a main it may not have', async () => {
    const cwd = await makeWorkspace();
    await mkdir(join(cwd, '.git'));
    await writeFile(join(cwd, '.git', 'HEAD'), 'ref: refs/heads/master\n');
    expect((await runCli(['init'], { cwd, env: {} })).code).toBe(0);
    const workflow = await read(cwd, '.github/workflows/orgform.yml');
    expect(workflow).toMatch(/^\s*branches: \[master\]$/m);
    expect(workflow).not.toMatch(/\[main\]/);
    expect(workflow).toContain('on merge to master only the\n# plan reviewed there is applied');
    expect(workflow).toContain('deployment branches are master only');
    expect(workflow).toContain('run this workflow by hand on master with the digest you reviewed');
    expect(await read(cwd, '.github/workflows/orgform-drift.yml')).toContain('a plan of master against the service');
  });

  it('writes a workflow with split credentials, every action pinned by commit (its own by this release, stamped at release), no persisted checkout credentials and a paths filter', async () => {
    const cwd = await makeWorkspace();
    const init = await runCli(['init'], { cwd, env: {} });
    expect(init.code).toBe(0);
    const text = await read(cwd, '.github/workflows/orgform.yml');
    const workflow = parse(text) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
    expect(pinningProblems(text, `v${VERSION}`)).toEqual([]);
    expect(checkoutProblems(workflow)).toEqual([]);
    expect(splitCredentialProblems(workflow, ['plan'])).toEqual([]);
    expect(workflow.jobs.plan.permissions).toEqual({ contents: 'read', 'pull-requests': 'write' });
    expect(workflow.on.pull_request.paths).toEqual(['orgs.yaml', '.github/workflows/orgform.yml']);
  });

  it('writes a scheduled drift workflow: weekly, read-only secrets, issues write only, pinned; none with --no-drift', async () => {
    const cwd = await makeWorkspace();
    expect((await runCli(['init'], { cwd, env: {} })).code).toBe(0);
    const text = await read(cwd, '.github/workflows/orgform-drift.yml');
    const workflow = parse(text) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
    expect(workflow.on.schedule).toEqual([{ cron: '17 6 * * 1' }]);
    expect(workflow.permissions).toEqual({});
    expect(workflow.jobs.drift.permissions).toEqual({ contents: 'read', issues: 'write' });
    expect(workflow.jobs.drift.steps[1]).toMatchObject({ with: { command: 'drift' }, env: { ORGFORM_TOKEN: '${{ secrets.ORGFORM_PLAN_TOKEN }}' } });
    expect(splitCredentialProblems(workflow, ['drift'])).toEqual([]);
    expect(pinningProblems(text, `v${VERSION}`)).toEqual([]);
    expect(checkoutProblems(workflow)).toEqual([]);

    const none = await makeWorkspace();
    expect((await runCli(['init', '--no-drift'], { cwd: none, env: {} })).code).toBe(0);
    expect(existsSync(join(none, '.github', 'workflows', 'orgform.yml'))).toBe(true);
    expect(existsSync(join(none, '.github', 'workflows', 'orgform-drift.yml'))).toBe(false);
  });

  it('writes the GitLab configuration with --gitlab, and no pipeline with --no-workflow', async () => {
    const gitlab = await makeWorkspace();
    const onGitlab = await runCli(['init', '--gitlab'], { cwd: gitlab, env: {} });
    expect(onGitlab.code).toBe(0);
    expect(onGitlab.stdout).toContain('1. Add the CI/CD variable ORGFORM_PLAN_TOKEN (masked), a token that can only read, for the plan of every merge request');
    expect(onGitlab.stdout).toContain('2. Add the CI/CD variable ORGFORM_TOKEN (masked and protected), the token that writes, and keep main protected');
    expect(await read(gitlab, '.gitlab-ci.yml')).toBe(await read(ROOT, 'examples/gitlab-ci.yml'));
    expect(existsSync(join(gitlab, '.github'))).toBe(false);
    // GitLab's word for the review.
    expect(onGitlab.stdout).toContain('git push, then open a merge request to see its plan.');
    expect(onGitlab.stdout).not.toContain('pull request');

    const bare = await makeWorkspace();
    expect((await runCli(['init', '--no-workflow'], { cwd: bare, env: {} })).code).toBe(0);
    expect(existsSync(join(bare, '.github'))).toBe(false);
    expect(existsSync(join(bare, '.gitlab-ci.yml'))).toBe(false);
    expect(existsSync(join(bare, 'orgs.yaml'))).toBe(true);
  });

  it('refuses to overwrite an existing orgs.yaml and writes nothing at all, unless --force', async () => {
    const cwd = await makeWorkspace({ 'orgs.yaml': 'version: 1\norganisations: {}\n# mine\n' });
    const refused = await runCli(['init'], { cwd, env: {} });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('orgs.yaml already exists. Nothing was written. Pass --force to overwrite');
    expect(await read(cwd, 'orgs.yaml')).toContain('# mine');
    expect(existsSync(join(cwd, '.github'))).toBe(false);
    expect(existsSync(join(cwd, '.gitignore'))).toBe(false);

    expect((await runCli(['init', '--force'], { cwd, env: {} })).code).toBe(0);
    expect(await read(cwd, 'orgs.yaml')).not.toContain('# mine');
  });

  it('adds only the .gitignore lines missing, keeping what is there', async () => {
    const cwd = await makeWorkspace({ '.gitignore': 'node_modules/\n.orgform/' });
    await runCli(['init', '--no-workflow'], { cwd, env: {} });
    await runCli(['init', '--no-workflow', '--force'], { cwd, env: {} });
    const lines = (await read(cwd, '.gitignore')).split('\n');
    expect(lines.filter((l) => l === '.orgform/')).toHaveLength(1);
    expect(lines.filter((l) => l === 'plan.bin')).toHaveLength(1);
    expect(lines[0]).toBe('node_modules/');
    expect(lines.filter((l) => l === 'node_modules/')).toHaveLength(1);
  });

  it('exports what the token can see when a service and a token are set, so that plan shows no changes', async () => {
    const { env } = await setupEmulatorWorkspace();
    const cwd = await makeWorkspace();
    const init = await runCli(['init', '--no-workflow'], { cwd, env });
    expect(init.code).toBe(0);
    expect(init.stdout).toMatch(/orgs\.yaml \(exported: \d+ organisations your token can see\)/);
    expect(await read(cwd, 'orgs.yaml')).toContain('acme:');
    const plan = await runCli(['plan', '--detailed-exitcode'], { cwd, env });
    expect(plan.stdout).toContain('No changes.');
    expect(plan.code).toBe(0);
  });

  it('writes nothing when the export fails', async () => {
    const cwd = await makeWorkspace();
    await writeFile(join(cwd, 'keep'), '');
    const init = await runCli(['init'], { cwd, env: { ORGFORM_BASE_URL: 'http://127.0.0.1:9', ORGFORM_TOKEN: 't', ORGFORM_MAX_ATTEMPTS: '1' } });
    expect(init.code).toBe(1);
    expect(existsSync(join(cwd, 'orgs.yaml'))).toBe(false);
    expect(existsSync(join(cwd, '.github'))).toBe(false);
  });

  it('refuses an orgs.yaml that is a dangling symbolic link rather than writing where it points', async () => {
    const cwd = await makeWorkspace();
    const elsewhere = await makeWorkspace();
    await symlink(join(elsewhere, 'theirs.yaml'), join(cwd, 'orgs.yaml'));
    const init = await runCli(['init', '--no-workflow'], { cwd, env: {} });
    expect(init.code).toBe(1);
    expect(init.stderr).toContain(`Cannot write orgs.yaml: orgs.yaml is a symbolic link to "${join(elsewhere, 'theirs.yaml')}", which leads outside`);
    expect(init.stderr).toContain('Nothing was written');
    expect(existsSync(join(elsewhere, 'theirs.yaml'))).toBe(false);
    expect(await readlink(join(cwd, 'orgs.yaml'))).toBe(join(elsewhere, 'theirs.yaml'));
  });

  it('writes and appends nothing through a link out of the repository or into .git (orgs.yaml, .github, .gitignore), even with --force', async () => {
    const outside = await makeWorkspace({ 'bashrc': 'export PATH=/usr/bin\n', 'theirs.yaml': 'mine\n' });
    const cases: Array<[string, string, string]> = [
      ['.gitignore', join(outside, 'bashrc'), '.gitignore is a symbolic link to'],
      ['orgs.yaml', join(outside, 'theirs.yaml'), 'orgs.yaml is a symbolic link to'],
      ['.github', outside, '.github (on the way to .github/workflows/orgform.yml) is a symbolic link to'],
      ['orgs.yaml', '.git/hooks-pre-commit', 'orgs.yaml is a symbolic link to ".git/hooks-pre-commit", which leads into the repository\'s .git directory'],
    ];
    for (const [name, target, reason] of cases) {
      const cwd = await makeWorkspace({ '.git/HEAD': 'ref: refs/heads/main\n' });
      await symlink(target, join(cwd, name));
      const init = await runCli(['init', '--force'], { cwd, env: {} });
      expect(init.code, name).toBe(1);
      expect(init.stderr).toContain(`Cannot write ${name === '.github' ? '.github/workflows/orgform.yml' : name}: ${reason}`);
      expect(init.stderr).toContain('Nothing was written');
      expect(existsSync(join(cwd, name === 'orgs.yaml' ? '.gitignore' : 'orgs.yaml'))).toBe(false);
      expect(existsSync(join(cwd, '.git', 'hooks-pre-commit'))).toBe(false);
    }
    expect(await read(outside, 'bashrc')).toBe('export PATH=/usr/bin\n');
    expect(await read(outside, 'theirs.yaml')).toBe('mine\n');
    expect(existsSync(join(outside, 'workflows'))).toBe(false);
  });

  it('writes nothing, and says why, when the pipeline or .gitignore cannot be written (.github is a file, .gitignore a directory)', async () => {
    const github = await makeWorkspace({ '.github': 'not a directory' });
    const refused = await runCli(['init'], { cwd: github, env: {} });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('Cannot write .github/workflows/orgform.yml: ENOTDIR. Nothing was written.');
    expect(refused.stderr).not.toContain('bug');
    expect(existsSync(join(github, 'orgs.yaml'))).toBe(false);

    const gitignore = await makeWorkspace();
    await mkdir(join(gitignore, '.gitignore'));
    const second = await runCli(['init'], { cwd: gitignore, env: {} });
    expect(second.code).toBe(1);
    expect(second.stderr).toContain('Cannot write .gitignore: EISDIR. Nothing was written.');
    expect(existsSync(join(gitignore, 'orgs.yaml'))).toBe(false);
    expect(existsSync(join(gitignore, '.github/workflows/orgform.yml'))).toBe(false);
  });

  it('says that the pipeline must move to the repository root when init runs in a subdirectory of one', async () => {
    const repo = await makeWorkspace({ '.git/HEAD': 'ref: refs/heads/main\n', 'infra/keep': '' });
    const github = await runCli(['init'], { cwd: join(repo, 'infra'), env: {} });
    expect(github.code).toBe(0);
    expect(github.stdout).toContain(`GitHub runs only the workflows in .github/workflows at the repository root (${repo}): move infra/.github/workflows/orgform.yml and infra/.github/workflows/orgform-drift.yml there, and give each use of the action \`working-directory: infra\`.`);

    expect(await read(join(repo, 'infra'), '.github/workflows/orgform.yml')).toMatch(/^ {4}paths: \[infra\/orgs\.yaml, \.github\/workflows\/orgform\.yml\]$/m);

    const gitlab = await runCli(['init', '--gitlab', '--force'], { cwd: join(repo, 'infra'), env: {} });
    expect(gitlab.stdout).toContain(`GitLab reads .gitlab-ci.yml at the repository root (${repo}): move infra/.gitlab-ci.yml there, and give the component \`working-directory: infra\`.`);
    expect(await read(join(repo, 'infra'), '.gitlab-ci.yml')).toMatch(/^ {6}changes: \[infra\/orgs\.yaml, \.gitlab-ci\.yml\]$/m);

    const atRoot = await runCli(['init', '--force'], { cwd: repo, env: {} });
    expect(atRoot.stdout).not.toContain('repository root');
  });
});
