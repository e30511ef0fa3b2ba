/**
 * `orgform plan`: read the current state, compute the difference, show it. Never writes to the service.
 */
import { writeFile, rename, mkdir, unlink } from 'node:fs/promises';
import { UsageError } from '../../errors.js';
import { dirname, resolve } from 'node:path';
import { summarisePlan, type Plan } from '../../plan/types.js';
import { checkChangeBudget, describeChangeBudget } from '../../plan/check-change-budget.js';
import { serializeSavedPlan } from '../../plan/saved-plan.js';
import { Journal } from '../../state/journal.js';
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

/** Writes beside the target and renames, so that a reader never sees half a plan. */
export async function writeFileAtomically(path: string, text: string, shown: string = path): Promise<void> {
  const temp = `${path}.${process.pid}.tmp`;
  try {
    await mkdir(dirname(path), { recursive: true });
    await writeFile(temp, text, { encoding: 'utf8', mode: 0o600 });
    await rename(temp, path);
  } catch (err) {
    await unlink(temp).catch(() => undefined);
    // An unwritable path is the user's to fix, not a bug: say which and what to do.
    throw new UsageError(`Cannot write ${shown}: ${(err as Error).message}. Check that its directory can be created and written, or choose another --out.`, { cause: err });
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
          orgformSavedPlan: 1,
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
