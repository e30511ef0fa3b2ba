/**
 * `orgform plan`: parses the flags, builds the view and runs the flow (flow.ts),
 * then maps the outcome to an exit code. Never writes to the service.
 */
import { runPlan, type PlanInputs, type PlanOutcome } from './flow.js';
import { commentOptions, createPlanView, type PlanFormat } from './view.js';
import { clientOpener, type OpenClientSettings } from '../../api/connect/open-client.js';
import { useColor, type ColorSettings } from '../../text/ansi.js';
import type { CliIO, ExitCode } from '../../cli-io.js';
import { jobCheckout, type CiSettings } from '../../ci/ci-settings.js';
import { openPipelineOutput, type ReportSpec } from '../../ci/pipeline-output.js';
import type { ConfigVariables } from '../../config/interpolate.js';
import { withPlanPipeline } from './views/ci-plan-view.js';
import type { StateSettings } from '../../state/state-settings.js';

import type { ConnectionFlags } from '../../api/connect/resolve-connection.js';

export interface PlanFlags extends ConnectionFlags {
  file?: string[];
  parallelism: number;
  format: PlanFormat;
  /** --page-url: where the plan page will be, for the Markdown comment's links. */
  pageUrl?: string;
  out?: string;
  force?: boolean;
  state?: string;
  target?: string[];
  shard?: string;
  detailedExitcode?: boolean;
  maxChanges?: number;
  color?: boolean;
  report?: ReportSpec[];
}

/** The settings plan reads (cli/settings.ts): where to connect and how, the plan key, the state, the files' variables. */
export interface PlanSettings extends Omit<OpenClientSettings, 'parallelism'> {
  color: ColorSettings;
  ci: CiSettings;
  planKey: string | undefined;
  state: StateSettings;
  config: ConfigVariables;
}

export async function run(flags: PlanFlags, io: CliIO, _args: string[], settings: PlanSettings): Promise<ExitCode> {
  const comment = commentOptions(flags, settings.ci);
  const pipeline = await openPipelineOutput(io, settings.ci);
  const view = withPlanPipeline(createPlanView({ format: flags.format, out: io.stdout, err: io.stderr, color: useColor(flags, settings.color, io.stdout), frame: pipeline.frame, comment }), pipeline, {
    // The log's stream: stdout holds the plan itself for json, markdown and html.
    log: flags.format === 'text' ? io.stdout : io.stderr,
    reports: flags.report ?? [],
    files: flags.file ?? [],
    ...(comment.pageUrl === undefined ? {} : { pageUrl: comment.pageUrl }),
  });
  const planKey = settings.planKey;
  const inputs = { ...planInputs(flags), ...(planKey === undefined ? {} : { planKey }) };
  const deps = { cwd: io.cwd, configVariables: settings.config, checkout: jobCheckout(settings.ci), now: io.now, stateSettings: settings.state, network: settings.network };
  const outcome = await runPlan(inputs, { ...deps, openClient: clientOpener({ ...settings, parallelism: flags.parallelism }, io) }, view);
  return exitCodeFor(outcome, flags);
}

export function planInputs(flags: PlanFlags): PlanInputs {
  return {
    selection: { files: flags.file ?? [], targets: flags.target ?? [], ...(flags.shard === undefined ? {} : { shard: flags.shard }) },
    ...(flags.state === undefined ? {} : { state: flags.state }),
    parallelism: flags.parallelism,
    ...(flags.maxChanges === undefined ? {} : { maxChanges: flags.maxChanges }),
    ...(flags.out === undefined ? {} : { out: flags.out }),
    ...(flags.force === true ? { force: true } : {}),
  };
}

/** 1 when the plan is incomplete or over budget; with --detailed-exitcode, 2 when it has changes; else 0. */
export function exitCodeFor(outcome: PlanOutcome, flags: Pick<PlanFlags, 'detailedExitcode'>): ExitCode {
  if (outcome.hazards.length > 0) return 1;
  if (flags.detailedExitcode && outcome.plan.changes.length > 0) return 2;
  return 0;
}
