/**
 * `orgform plan`: parses the flags, builds the view and runs the flow (flow.ts),
 * then maps the outcome to an exit code. Never writes to the service.
 */
import { runPlan, type PlanInputs, type PlanOutcome } from './flow.js';
import { planKeyOutsidePullRequests } from '../../ci/pull-request-job.js';
import { createPlanView } from './view.js';
import { clientOpener } from '../../api/connect/open-client.js';
import { useColor } from '../../text/use-color.js';
import type { CliIO, ExitCode } from '../../cli-io.js';
import { openPipelineOutput, type ReportSpec } from '../../ci/pipeline-output.js';
import { withPlanPipeline } from './views/ci-plan-view.js';
import { stateSettings } from '../../state/state-settings.js';

import type { ConnectionFlags } from '../../api/connect/resolve-connection.js';

export interface PlanFlags extends ConnectionFlags {
  file?: string[];
  parallelism: number;
  format: 'text' | 'json' | 'markdown';
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

export async function run(flags: PlanFlags, io: CliIO): Promise<ExitCode> {
  const pipeline = await openPipelineOutput(io);
  const view = withPlanPipeline(createPlanView({ format: flags.format, out: io.stdout, err: io.stderr, color: useColor(flags, io), frame: pipeline.frame }), pipeline, io, {
    // The log's stream: stdout holds the plan itself for json and markdown.
    log: flags.format === 'text' ? io.stdout : io.stderr,
    reports: flags.report ?? [],
    files: flags.file ?? [],
  });
  const planKey = planKeyOutsidePullRequests(io.env);
  const inputs = { ...planInputs(flags), ...(planKey === undefined ? {} : { planKey }) };
  const outcome = await runPlan(inputs, { cwd: io.cwd, env: io.env, now: io.now, openClient: clientOpener(flags, io), stateSettings: stateSettings(io) }, view);
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
