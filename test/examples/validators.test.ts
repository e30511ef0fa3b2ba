/**
 * The pipeline examples, checked by the validators the field uses rather than by hope:
 *
 * - examples/github-actions/*.yml by action-validator (@action-validator/cli, a dev dependency:
 *   SchemaStore's schema for workflows, compiled to WebAssembly, so it runs offline on Node 20);
 * - examples/gitlab-ci.yml by gitlab-ci-local --list (a dev dependency, pinned), which validates
 *   the file against GitLab's own CI schema (gitlab-org/gitlab, editor/schema/ci.json) and then
 *   resolves stages, rules and jobs as GitLab would.
 *
 * Each validator is also shown a broken copy, so that a validator that silently passes everything
 * fails the test.
 */
import { spawn } from 'node:child_process';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { makeWorkspace } from '../support/workspace.js';

const require = createRequire(import.meta.url);
const ACTION_VALIDATOR = require.resolve('@action-validator/cli/cli.mjs');
const GITLAB_CI_LOCAL = join(fileURLToPath(new URL('../../node_modules/gitlab-ci-local/', import.meta.url)), 'dist', 'index.js');
const GITHUB_DIR = fileURLToPath(new URL('../../examples/github-actions/', import.meta.url));
const GITLAB_PIPELINE = fileURLToPath(new URL('../../examples/gitlab-ci.yml', import.meta.url));

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function run(command: string, args: string[], cwd: string, env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    // NO_COLOR and FORCE_COLOR=0: plain text to match on. HOME: the validators' own state stays in the workspace.
    const child = spawn(command, args, { cwd, env: { PATH: process.env.PATH ?? '', HOME: cwd, NO_COLOR: '1', FORCE_COLOR: '0', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

async function githubWorkflows(): Promise<string[]> {
  return (await readdir(GITHUB_DIR)).filter((name) => /\.ya?ml$/.test(name)).sort();
}

describe('examples/github-actions/*.yml pass action-validator', () => {
  it('every workflow in the directory is valid', async () => {
    const names = await githubWorkflows();
    expect(names).toContain('orgform.yml');
    for (const name of names) {
      const result = await run(process.execPath, [ACTION_VALIDATOR, join(GITHUB_DIR, name)], GITHUB_DIR);
      expect({ name, code: result.code, stderr: result.stderr }).toEqual({ name, code: 0, stderr: '' });
    }
  });

  it('the validator refuses a broken copy (a misspelled step key)', async () => {
    const cwd = await makeWorkspace();
    const broken = (await readFile(join(GITHUB_DIR, 'orgform.yml'), 'utf8')).replace('        with:\n          header: orgform-plan', '        wiht:\n          header: orgform-plan');
    expect(broken).toContain('wiht:');
    await writeFile(join(cwd, 'orgform.yml'), broken);
    const result = await run(process.execPath, [ACTION_VALIDATOR, join(cwd, 'orgform.yml')], cwd);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("Additional property 'wiht' is not allowed");
  });
});

describe('examples/gitlab-ci.yml passes gitlab-ci-local --list', () => {
  /** A scratch git repository holding the example as its .gitlab-ci.yml, as gitlab-ci-local expects. */
  async function project(text: string): Promise<string> {
    const cwd = await makeWorkspace({ '.gitlab-ci.yml': text });
    const init = await run('git', ['init', '-q', '-b', 'main'], cwd);
    expect(init.code).toBe(0);
    return cwd;
  }

  it('is valid against GitLab’s CI schema, and lists its jobs by stage', async () => {
    const cwd = await project(await readFile(GITLAB_PIPELINE, 'utf8'));
    const result = await run(process.execPath, [GITLAB_CI_LOCAL, '--list-all'], cwd);
    expect(result.stderr + result.stdout).toContain('json schema validated');
    expect(result.code).toBe(0);
    const rows = result.stdout.split('\n').filter((line) => line.startsWith('orgform-'));
    expect(rows.map((line) => line.split(/\s+/).slice(0, 2))).toEqual([
      ['orgform-validate', 'validate'],
      ['orgform-plan', 'plan'],
      ['orgform-apply', 'apply'],
    ]);
  });

  it('hands GitLab both reports: Code Quality from validate, the Terraform widget counts from plan', async () => {
    const pipeline = parse(await readFile(GITLAB_PIPELINE, 'utf8')) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
    expect(pipeline['orgform-validate'].artifacts).toMatchObject({ when: 'always', reports: { codequality: 'gl-code-quality-report.json' } });
    expect(pipeline['orgform-validate'].script.join('\n')).toContain('--report codequality=gl-code-quality-report.json');
    expect(pipeline['orgform-plan'].artifacts).toMatchObject({ when: 'always', reports: { terraform: 'plan-counts.json' } });
    expect(pipeline['orgform-plan'].script.join('\n')).toContain('--report gitlab-terraform=plan-counts.json');
  });

  it('the validator refuses a broken copy (a misspelled job key)', async () => {
    const broken = (await readFile(GITLAB_PIPELINE, 'utf8')).replace('  interruptible: true', '  interuptible: true');
    expect(broken).toContain('interuptible');
    const cwd = await project(broken);
    const result = await run(process.execPath, [GITLAB_CI_LOCAL, '--list-all'], cwd);
    expect(result.code).not.toBe(0);
    expect(result.stderr + result.stdout).toContain("'interuptible' property is not expected to be here");
  });
});
