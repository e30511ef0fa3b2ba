/**
 * GitLab CI/CD as tests need it: a scratch git repository holding a .gitlab-ci.yml, gitlab-ci-local
 * (a dev dependency, pinned) to validate it against GitLab's schema, list the jobs a pipeline would
 * run and resolve includes, inputs and `extends` (--preview), and a job's scripts run through bash
 * with its variables expanded as GitLab expands them.
 *
 * Remote includes are put in gitlab-ci-local's own cache beforehand, so nothing is fetched.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { runProcess, type ProcessResult } from './run-process.js';
import { makeWorkspace } from './workspace.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const GITLAB_CI_LOCAL = join(fileURLToPath(new URL('../../node_modules/gitlab-ci-local/', import.meta.url)), 'dist', 'index.js');

export type Run = ProcessResult;

/** With PATH, HOME in the workspace (the tools' own state stays there) and plain text to match on, then `env`. */
export function run(command: string, args: string[], cwd: string, env: Record<string, string> = {}): Promise<Run> {
  return runProcess(command, args, cwd, { PATH: process.env.PATH ?? '', HOME: cwd, NO_COLOR: '1', FORCE_COLOR: '0', ...env });
}

export interface ProjectOptions {
  /** The branch checked out (after a first commit on main, the default branch). */
  branch?: string;
  /** Remote includes by URL, placed where gitlab-ci-local looks before it downloads. */
  remoteIncludes?: Record<string, string>;
}

/** A git repository with `files` committed on main, as gitlab-ci-local expects to find one. */
export async function gitlabProject(files: Record<string, string>, options: ProjectOptions = {}): Promise<string> {
  const cwd = await makeWorkspace(files);
  const git = (...args: string[]) => run('git', ['-c', 'user.name=test', '-c', 'user.email=test@example.com', ...args], cwd);
  for (const args of [['init', '-q', '-b', 'main'], ['add', '-A'], ['commit', '-q', '-m', 'orgs.yaml'], ...(options.branch ? [['checkout', '-q', '-b', options.branch]] : [])]) {
    const result = await git(...args);
    if (result.code !== 0) throw new Error(`git ${args.join(' ')}: ${result.stderr}`);
  }
  for (const [url, text] of Object.entries(options.remoteIncludes ?? {})) {
    const path = join(cwd, '.gitlab-ci-local', 'includes', url.replace(/^https?:\/\//, ''));
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, text);
  }
  return cwd;
}

/**
 * gitlab-ci-local in `cwd`. `rules:changes` (the example's filter on orgs.yaml) is taken as true:
 * its evaluation diffs against origin/main, which these scratch projects have not got;
 * workflows.test.ts checks the filter as data.
 */
export function gitlabCiLocal(cwd: string, args: string[]): Promise<Run> {
  return run(process.execPath, [GITLAB_CI_LOCAL, '--evaluate-rule-changes=false', ...args], cwd);
}

/** `--variable NAME=VALUE` for each, as GitLab would set them for the pipeline. */
export function variableArgs(variables: Record<string, string>): string[] {
  return Object.entries(variables).flatMap(([name, value]) => ['--variable', `${name}=${value}`]);
}

/** A merge request pipeline (no CI_COMMIT_BRANCH there, as on GitLab). */
export const MERGE_REQUEST_PIPELINE = ['--variable', 'CI_PIPELINE_SOURCE=merge_request_event', '--variable', 'CI_MERGE_REQUEST_IID=7', '--unset-variable', 'CI_COMMIT_BRANCH'];

/**
 * The jobs `--list` shows (when: never left out): name, stage and when. Without the schema check
 * (seconds each time): validators.test.ts runs it on every file once.
 */
export async function listJobs(cwd: string, args: string[] = []): Promise<Array<{ name: string; stage: string; when: string }>> {
  const result = await gitlabCiLocal(cwd, ['--list', '--no-json-schema-validation', ...args]);
  if (result.code !== 0) throw new Error(`gitlab-ci-local --list: ${result.stderr}${result.stdout}`);
  const lines = result.stdout.split('\n');
  const header = lines.findIndex((line) => /^name\s+description\s+stage/.test(line));
  return lines
    .slice(header + 1)
    .filter((line) => line.trim() !== '')
    .map((line) => {
      const [name = '', stage = '', when = ''] = line.split(/\s{2,}/);
      return { name, stage, when };
    });
}

/** The pipeline as GitLab would run it: includes, inputs and `extends` resolved (--preview; no schema check, as for listJobs). */
export async function previewPipeline(cwd: string, args: string[] = []): Promise<Json> {
  const result = await gitlabCiLocal(cwd, ['--preview', '--no-json-schema-validation', ...args]);
  if (result.code !== 0) throw new Error(`gitlab-ci-local --preview: ${result.stderr}${result.stdout}`);
  return parse(result.stdout.slice(result.stdout.indexOf('---'))) as Json;
}

/** `$NAME` and `${NAME}` in a variable's value, from `env` (an unknown one is empty), as GitLab expands job variables. */
export function expandVariables(variables: Record<string, string>, env: Record<string, string>): Record<string, string> {
  const expanded: Record<string, string> = {};
  for (const [name, value] of Object.entries(variables)) {
    expanded[name] = String(value).replace(/\$\{(\w+)\}|\$(\w+)/g, (_, a: string | undefined, b: string | undefined) => env[(a ?? b)!] ?? expanded[(a ?? b)!] ?? '');
  }
  return expanded;
}

/**
 * Runs a job's before_script and script as one bash script (as the runner does: a failing command
 * ends the job). The environment is GitLab's: the predefined variables, then the job's own
 * (expanded), then the project's CI/CD variables, which win over the job's.
 */
export function runJob(job: Json, cwd: string, predefined: Record<string, string>, project: Record<string, string> = {}): Promise<Run> {
  const script = [...((job.before_script as string[]) ?? []), ...((job.script as string[]) ?? [])].join('\n');
  const variables = expandVariables((job.variables ?? {}) as Record<string, string>, { ...predefined, ...project });
  return run('bash', ['--noprofile', '--norc', '-eo', 'pipefail', '-c', script], cwd, { ...predefined, ...variables, ...project });
}
