/**
 * Runs a composite action (action.yml) the way the GitHub Actions runner does, for the parts it
 * uses, so that tests exercise the action itself rather than its scripts one by one:
 *
 * - inputs from `with:` over the declared defaults (an undeclared input is an error, where the
 *   runner would only warn and the value would be lost);
 * - each step's `if:` (by default success(): skipped after a failed step), `env:`, `working-directory:`
 *   and `run:` through `bash --noprofile --norc -eo pipefail FILE`, as `shell: bash` runs it;
 * - a `uses:` step through the test's stand-in for that action (`uses`, by the action's name without
 *   its ref), given its `with:` expanded; and `continue-on-error: true`, whose failure fails nothing;
 * - the runner's environment for a step (GITHUB_ACTIONS, GITHUB_ACTION_PATH, GITHUB_WORKSPACE,
 *   GITHUB_EVENT_PATH, GITHUB_EVENT_NAME, GITHUB_REPOSITORY, GITHUB_API_URL, GITHUB_SERVER_URL,
 *   GITHUB_RUN_ID, GITHUB_STEP_SUMMARY, GITHUB_SHA, RUNNER_TEMP; the job's env may name another
 *   server and run) and a fresh GITHUB_OUTPUT file per step, read back as the step's outputs;
 * - `${{ }}` for the expressions the action uses (inputs.*, steps.*.outputs.*, github.token,
 *   github.action_path): any other expression fails the test, so the action cannot quietly grow one
 *   that this runner would get wrong.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { parse } from 'yaml';
import { runProcess, type ProcessResult } from './run-process.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export interface StepRun {
  id: string | undefined;
  name: string;
  /** undefined when the step was skipped. */
  code: number | undefined;
  stdout: string;
  stderr: string;
  outputs: Record<string, string>;
}

export interface ActionRun {
  steps: StepRun[];
  outputs: Record<string, string>;
  /** Whether a step failed (and was not allowed to: continue-on-error), which fails the job. */
  failed: boolean;
}

export interface ActionRunOptions {
  /** The directory holding action.yml (GITHUB_ACTION_PATH). */
  actionDir: string;
  with?: Record<string, string>;
  /** GITHUB_WORKSPACE, where working-directory starts. */
  workspace: string;
  /** A scratch directory of the runner's (RUNNER_TEMP, the event file, the outputs files). */
  runnerTemp: string;
  /** The job's and the step's env (PATH included). */
  env: Record<string, string>;
  github: { token: string; eventName: string; event: Json; repository: string; apiUrl: string; sha: string };
  /** Stand-ins for the actions the steps use, by name (`actions/upload-artifact`): the step's `with:` in, its outputs and exit code out. */
  uses?: Record<string, (inputs: Record<string, string>) => Promise<{ code: number; outputs: Record<string, string> }>>;
}

/** GITHUB_OUTPUT's two forms: `name=value` and `name<<DELIMITER` … `DELIMITER`. */
export function parseOutputFile(text: string): Record<string, string> {
  const outputs: Record<string, string> = {};
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i += 1) {
    const line = lines[i]!;
    const heredoc = /^([^=<]+)<<(.+)$/.exec(line);
    if (heredoc) {
      const end = lines.indexOf(heredoc[2]!, i + 1);
      if (end < 0) throw new Error(`GITHUB_OUTPUT: no closing ${heredoc[2]}`);
      outputs[heredoc[1]!] = lines.slice(i + 1, end).join('\n');
      i = end;
    } else if (line.includes('=')) {
      outputs[line.slice(0, line.indexOf('='))] = line.slice(line.indexOf('=') + 1);
    }
  }
  return outputs;
}

export async function runCompositeAction(options: ActionRunOptions): Promise<ActionRun> {
  const action = parse(await readFile(join(options.actionDir, 'action.yml'), 'utf8')) as Json;
  if (action.runs?.using !== 'composite') throw new Error('not a composite action');
  const declared = action.inputs as Record<string, { default?: string }>;
  for (const name of Object.keys(options.with ?? {})) if (!(name in declared)) throw new Error(`Unexpected input '${name}'`);

  const steps: Record<string, { outputs: Record<string, string> }> = {};
  const context = (expr: string): string => {
    if (expr === 'github.token') return options.github.token;
    if (expr === 'github.action_path') return options.actionDir;
    const input = /^inputs\.([\w-]+)$/.exec(expr);
    if (input) {
      const name = input[1]!;
      if (!(name in declared)) throw new Error(`unknown input ${name}`);
      return options.with?.[name] ?? expand(String(declared[name]!.default ?? ''));
    }
    const output = /^steps\.([\w-]+)\.outputs\.([\w-]+)$/.exec(expr);
    if (output) return steps[output[1]!]?.outputs[output[2]!] ?? '';
    throw new Error(`the test runner does not know \${{ ${expr} }}`);
  };
  const expand = (value: unknown): string => String(value).replace(/\$\{\{\s*(.+?)\s*\}\}/g, (_, expr: string) => context(expr));
  // A condition without a status function means `success() && …`, as on the runner.
  const condition = (expr: string | undefined, failed: boolean): boolean => {
    const text = expr ?? 'success()';
    const value = text.split('&&').every((part) => {
      const term = part.trim();
      if (term === 'always()') return true;
      if (term === 'success()') return !failed;
      if (term === 'failure()') return failed;
      const cmp = /^(.+?)\s*(==|!=)\s*'([^']*)'$/.exec(term);
      if (!cmp) throw new Error(`the test runner cannot evaluate if: ${text}`);
      return (context(cmp[1]!.trim()) === cmp[3]) === (cmp[2] === '==');
    });
    return /\b(always|success|failure)\(\)/.test(text) ? value : value && !failed;
  };

  await mkdir(options.runnerTemp, { recursive: true });
  const eventPath = join(options.runnerTemp, 'event.json');
  await writeFile(eventPath, JSON.stringify(options.github.event));
  const runner = {
    CI: 'true',
    GITHUB_ACTIONS: 'true',
    GITHUB_ACTION_PATH: options.actionDir,
    GITHUB_WORKSPACE: options.workspace,
    GITHUB_EVENT_PATH: eventPath,
    GITHUB_EVENT_NAME: options.github.eventName,
    GITHUB_REPOSITORY: options.github.repository,
    GITHUB_API_URL: options.github.apiUrl,
    GITHUB_SHA: options.github.sha,
    GITHUB_STEP_SUMMARY: join(options.runnerTemp, 'step-summary.md'),
    RUNNER_TEMP: options.runnerTemp,
  };

  // The run's own, unless the job's env names another run (a re-run, another server).
  const run = { GITHUB_SERVER_URL: 'https://github.example', GITHUB_RUN_ID: '4242' };

  const runs: StepRun[] = [];
  let failed = false;
  for (const [index, step] of (action.runs.steps as Json[]).entries()) {
    if (step.uses === undefined && step.shell !== 'bash') throw new Error('the test runner runs `shell: bash` run steps and the `uses:` it is given stand-ins for');
    const name = expand(step.name ?? step.run ?? step.uses);
    if (!condition(step.if, failed)) {
      runs.push({ id: step.id, name, code: undefined, stdout: '', stderr: '', outputs: {} });
      continue;
    }
    if (step.uses !== undefined) {
      const standIn = options.uses?.[String(step.uses).replace(/@.*$/, '')];
      if (standIn === undefined) throw new Error(`the test gave no stand-in for ${String(step.uses)}`);
      const result = await standIn(Object.fromEntries(Object.entries((step.with ?? {}) as Json).map(([k, v]) => [k, expand(v)])));
      if (step.id !== undefined) steps[step.id] = { outputs: result.outputs };
      runs.push({ id: step.id, name, code: result.code, stdout: '', stderr: '', outputs: result.outputs });
      if (result.code !== 0 && step['continue-on-error'] !== true) failed = true;
      continue;
    }
    const outputFile = join(options.runnerTemp, `output-${index}`);
    const script = join(options.runnerTemp, `step-${index}.sh`);
    await writeFile(outputFile, '');
    await writeFile(script, String(step.run));
    const env = { ...run, ...options.env, ...runner, GITHUB_OUTPUT: outputFile, ...Object.fromEntries(Object.entries(step.env ?? {}).map(([k, v]) => [k, expand(v)])) };
    const cwd = resolve(options.workspace, expand(step['working-directory'] ?? '.'));
    const result = await bash(script, cwd, env);
    const outputs = parseOutputFile(await readFile(outputFile, 'utf8'));
    if (step.id !== undefined) steps[step.id] = { outputs };
    runs.push({ id: step.id, name, ...result, outputs });
    if (result.code !== 0 && step['continue-on-error'] !== true) failed = true;
  }
  const outputs = Object.fromEntries(Object.entries((action.outputs ?? {}) as Record<string, { value: string }>).map(([k, v]) => [k, expand(v.value)]));
  return { steps: runs, outputs, failed };
}

function bash(script: string, cwd: string, env: Record<string, string>): Promise<ProcessResult> {
  return runProcess('bash', ['--noprofile', '--norc', '-eo', 'pipefail', script], cwd, env);
}
