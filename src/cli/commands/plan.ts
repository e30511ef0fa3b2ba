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
import type { CliIO, ExitCode } from '../io.js';

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
  const { desired, selected } = await loadDesiredState(flags, io);
  const client = await openClient(flags, io);
  try {
    const statePath = statePathFor(flags, desired, io);
    const journal = await Journal.read(statePath);
    const service = serviceKey(client);
    const { makePlan } = await import('../../plan/make-plan.js');
    const { plan } = await makePlan(selected, { client, journal, service, parallelism: flags.parallelism });

    io.stdout.write(await renderPlan(plan, flags.format, useColor(flags, io)));
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
