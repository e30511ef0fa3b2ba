#!/usr/bin/env node
// @ts-check
/**
 * The action's orgform step, run in the working directory.
 *
 * plan: `orgform plan --format markdown --detailed-exitcode --out PLANFILE [-f FILE]… [--max-changes N] [ARGS]`.
 *   The Markdown (for the comment) goes to a file and is also shown, folded, in the log; stderr
 *   goes to the log as it comes (orgform's annotations among it) and to a file, for the comment when
 *   plan fails before making a plan. Then, from the very plan saved, offline, the plan page:
 *   `orgform show PLANFILE --format html`, which the next step uploads as an artifact.
 * apply: `orgform apply --auto-approve [-f FILE]… [--max-changes N] [--report html=FILE] [ARGS]`, its
 *   output straight to the log (orgform folds it and writes the job summary itself); the report page,
 *   which the next step uploads, when the orgform run can write one (an older one cannot).
 *
 * The step itself succeeds whatever orgform's exit code, so that the comment is written either way;
 * the action's last step fails the job. Outputs: exitcode, has-changes, plan-file, page-file and
 * page-name (the plan page or the apply report, and its artifact's name), and for the comment step markdown-file,
 * stderr-file and failed. A cancelled job's SIGINT or SIGTERM is passed
 * to orgform (which finishes what is in flight and keeps its journal) and waited for.
 */
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, createWriteStream, existsSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { constants, tmpdir } from 'node:os';
import { join } from 'node:path';
import { ActionError, foldUntrusted, runStep, setOutputs, warningCommand } from './github-runner.mjs';
import { orgformArguments, pageArtifactName, readInputs } from './read-inputs.mjs';

async function main() {
  const env = process.env;
  const inputs = readInputs(env);
  const bin = env.ORGFORM_BIN;
  if (!bin) throw new ActionError('ORGFORM_BIN is not set: the install step gives it');
  const childEnv = { ...env };
  // Left as the job has it when the input is empty: a job-level ORGFORM_STATE still counts.
  if (inputs.state !== '') childEnv.ORGFORM_STATE = inputs.state;

  const dir = mkdtempSync(join(env.RUNNER_TEMP || tmpdir(), `orgform-${inputs.command}-`));
  const planFile = join(dir, 'plan.bin');
  const markdownFile = join(dir, 'plan.md');
  const stderrFile = join(dir, 'plan.err');
  const pageFile = join(dir, inputs.command === 'plan' ? 'plan.html' : 'apply.html');
  const report = inputs.command === 'apply' && writesApplyReport(bin, childEnv) ? pageFile : undefined;
  const args = orgformArguments(inputs, planFile, report);
  console.log(`orgform ${args.join(' ')}`);

  let code;
  if (inputs.command === 'plan') {
    const stdout = openSync(markdownFile, 'w');
    const saved = createWriteStream(stderrFile);
    code = await run(bin, args, childEnv, ['ignore', stdout, 'pipe'], (chunk) => {
      process.stderr.write(chunk);
      saved.write(chunk);
    });
    closeSync(stdout);
    await new Promise((resolve) => saved.end(resolve));
    const markdown = readFileSync(markdownFile, 'utf8');
    if (markdown.trim() !== '') process.stdout.write(foldUntrusted('The plan, as the pull request comment shows it', markdown));
    if (existsSync(planFile)) await writePage(bin, planFile, pageFile, childEnv);
  } else {
    code = await run(bin, args, childEnv, 'inherit');
  }

  const plan = inputs.command === 'plan';
  setOutputs(env, {
    exitcode: String(code),
    'has-changes': plan ? String(code === 2) : '',
    'plan-file': plan && existsSync(planFile) ? planFile : '',
    'page-file': existsSync(pageFile) ? pageFile : '',
    'page-name': pageArtifactName(inputs),
    'markdown-file': plan ? markdownFile : '',
    'stderr-file': plan ? stderrFile : '',
    failed: String(plan ? code !== 0 && code !== 2 : code !== 0),
  });
}

/**
 * The plan page of the saved plan, or none, with a warning: the plan and its comment stand without
 * it (an installed orgform older than the page, say), and the comment then links the run.
 * @param {string} bin
 * @param {string} planFile
 * @param {string} pageFile
 * @param {NodeJS.ProcessEnv} env
 */
async function writePage(bin, planFile, pageFile, env) {
  const page = openSync(pageFile, 'w');
  // Shown only on a failure: on success it is show's note on the saved plan, said by plan already.
  /** @type {Buffer[]} */
  const said = [];
  const code = await run(bin, ['show', planFile, '--format', 'html'], env, ['ignore', page, 'pipe'], (chunk) => said.push(chunk));
  closeSync(page);
  if (code === 0) return;
  process.stderr.write(Buffer.concat(said));
  rmSync(pageFile, { force: true });
  console.log(warningCommand(`orgform show --format html exited with ${code}, so there is no plan page: the comment links this run instead.`));
}

/**
 * Whether this orgform's apply writes a report page (`--report html=FILE`, in its help): one older
 * than the page would refuse the option and apply nothing.
 * @param {string} bin
 * @param {NodeJS.ProcessEnv} env
 */
function writesApplyReport(bin, env) {
  const [command, first] = commandOf(bin);
  const help = spawnSync(command, [...first, 'apply', '--help'], { env, encoding: 'utf8' });
  return help.status === 0 && help.stdout.includes('html=FILE');
}

/**
 * A release's bin/orgform.js is run by this node; an installed one (node_modules/.bin) as it is.
 * @param {string} bin
 * @returns {[string, string[]]}
 */
function commandOf(bin) {
  return bin.endsWith('.js') ? [process.execPath, [bin]] : [bin, []];
}

/**
 * @param {string} bin
 * @param {string[]} args
 * @param {NodeJS.ProcessEnv} env
 * @param {import('node:child_process').StdioOptions} stdio
 * @param {(chunk: Buffer) => void} [onStderr]
 * @returns {Promise<number>}
 */
function run(bin, args, env, stdio, onStderr) {
  return new Promise((resolve, reject) => {
    const [command, first] = commandOf(bin);
    const child = spawn(command, [...first, ...args], { env, stdio });
    if (onStderr) child.stderr?.on('data', onStderr);
    const pass = (/** @type {NodeJS.Signals} */ signal) => child.kill(signal);
    process.on('SIGINT', pass);
    process.on('SIGTERM', pass);
    child.on('error', (err) => reject(new ActionError(`could not run ${bin}: ${err.message}`)));
    child.on('close', (code, signal) => {
      process.off('SIGINT', pass);
      process.off('SIGTERM', pass);
      resolve(code ?? 128 + (signal === null ? 0 : constants.signals[signal]));
    });
  });
}

await runStep(main);
