/**
 * `orgform plan`: read the current state, compute the difference, show it. Never writes to the service.
 */
import { resolve } from 'node:path';
import { summarisePlan, type Plan } from '../../plan/types.js';
import { checkChangeBudget, describeChangeBudget } from '../../plan/check-change-budget.js';
import { SAVED_PLAN_VERSION, serializeSavedPlan } from '../../plan/saved-plan.js';
import { Journal } from '../../state/journal.js';
import { writeFileAtomically } from '../write-file-atomically.js';
import { loadDesiredState, openClient, serviceKey, statePathFor, useColor } from '../command-context.js';
import { ConfigError } from '../../errors.js';
import type { CliIO, ExitCode } from '../io.js';
import type { ReportSpec } from '../pipeline-output.js';

export interface PlanFlags {
  file?: string[];
  baseUrl?: string;
  tokenFile?: string;
  token?: string;
  parallelism: number;
  format: 'text' | 'json' | 'markdown';
  out?: string;
  state?: string;
  target?: string[];
  shard?: string;
  detailedExitcode?: boolean;
  maxChanges?: number;
  color?: boolean;
  report?: ReportSpec[];
}

export async function renderPlan(plan: Plan, format: PlanFlags['format'], color: boolean): Promise<string> {
  switch (format) {
    case 'json':
      return (await import('../../render/render-json.js')).renderJson(plan);
    case 'markdown':
      return (await import('../../render/render-markdown.js')).renderMarkdown(plan);
    case 'text':
      return (await import('../../render/render-text.js')).renderText(plan, { color });
    default: {
      const unreachable: never = format;
      throw new Error(`unknown format ${String(unreachable)}`);
    }
  }
}

export async function run(flags: PlanFlags, io: CliIO): Promise<ExitCode> {
  const { openPipelineOutput, writeReports } = await import('../pipeline-output.js');
  const pipeline = await openPipelineOutput(io);
  const reports = flags.report ?? [];
  // The log's stream: stdout holds the plan itself for json and markdown.
  const log = flags.format === 'text' ? io.stdout : io.stderr;
  const { desired, selected } = await loadDesiredState(flags, io).catch(async (err: unknown) => {
    if (err instanceof ConfigError && err.problems.length > 0) {
      const findings = (await import('../../render/findings.js')).configFindings(err.problems);
      await pipeline.annotate(findings, log);
      await writeReports(reports, { findings, defaultFile: flags.file?.[0] ?? 'orgs.yaml' }, io);
    }
    throw err;
  });
  const client = await openClient(flags, io);
  try {
    const statePath = statePathFor(flags, desired, io);
    const journal = await Journal.read(statePath);
    const service = serviceKey(client);
    const { makePlan } = await import('../../plan/make-plan.js');
    const { plan } = await makePlan(selected, { client, journal, service, parallelism: flags.parallelism });

    const rendered = await renderPlan(plan, flags.format, useColor(flags, io));
    io.stdout.write(flags.format === 'text' ? await pipeline.planSection(plan, rendered) : rendered);
    if (flags.maxChanges !== undefined && flags.format === 'text') io.stdout.write(describeChangeBudget(plan, flags.maxChanges));
    if (flags.out !== undefined) {
      const out = resolve(io.cwd, flags.out);
      await writeFileAtomically(
        out,
        serializeSavedPlan({
          orgformSavedPlan: SAVED_PLAN_VERSION,
          createdAt: new Date(io.now()).toISOString(),
          baseUrl: service,
          configFiles: selected.files,
          desired: selected,
          selection: { targets: flags.target ?? [], shard: flags.shard ?? null },
          plan,
        }),
        flags.out,
      );
      io.stderr.write(`Saved the plan to ${flags.out}. Apply exactly these changes with: orgform apply ${flags.out}\n`);
    }
    const findings = (await import('../../render/findings.js')).planFindings(plan, selected);
    await pipeline.annotate(findings, log);
    await pipeline.appendStepSummary(async () => (await import('../../render/render-step-summary.js')).renderPlanStepSummary(plan), log);
    await writeReports(reports, { findings, plan, defaultFile: selected.files[0]?.path ?? 'orgs.yaml' }, io);
    const summary = summarisePlan(plan);
    const overBudget = checkChangeBudget(plan, flags.maxChanges);
    if (overBudget) io.stderr.write(`Error: ${overBudget.message.replace(' Nothing was changed.', '')}\n`);
    if (summary.problems > 0 || overBudget) return 1;
    if (flags.detailedExitcode && plan.changes.length > 0) return 2;
    return 0;
  } finally {
    await client.close();
  }
}
