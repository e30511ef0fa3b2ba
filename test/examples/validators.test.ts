/**
 * The pipeline files, checked by the validators the field uses rather than by hope:
 *
 * - the GitHub Action (action.yml), its example (examples/github-actions/*.yml) and the project's
 *   own workflows (.github/workflows/*.yml) by action-validator (@action-validator/cli, a dev
 *   dependency: SchemaStore's schemas for actions and workflows, compiled to WebAssembly, so it runs
 *   offline on Node 20);
 * - examples/gitlab-ci.yml, with the GitLab component it includes (templates/orgform.yml), by
 *   gitlab-ci-local --list-all (a dev dependency, pinned), which resolves the include and its inputs,
 *   validates the result against GitLab's own CI schema (gitlab-org/gitlab, editor/schema/ci.json)
 *   and then resolves stages, rules and jobs as GitLab would.
 *
 * Each validator is also shown a broken copy, so that a validator that silently passes everything
 * fails the test.
 */
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { gitlabCiLocal, gitlabProject, run } from '../support/gitlab-ci.js';
import { runCli } from '../support/run-cli.js';
import { makeWorkspace } from '../support/workspace.js';

const require = createRequire(import.meta.url);
const ACTION_VALIDATOR = require.resolve('@action-validator/cli/cli.mjs');
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const GITHUB_DIR = join(ROOT, 'examples', 'github-actions');
const WORKFLOWS_DIR = join(ROOT, '.github', 'workflows');
const GITLAB_PIPELINE = join(ROOT, 'examples', 'gitlab-ci.yml');
const COMPONENT = join(ROOT, 'templates', 'orgform.yml');

async function yamlFiles(dir: string): Promise<string[]> {
  return (await readdir(dir)).filter((name) => /\.ya?ml$/.test(name)).sort().map((name) => join(dir, name));
}

describe('action.yml and the GitHub workflows pass action-validator', () => {
  it('the action, every example workflow and every workflow of the project’s own is valid', async () => {
    const files = [join(ROOT, 'action.yml'), ...(await yamlFiles(GITHUB_DIR)), ...(await yamlFiles(WORKFLOWS_DIR))];
    expect(files.map((file) => file.slice(ROOT.length))).toEqual(expect.arrayContaining(['action.yml', 'examples/github-actions/orgform.yml', '.github/workflows/release.yml']));
    for (const file of files) {
      const result = await run(process.execPath, [ACTION_VALIDATOR, file], ROOT);
      // It says it cannot check the globs of a `paths` filter; anything else is a finding.
      const stderr = result.stderr.split('\n').filter((line) => line !== '' && !/^WARNING: Glob validation is not yet supported\. Glob at \/on\/\w+\/paths will not be validated\.$/.test(line));
      expect({ file, code: result.code, stderr }).toEqual({ file, code: 0, stderr: [] });
    }
  });

  it('the validator refuses a broken copy of the example workflow (a misspelled step key) and of the action (a misspelled input key)', async () => {
    const cwd = await makeWorkspace();
    const workflow = (await readFile(join(GITHUB_DIR, 'orgform.yml'), 'utf8')).replace('        with: { command: plan', '        wiht: { command: plan');
    expect(workflow).toContain('wiht:');
    await writeFile(join(cwd, 'orgform.yml'), workflow);
    const refused = await run(process.execPath, [ACTION_VALIDATOR, join(cwd, 'orgform.yml')], cwd);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("Additional property 'wiht' is not allowed");

    const action = (await readFile(join(ROOT, 'action.yml'), 'utf8')).replace('    default: plan', '    defualt: plan');
    expect(action).toContain('defualt:');
    await writeFile(join(cwd, 'action.yml'), action);
    const refusedAction = await run(process.execPath, [ACTION_VALIDATOR, join(cwd, 'action.yml')], cwd);
    expect(refusedAction.code).toBe(1);
    expect(refusedAction.stderr).toContain("Additional property 'defualt' is not allowed");
  });
});

describe('examples/gitlab-ci.yml, with the component it includes, passes gitlab-ci-local --list-all', { timeout: 120_000 }, () => {
  /** A scratch project holding the example as its .gitlab-ci.yml, and `component` where the example's remote include points. */
  async function project(component: string): Promise<string> {
    const example = await readFile(GITLAB_PIPELINE, 'utf8');
    const url = /- remote: (\S+)/.exec(example)?.[1];
    expect(url).toBeDefined();
    return gitlabProject({ '.gitlab-ci.yml': example }, { remoteIncludes: { [url!]: component } });
  }

  it('is valid against GitLab’s CI schema, and lists the component’s jobs by stage', async () => {
    const cwd = await project(await readFile(COMPONENT, 'utf8'));
    const result = await gitlabCiLocal(cwd, ['--list-all']);
    expect(result.stderr + result.stdout).toContain('json schema validated');
    expect(result.code).toBe(0);
    const rows = result.stdout.split('\n').filter((line) => line.startsWith('orgform-'));
    expect(rows.map((line) => line.split(/\s+/).slice(0, 2))).toEqual([
      ['orgform-validate', 'test'],
      ['orgform-plan', 'test'],
      ['orgform-drift', 'test'],
      ['orgform-apply', 'deploy'],
    ]);
  });

  it('the validator refuses a broken copy of the component (a misspelled job key)', async () => {
    const broken = (await readFile(COMPONENT, 'utf8')).replace('  interruptible: true', '  interuptible: true');
    expect(broken).toContain('interuptible');
    const result = await gitlabCiLocal(await project(broken), ['--list-all']);
    expect(result.code).not.toBe(0);
    expect(result.stderr + result.stdout).toContain("'interuptible' property is not expected to be here");
  });
});

describe('what `orgform init` writes passes the same validators', { timeout: 120_000 }, () => {
  it('its GitHub workflows, plan and apply and the weekly drift check, pass action-validator', async () => {
    const cwd = await makeWorkspace();
    expect((await runCli(['init'], { cwd, env: {} })).code).toBe(0);
    for (const name of ['orgform.yml', 'orgform-drift.yml']) {
      const result = await run(process.execPath, [ACTION_VALIDATOR, join(cwd, '.github', 'workflows', name)], cwd);
      expect(result.code, name).toBe(0);
      expect(result.stderr.split('\n').filter((line) => line !== '' && !line.startsWith('WARNING: Glob validation is not yet supported'))).toEqual([]);
    }
  });

  it('its GitLab configuration, with the component it includes, passes gitlab-ci-local --list-all', async () => {
    const written = await makeWorkspace();
    expect((await runCli(['init', '--gitlab'], { cwd: written, env: {} })).code).toBe(0);
    const ci = await readFile(join(written, '.gitlab-ci.yml'), 'utf8');
    const url = /- remote: (\S+)/.exec(ci)![1]!;
    const cwd = await gitlabProject({ '.gitlab-ci.yml': ci }, { remoteIncludes: { [url]: await readFile(COMPONENT, 'utf8') } });
    const result = await gitlabCiLocal(cwd, ['--list-all']);
    expect(result.stderr + result.stdout).toContain('json schema validated');
    expect(result.code).toBe(0);
  });
});
