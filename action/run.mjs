#!/usr/bin/env node
// @ts-check
/**
 * The action's orgform step, run in the working directory.
 *
 * plan: `orgform plan --format markdown --detailed-exitcode --out PLANFILE [-f FILE]… [--max-changes N] [ARGS]`.
 *   The Markdown (for the comment) goes to a file and is also shown, folded, in the log; stderr
 *   goes to the log as it comes (orgform's annotations among it) and to a file, for the comment when
 *   plan fails before making a plan.
 *   Then, from the very plan saved, offline, the plan page: `orgform show PLANFILE --format html`,
 *   which the next step uploads as an artifact.
 * drift: the same plan and page, its Markdown for the drift issue, which links the page.
 * apply: what the review step decided (REVIEW_MODE): `orgform apply --expect-digest DIGEST
 *   [--reviewed FILE] … --format json` (or `--auto-approve` for apply-unreviewed), its events to a
 *   file for the result comment, its plan, errors and annotations to the log, then a line saying what
 *   happened, and `--report html=FILE` (the report page, which the next step uploads) when this
 *   orgform can write one (an older one cannot); without a reviewed plan, only the plan in Markdown, as for plan, and the job fails
 *   when it has changes.
 *
 * The step itself succeeds whatever orgform's exit code, so that the comment is written either way;
 * the action's last step fails the job. Outputs: exitcode, has-changes, plan-file, page-file and
 * page-name (the plan page or the apply report, and its artifact's name), and for the comment step markdown-file, stderr-file, result-file and failed. A cancelled job's SIGINT or
 * SIGTERM is passed to orgform (which finishes what is in flight and keeps its journal) and waited for.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeOutcome, readApplyOutcome } from '../pipeline/apply-outcome.mjs';
import { markdownDigest } from '../pipeline/reviewed-plan.mjs';
import { commandOf, runOrgform, RunError } from '../pipeline/run-orgform.mjs';
import { ActionError, errorCommand, foldUntrusted, runStep, setOutputs, warningCommand } from './github-runner.mjs';
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
  const resultFile = join(dir, 'apply.ndjson');
  const pageFile = join(dir, inputs.command === 'apply' ? 'apply.html' : 'plan.html');
  const mode = reviewMode(env);
  const report = inputs.command === 'apply' && writesApplyReport(bin, childEnv) ? pageFile : undefined;
  const args = orgformArguments(inputs, planFile, mode, report);
  // Apply's events are data for the result comment; a plan's Markdown is for a comment or an issue.
  const events = inputs.command === 'apply' && mode.mode !== 'no-review';
  console.log(`orgform ${args.join(' ')}`);

  const code = await run(bin, args, childEnv, { stdout: events ? resultFile : markdownFile, stderr: stderrFile });
  if (inputs.command !== 'apply' && existsSync(planFile)) await writePage(bin, planFile, pageFile, childEnv, dir, inputs.command === 'drift' ? 'drift issue' : 'comment');
  if (events) {
    console.log(describeOutcome(readApplyOutcome(readFileSync(resultFile, 'utf8'), readFileSync(stderrFile, 'utf8'))));
  } else {
    const markdown = readFileSync(markdownFile, 'utf8');
    const title = inputs.command === 'plan' ? 'The plan, as the pull request comment shows it' : inputs.command === 'drift' ? 'The plan, as the drift issue shows it' : 'The plan that would be applied';
    if (markdown.trim() !== '') process.stdout.write(foldUntrusted(title, markdown));
    if (inputs.command === 'apply' && code === 2) process.stdout.write(errorCommand(`No reviewed plan: ${env.REVIEW_REASON || 'none was found'}. Nothing was applied; the plan in the log is what would be.`));
  }

  const plan = inputs.command !== 'apply';
  // apply: only a digest it was allowed to apply; the plan nobody reviewed keeps its digest in the log, never in an output a later step could pass on.
  const digest = plan ? (markdownDigest(readFileSync(markdownFile, 'utf8')) ?? '') : mode.mode === 'reviewed' ? mode.digest : '';
  setOutputs(env, {
    digest,
    exitcode: String(code),
    'has-changes': plan ? String(code === 2) : '',
    'plan-file': plan && existsSync(planFile) ? planFile : '',
    'page-file': existsSync(pageFile) ? pageFile : '',
    'page-name': pageArtifactName(inputs),
    'markdown-file': events ? '' : markdownFile,
    'stderr-file': stderrFile,
    'result-file': events ? resultFile : '',
    failed: String(plan ? code !== 0 && code !== 2 : code !== 0),
  });
}

/**
 * @param {string} bin
 * @param {string[]} args
 * @param {NodeJS.ProcessEnv} env
 * @param {{ stdout: string, stderr: string, quiet?: boolean }} files
 */
async function run(bin, args, env, files) {
  try {
    return await runOrgform(bin, args, env, files);
  } catch (err) {
    if (err instanceof RunError) throw new ActionError(err.message);
    throw err;
  }
}

/**
 * The plan page of the saved plan, or none, with a warning: the plan and its comment (or drift
 * issue) stand without it (an installed orgform older than the page, say), and link the run instead.
 * @param {string} bin
 * @param {string} planFile
 * @param {string} pageFile
 * @param {NodeJS.ProcessEnv} env
 * @param {string} dir
 * @param {string} linker  what links the page: the comment, or the drift issue
 */
async function writePage(bin, planFile, pageFile, env, dir, linker) {
  // Shown only on a failure: on success it is show's note on the saved plan, said by plan already.
  const said = join(dir, 'page.err');
  const code = await run(bin, ['show', planFile, '--format', 'html'], env, { stdout: pageFile, stderr: said, quiet: true });
  if (code === 0) return;
  process.stderr.write(readFileSync(said));
  rmSync(pageFile, { force: true });
  console.log(warningCommand(`orgform show --format html exited with ${code}, so there is no plan page: the ${linker} links this run instead.`));
}

/**
 * Whether this orgform's apply writes a report page (`--report html=FILE`, in its help): one older
 * than the page would refuse the option and apply nothing.
 * @param {string} bin
 * @param {NodeJS.ProcessEnv} env
 */
function writesApplyReport(bin, env) {
  const [command, first] = commandOf(bin);
  // Bounded: an orgform that hangs on --help is taken as one that writes no report, not waited for.
  const help = spawnSync(command, [...first, 'apply', '--help'], { env, encoding: 'utf8', timeout: 30_000 });
  return help.status === 0 && help.stdout.includes('html=FILE');
}

/**
 * Apply's mode, as the review step decided it (REVIEW_MODE, REVIEW_DIGEST, REVIEW_FILE).
 * @param {NodeJS.ProcessEnv} env
 * @returns {import('../pipeline/reviewed-plan.mjs').ApplyMode}
 */
function reviewMode(env) {
  if (env.REVIEW_MODE === 'reviewed' && env.REVIEW_DIGEST) return { mode: 'reviewed', digest: env.REVIEW_DIGEST, ...(env.REVIEW_FILE ? { reviewedFile: env.REVIEW_FILE } : {}) };
  if (env.REVIEW_MODE === 'unreviewed') return { mode: 'unreviewed' };
  return { mode: 'no-review' };
}

await runStep(main);
