/**
 * `orgform apply [PLANFILE]`: parses the flags, builds the view and runs the flow
 * (flow.ts, which reads top to bottom, connecting included), then maps the outcome to an
 * exit code. Nothing here decides what apply does.
 */
import { runApply, type ApplyInputs, type ApplyOutcome, type Confirmation } from './flow.js';
import { refusalError } from './views/refusal-error.js';
import { UsageError } from '../../errors.js';
import { confirmQuestion, type ApplyView } from './view.js';
import { clientOpener, type OpenClientSettings } from '../../api/connect/open-client.js';
import { useColor, type ColorSettings } from '../../text/ansi.js';
import { formatError } from '../../text/format-error.js';
import { createInterface } from 'node:readline';
import type { CliIO, ExitCode, OutputStream } from '../../cli-io.js';
import { jobCheckout, type CiSettings } from '../../ci/ci-settings.js';
import { openPipelineOutput } from '../../ci/pipeline-output.js';
import type { ConfigVariables } from '../../config/interpolate.js';
import { withApplyPipeline } from './views/ci-apply-view.js';
import type { StateSettings } from '../../state/state-settings.js';
import { RunRecording, type HtmlReportSpec } from './record-run.js';

import type { ConnectionFlags } from '../../api/connect/resolve-connection.js';

export interface ApplyFlags extends ConnectionFlags {
  file?: string[];
  parallelism: number;
  format: 'text' | 'json';
  autoApprove?: boolean;
  state?: string;
  target?: string[];
  shard?: string;
  maxChanges?: number;
  color?: boolean;
  /** Terraform's `-input=false`: never ask, even on a terminal. */
  input?: 'true' | 'false';
  /** Apply the fresh plan only if it has this digest (checked by the grammar: `sha256:` and 64 digits). */
  expectDigest?: string;
  /** The reviewed plan: a file ending with its digest marker (a Markdown plan, or the marker alone). */
  reviewed?: string;
  /** `--report html=FILE`: the run as a page, written at its end however it ends. */
  report?: HtmlReportSpec[];
}

/**
 * The settings apply reads (cli/settings.ts), all of them before anything is done, so that a
 * mistake there changes nothing: where to connect and how, the plan key, the state, the files'
 * variables, and apply's own (ORGFORM_READ_MAX_AGE_MS, ORGFORM_PROGRESS_INTERVAL_MS).
 */
export interface ApplySettings extends Omit<OpenClientSettings, 'parallelism'> {
  color: ColorSettings;
  ci: CiSettings;
  planKey: string | undefined;
  apply: { readMaxAgeMs?: number; progressIntervalMs?: number };
  state: StateSettings;
  config: ConfigVariables;
}

export async function run(flags: ApplyFlags, io: CliIO, args: string[], settings: ApplySettings): Promise<ExitCode> {
  const { progressIntervalMs } = settings.apply;
  const inputs = { ...applyInputs(flags, args, settings.client.retryBaseMs), ...freshness(settings) };
  // With --format json, stdout is for machines: the plan and the question go to stderr.
  const human = flags.format === 'json' ? io.stderr : io.stdout;
  const pipeline = await openPipelineOutput(io, settings.ci);
  // Coloured or not as the stream the person reads is (stderr under --format json).
  const color = useColor(flags, settings.color, human);
  // Each format's view is loaded only when asked for: a text apply loads no NDJSON code.
  const view: ApplyView =
    flags.format === 'json'
      ? (await import('./views/ndjson-apply-view.js')).createNdjsonApplyView({ out: io.stdout, err: io.stderr, review: !flags.autoApprove, color, frame: pipeline.frame, ...(inputs.planFile === undefined ? {} : { planFile: inputs.planFile }) })
      : (await import('./views/text-apply-view.js')).createTextApplyView({
          out: io.stdout,
          err: io.stderr,
          color,
          now: io.now,
          frame: pipeline.frame,
          ...(progressIntervalMs === undefined ? {} : { progressIntervalMs }),
        });

  // Checked before anything is read: a report path that cannot be written stops nothing half-way.
  const recording = await RunRecording.open({ cwd: io.cwd, now: io.now, pages: flags.report ?? [], timeline: settings.ci.githubStepSummary !== undefined, baseUrl: settings.connection.baseUrl });
  const deps = {
    cwd: io.cwd,
    configVariables: settings.config,
    checkout: jobCheckout(settings.ci),
    now: io.now,
    signal: io.signal,
    openClient: clientOpener({ ...settings, parallelism: flags.parallelism }, io),
    confirmation: flags.input === 'false' ? { unavailable: 'input is turned off (-input=false)' } : confirmationFor(io, human),
    stateSettings: settings.state,
    network: settings.network,
  };
  let outcome: ApplyOutcome;
  try {
    outcome = await runApply(inputs, deps, recording.watch(withApplyPipeline(view, pipeline, human, () => recording.timeline())));
  } catch (error) {
    await recording.finish({ error }, (message) => io.stderr.write(`Warning: ${message}\n`));
    throw error;
  }
  if (outcome.kind === 'applied' && outcome.halted) io.stderr.write(formatError(outcome.halted));
  await recording.finish({ outcome }, () => undefined);
  return exitCodeFor(outcome);
}

/** The flags as the flow takes them. A saved plan fixes its own files, targets and shard. */
export function applyInputs(flags: ApplyFlags, args: readonly string[], backoffBaseMs?: number): ApplyInputs {
  const planFile = args[0];
  if (planFile !== undefined && ((flags.file?.length ?? 0) > 0 || (flags.target?.length ?? 0) > 0 || flags.shard !== undefined)) {
    throw new UsageError('A saved plan already fixes the files, targets and shard it covers: drop -f, --target and --shard when applying PLANFILE.');
  }
  if (planFile !== undefined && flags.expectDigest !== undefined) {
    throw new UsageError('A saved plan is applied exactly as it was saved: drop --expect-digest when applying PLANFILE (it is for a fresh plan).');
  }
  if (flags.reviewed !== undefined && flags.expectDigest === undefined) {
    throw new UsageError('--reviewed says what differs from the plan named by --expect-digest: give --expect-digest too.');
  }
  return {
    ...(planFile === undefined ? {} : { planFile }),
    selection: { files: flags.file ?? [], targets: flags.target ?? [], ...(flags.shard === undefined ? {} : { shard: flags.shard }) },
    ...(flags.state === undefined ? {} : { state: flags.state }),
    parallelism: flags.parallelism,
    ...(flags.maxChanges === undefined ? {} : { maxChanges: flags.maxChanges }),
    autoApprove: flags.autoApprove === true,
    ...(flags.expectDigest === undefined ? {} : { expectDigest: flags.expectDigest }),
    ...(flags.reviewed === undefined ? {} : { reviewedFile: flags.reviewed }),
    ...(backoffBaseMs === undefined ? {} : { backoffBaseMs }),
  };
}

/**
 * 0 when every change was applied or there was nothing to do; 1 when anything failed, was stale,
 * was left undone or the answer was not yes. A refusal is an error (main prints it and exits 1).
 */
export function exitCodeFor(outcome: ApplyOutcome): ExitCode {
  switch (outcome.kind) {
    case 'refused':
      throw refusalError(outcome.refusal, outcome.planFile);
    case 'cancelled':
      return 1;
    case 'applied': {
      const s = outcome.summary;
      return s.failed > 0 || s.stale > 0 || s.interrupted || s.notStarted > 0 ? 1 : 0;
    }
    default: {
      const unreachable: never = outcome;
      throw new Error(`unknown apply outcome ${JSON.stringify(unreachable)}`);
    }
  }
}

/**
 * ORGFORM_READ_MAX_AGE_MS (0 to 60,000, as cli/settings-table.ts says; default 5,000): the oldest
 * read a billing write may be built from (a read older than a minute is not fresh); 0 reads each
 * organisation by id just before its write. ORGFORM_PLAN_KEY: saved plans must be signed with it
 * (plan --out signs them).
 */
export function freshness(settings: Pick<ApplySettings, 'apply' | 'planKey'>): Pick<ApplyInputs, 'maxReadAgeMs' | 'planKey'> {
  const { readMaxAgeMs } = settings.apply;
  const planKey = settings.planKey;
  return { ...(readMaxAgeMs === undefined ? {} : { maxReadAgeMs: readMaxAgeMs }), ...(planKey === undefined ? {} : { planKey }) };
}

/** Someone at a terminal, who sees the question and can type: only then can apply ask. */
export function confirmationFor(io: CliIO, human: OutputStream): Confirmation {
  if (io.stdin.isTTY !== true || human.isTTY !== true) {
    return { unavailable: io.stdin.isTTY === true ? 'the question would not reach a terminal (output is redirected)' : 'standard input is not a terminal' };
  }
  return { ask: async (changes) => (await readAnswer(confirmQuestion(changes), io, human)) === 'yes' };
}

/** Asks one question on the terminal and resolves with the answer (or '' if input ends or apply is interrupted). */
export function readAnswer(question: string, io: CliIO, output: OutputStream = io.stdout): Promise<string> {
  // Interrupted before the question (e.g. while the plan was read): 'abort' will not fire again.
  if (io.signal.aborted) return Promise.resolve('');
  return new Promise((resolvePromise) => {
    const rl = createInterface({ input: io.stdin, terminal: false });
    let settled = false;
    const settle = (answer: string) => {
      if (settled) return;
      settled = true;
      io.signal.removeEventListener('abort', onAbort);
      rl.close();
      resolvePromise(answer);
    };
    const onAbort = () => settle('');
    io.signal.addEventListener('abort', onAbort, { once: true });
    rl.once('close', () => settle(''));
    output.write(question);
    rl.once('line', (line) => settle(line.trim()));
  });
}
