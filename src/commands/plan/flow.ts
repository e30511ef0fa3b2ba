/**
 * `orgform plan`, start to finish, in the order it happens:
 *
 *   load → select → connect → read → plan → check safety → show → save → report
 *
 * Never writes to the service, and takes no lock (it only reads the journal). The command
 * (command.ts) has parsed the flags and built the view; the outcome is data, which the
 * command maps to an exit code.
 */
import { dirname, relative, resolve, sep } from 'node:path';
import type { DesiredState } from '../../model/desired-state.js';
import { ConfigError } from '../../errors.js';
import { SAVED_PLAN_VERSION, streamSavedPlan } from '../../plan/saved-plan.js';
import { ObservationSpool } from './observation-spool.js';
import type { Plan } from '../../plan/types.js';
import { digestPlan } from '../../plan/plan-digest.js';
import type { PlanView } from './view.js';
import type { NetworkSettings } from '../../transport/proxy-settings.js';
import type { StateSettings } from '../../state/state-settings.js';
import { writeFileAtomically } from '../../state/write-file-atomically.js';
import { findWorkTree } from '../../work-tree.js';
import { checkPlanSafety, type PlanHazard } from '../../plan/check-plan-safety.js';
import { checkPlanOut } from './check-plan-out.js';
import { loadDesiredState, type FileWorld, type Selection } from '../../plan/read/load-desired-state.js';
import { makePlan } from '../../plan/read/make-plan.js';
import { openStateFor } from '../../state/open-state-for.js';
import { serviceKeyOf, waitEvent, type OpenClient } from '../../api/connect/open-client.js';
import { tellIfSlow } from '../../api/wait-event.js';
import { stateWait } from '../../state/state-settings.js';
import type { Interest, JournalIndex, StateBackend } from '../../state/state-backend.js';
import { journalInterest } from '../../plan/is-recorded-done.js';

export interface PlanInputs {
  selection: Selection;
  /** --state: the journal's path or URL; else ORGFORM_STATE; else beside the first config file. */
  state?: string;
  parallelism: number;
  maxChanges?: number;
  /** --out: save the plan here for `orgform apply FILE` (a path as given, relative to cwd). */
  out?: string;
  /** --force: --out may replace a file that is not an orgform plan. */
  force?: boolean;
  /** ORGFORM_PLAN_KEY: the saved plan is signed with it. */
  planKey?: string;
}

export interface PlanDeps extends FileWorld {
  now(): number;
  openClient: OpenClient;
  /** ORGFORM_STATE and a remote state's timeouts (ORGFORM_STATE_TIMEOUT_MS), as the CLI read them. */
  stateSettings?: StateSettings;
  /** The proxies and certificate authority an HTTP state is reached through. */
  network?: NetworkSettings;
}

export interface PlanOutcome {
  plan: Plan;
  /** What stands in the way of applying it (problems, over budget); empty when apply could go ahead. */
  hazards: PlanHazard[];
}

export async function runPlan(inputs: PlanInputs, deps: PlanDeps, view: PlanView): Promise<PlanOutcome> {
  // Load and select.
  let desired: DesiredState;
  let selected: DesiredState;
  try {
    ({ desired, selected } = await loadDesiredState(inputs.selection, deps));
  } catch (err) {
    if (err instanceof ConfigError) await view.configRejected?.(err.problems);
    throw err;
  }

  // Where the plan will be saved, checked before anything is read: a file that is not a plan is
  // replaced only with --force.
  const out = inputs.out === undefined ? undefined : { path: resolve(deps.cwd, inputs.out), shown: inputs.out, option: '--out', tree: await findWorkTree(deps.cwd) };
  if (out !== undefined) await checkPlanOut(out.path, out.shown, { force: inputs.force === true, tree: out.tree });

  // Connect: from here on the client tells the view itself, as the state's read does.
  const { client } = await deps.openClient({ events: view });
  // A saved plan's observations go to disk as they are planned, not into the plan.
  let spool: ObservationSpool | undefined;
  try {
    if (out !== undefined) spool = await ObservationSpool.open(out.path, out);
    // Read: the journal (one-shot changes already done are not planned again), then the service.
    // A state that cannot be read fails the plan: without it, every one-shot change would show again.
    const journal = await readState(openStateFor(inputs.state, desired, deps), journalInterest(selected), deps, view);
    const serviceKey = serviceKeyOf(client);
    const { plan } = await makePlan(selected, {
      client,
      journal,
      serviceKey,
      parallelism: inputs.parallelism,
      saving: spool !== undefined,
      ...(spool === undefined ? {} : { observationSink: spool.write }),
    });

    // Check safety and show: the plan, and the budget when one was given.
    const safety = checkPlanSafety(plan, inputs.maxChanges === undefined ? {} : { maxChanges: inputs.maxChanges });
    await view.planMade(plan, safety);

    // Save exactly this plan, with what it was based on, for `orgform apply FILE`.
    if (out !== undefined && spool !== undefined) {
      const lines = streamSavedPlan({
        orgformSavedPlan: SAVED_PLAN_VERSION,
        createdAt: new Date(deps.now()).toISOString(),
        baseUrl: serviceKey,
        configFiles: selected.files,
        workdir: relative(dirname(out.path), deps.cwd).split(sep).join('/') || '.',
        desired: selected,
        selection: { targets: [...(inputs.selection.targets ?? [])], shard: inputs.selection.shard ?? null },
        plan,
        digest: digestPlan(plan),
      }, spool.lines(), inputs.planKey);
      // Again: a file may have appeared there while the service was read.
      await checkPlanOut(out.path, out.shown, { force: inputs.force === true, tree: out.tree });
      // Written a line at a time as it is made: a saved plan of 500,000 changes is never one string.
      await writeFileAtomically(out.path, lines, out);
      view.planSaved(out.shown);
    }

    // Report.
    await view.planChecked(plan, safety.hazards, selected);
    return { plan, hazards: safety.hazards };
  } finally {
    await spool?.remove();
    await client.close();
  }
}

/** What the plan may ask of the state (`interest`), opened and read, told as a wait once it takes 2 s (a remote state that is slow to answer). */
async function readState(opening: Promise<StateBackend>, interest: Interest, deps: PlanDeps, view: PlanView): Promise<JournalIndex> {
  const startedAt = deps.now();
  let location = 'the state';
  const reading = opening.then(async (state) => {
    location = `the state at ${state.location}`;
    try {
      return await state.readIndex(interest);
    } finally {
      await state.close();
    }
  });
  return tellIfSlow(reading, () => stateWait(location, startedAt, deps.stateSettings), (wait) => view.event(waitEvent(wait)), deps.now);
}
