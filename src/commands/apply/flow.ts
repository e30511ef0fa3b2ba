/**
 * `orgform apply`, start to finish, in the order it happens:
 *
 *   load → select → connect → lock → read → plan → check safety → confirm → apply (fresh reads) → report
 *
 * After approval nothing is written from the plan's read: billing is read again just before it is
 * written (executor/reread-listing.ts, executor/write-billing.ts). A saved plan's changes are derived again
 * from its desired state and what the service holds, and applied only if the file holds exactly those.
 *
 * The command (command.ts) has parsed the flags and built the view; this decides what happens and
 * hands the view to the client at Connect and to applyPlan, so that everything of the run (the
 * client's waits, retries and rate changes included) reaches it as events of one channel. A refusal
 * is data (nothing is written then); so is the outcome, which the command maps to an exit code.
 */
import { NotSentError } from '../../api/api-error.js';
import { stat } from 'node:fs/promises';
import { isDeepStrictEqual } from 'node:util';
import { dirname, resolve } from 'node:path';
import { applyPlan } from '../../executor/apply-plan.js';
import { organisationAddress } from '../../model/address.js';
import type { ApplyEvent, ApplySummary } from '../../executor/events.js';
import type { DesiredState } from '../../model/desired-state.js';
import { ConfigError, OrgformError } from '../../errors.js';
import { chooseRereadMode, DEFAULT_READ_MAX_AGE_MS, type RereadMode } from '../../executor/reread-listing.js';
import { findChangedFiles, findStale, matchSavedChanges } from '../../plan/find-stale.js';
import { isRecordedDone, journalInterest } from '../../plan/is-recorded-done.js';
import { parseShard } from '../../plan/select-organisations.js';
import type { SavedPlan } from '../../plan/saved-plan.js';
import { dropDisplays, type ApplicableChange, type Plan } from '../../plan/types.js';
import { DEFAULT_PAGE_SIZE, type OrganisationsClient } from '../../api/client.js';
import { journalKey } from '../../model/journal-key.js';
import type { ApplyView } from './view.js';
import type { LockEnvironment } from '../../state/lock-environment.js';
import type { NetworkSettings } from '../../transport/proxy-settings.js';
import type { StateSettings } from '../../state/state-settings.js';
import type { HeldState, StateBackend, StateJournal } from '../../state/state-backend.js';
import { checkPlanSafety, type SafetyLimits } from '../../plan/check-plan-safety.js';
import { readReviewedPlan } from '../../plan/read/read-reviewed-plan.js';
import { hashFiles } from './hash-files.js';
import { loadDesiredState, type FileWorld, type Selection } from '../../plan/read/load-desired-state.js';
import { makePlan } from '../../plan/read/make-plan.js';
import { ASSUMED_RPS, tokenExpiryWarning } from './views/token-expiry-warning.js';
import type { Refusal } from './views/refusal-error.js';
import { applyLockRequest, openStateFor } from '../../state/open-state-for.js';
import { readSavedPlan } from '../../plan/read/read-saved-plan.js';
import { serviceKeyOf, waitEvent, type ClientHooks, type OpenClient } from '../../api/connect/open-client.js';
import { tellIfSlow } from '../../api/wait-event.js';
import { stateWait } from '../../state/state-settings.js';

export interface ApplyInputs {
  /** A plan saved by `orgform plan --out`; without one, a fresh plan from the files. */
  planFile?: string;
  /** The files, --target and --shard (a saved plan fixes its own). */
  selection: Selection;
  /** --state: the journal's path or URL; else ORGFORM_STATE; else beside the first config file. */
  state?: string;
  parallelism: number;
  maxChanges?: number;
  autoApprove: boolean;
  /** First step of the re-reads inside a change (ORGFORM_RETRY_BASE_MS). */
  backoffBaseMs?: number;
  /** The oldest read a billing write may be built from (ORGFORM_READ_MAX_AGE_MS); default 5 s. */
  maxReadAgeMs?: number;
  /** ORGFORM_PLAN_KEY: a saved plan must be signed with it. */
  planKey?: string;
  /**
   * --expect-digest: the digest of the plan that was reviewed. The fresh plan is applied, without a
   * question, only when it is that plan (or has no changes at all); otherwise nothing is written.
   */
  expectDigest?: string;
  /** --reviewed: a file ending with the reviewed plan's marker, so that a refusal can say what differs. */
  reviewedFile?: string;
}

/** Who approves a fresh plan: someone at a terminal, or no one (and why not). */
export type Confirmation = { ask(changes: number): Promise<boolean> } | { unavailable: string };

export interface ApplyDeps extends FileWorld {
  now(): number;
  /** Aborted on SIGINT or SIGTERM: nothing new starts, what is in flight finishes. */
  signal: AbortSignal;
  openClient: OpenClient;
  confirmation: Confirmation;
  /** Waits inside a change (a membership that takes a moment to show); injected in tests. */
  sleep?(ms: number): Promise<void>;
  lockEnvironment?: LockEnvironment;
  /** ORGFORM_STATE and a remote state's batches and timeouts (ORGFORM_STATE_*), as the CLI read them. */
  stateSettings?: StateSettings;
  /** The proxies and certificate authority an HTTP state is reached through. */
  network?: NetworkSettings;
}

export type ApplyOutcome =
  | { kind: 'applied'; summary: ApplySummary; halted?: OrgformError }
  | { kind: 'cancelled' }
  | { kind: 'refused'; refusal: Refusal; planFile?: string };

export async function runApply(inputs: ApplyInputs, deps: ApplyDeps, view: ApplyView): Promise<ApplyOutcome> {
  // Never wait for an answer that cannot come: refuse before anything is read.
  if (inputs.planFile === undefined && !inputs.autoApprove && inputs.expectDigest === undefined && 'unavailable' in deps.confirmation) {
    return refused(inputs, { kind: 'cannot-confirm', why: deps.confirmation.unavailable });
  }

  // Load, connect, lock, read, plan, check safety, confirm: its own function, so that what only
  // they need (the desired state, the plan's display) can be collected while the changes run; at
  // 100,000 organisations that is most of the memory. applyPlan then lets each change go as it ends.
  // When the run cannot go on (the client halts, the lock is lost), nothing new starts and the
  // outcome says why.
  const halt = new Halt();
  const prepared = await prepare(inputs, deps, view, halt).catch((err: unknown) => {
    if (deps.signal.aborted && err instanceof NotSentError) return undefined;
    throw err;
  });
  // Interrupted while reading: the reads not yet sent were not sent (so the plan may have been
  // refused as incomplete), and nothing was written.
  if (prepared === undefined || (deps.signal.aborted && 'kind' in prepared && prepared.kind === 'refused')) {
    view.cancelled();
    return { kind: 'cancelled' };
  }
  if (!('changes' in prepared)) return prepared;
  const { client, state, lock, journal, serviceKey, changes, rereadMode, activeFrom } = prepared;
  try {
    // Apply: every change, in order within each organisation; every event to the view, which has
    // heard the client since Connect.
    view.applyStarting(client, { changes, serviceKey });
    let summary: ApplySummary;
    try {
      summary = await applyPlan(changes, {
        client,
        journal,
        serviceKey,
        parallelism: inputs.parallelism,
        signal: AbortSignal.any([deps.signal, halt.signal]),
        onEvent: view.event.bind(view),
        now: deps.now,
        ...(deps.sleep === undefined ? {} : { sleep: deps.sleep }),
        ...(inputs.backoffBaseMs === undefined ? {} : { backoffBaseMs: inputs.backoffBaseMs }),
        rereadMode,
        maxReadAgeMs: maxReadAge(inputs),
        activeFrom,
      });
    } finally {
      view.applyStopped();
    }

    // Report, while the lock is still held: the journal is written by now.
    await view.applyReported(summary);
    return { kind: 'applied', summary, ...(halt.error === undefined ? {} : { halted: halt.error }) };
  } finally {
    // A lock that cannot be let go is said (it outlives the run); the client is closed all the same.
    try {
      await lock.release();
    } finally {
      await state.close();
      await client.close();
    }
  }
}

/** Why the run cannot go on, once something says so: the client (only 429s, a token command that fails part way) or a lost lock. */
class Halt {
  readonly #controller = new AbortController();
  readonly signal = this.#controller.signal;
  error: OrgformError | undefined;
  readonly stop = (error: OrgformError): void => {
    this.error ??= error;
    this.#controller.abort();
  };
}

function refused(inputs: ApplyInputs, refusal: Refusal): ApplyOutcome {
  return { kind: 'refused', refusal, ...(inputs.planFile === undefined ? {} : { planFile: inputs.planFile }) };
}

function maxReadAge(inputs: ApplyInputs): number {
  return inputs.maxReadAgeMs ?? DEFAULT_READ_MAX_AGE_MS;
}

/** Ready to apply: the client and the locked state, which the caller now releases, and the changes alone. */
interface Prepared {
  client: OrganisationsClient;
  state: StateBackend;
  lock: HeldState;
  journal: StateJournal;
  serviceKey: string;
  /** Handed over to applyPlan, which lets each go once it has ended. */
  changes: ApplicableChange[];
  /** How their billing is read again after approval. */
  rereadMode: RereadMode;
  /** The organisation active when the plan was read: the active organisation is set only while it still is. */
  activeFrom: string | null;
}

async function prepare(inputs: ApplyInputs, deps: ApplyDeps, view: ApplyView, halt: Halt): Promise<Prepared | ApplyOutcome> {
  // Load and select: a saved plan fixes both; otherwise the files, narrowed by --target and --shard.
  // With --expect-digest, the reviewed plan too: a file that is not the reviewed plan is refused now.
  const source = await load(inputs, deps, view);
  if ('kind' in source) return source;
  const expect = await expected(inputs, deps);

  // Connect: from here on the client tells the view itself (its waits while the plan is read too).
  const hooks: ClientHooks = { events: view, onHalt: halt.stop, ...(view.attempt === undefined ? {} : { onAttempt: view.attempt.bind(view) }) };
  const { client, tokenExpiry } = await deps.openClient(hooks);
  let state: StateBackend | undefined;
  let lock: HeldState | undefined;
  let handedOver = false;
  try {
    const serviceKey = serviceKeyOf(client);
    const { saved } = source;
    if (saved && saved.baseUrl !== serviceKey) return refused(inputs, { kind: 'other-service', madeFor: saved.baseUrl, serviceKey });

    // Lock: the whole state, or this shard's partition of it (refused, naming the holder, before
    // anything is written). A lock lost part way (a dropped connection, a broken lock) halts the run like a stall.
    state = await openStateFor(inputs.state, source.desired, deps, source.workdir);
    lock = await lockState(state, inputs, deps, view, source);
    // Through the hook the client was handed: one way to halt, whoever says so.
    lock.onLost((error) => hooks.onHalt?.(error));

    // Read and plan; check safety: stale, incomplete, over budget. Refused whole; nothing is written.
    const read = { client, journal: lock.journal, serviceKey };
    const made = saved ? await replanSaved(inputs, deps, source, saved, read) : await planFresh(inputs, source, read, view);
    if ('kind' in made) return made;
    const { plan, listed } = made;
    const safety = checkPlanSafety(plan, {
      staleReasons: made.staleReasons,
      ...(inputs.maxChanges === undefined ? {} : { maxChanges: inputs.maxChanges }),
      ...(expect === undefined ? {} : { expect }),
    });
    const hazard = safety.hazards[0];
    if (hazard !== undefined) {
      await view.planRefused?.(plan, hazard, source.selected);
      return refused(inputs, hazard);
    }

    // Confirm, when there is something to write: the budget, any warning, then the question
    // (a fresh plan only, unless --auto-approve: a saved plan was reviewed when it was made, and
    // one applied by its digest is the plan reviewed).
    if (plan.changes.length > 0) {
      if (safety.budget) view.budgetChecked(safety.budget);
      const warning =
        tokenExpiry === undefined
          ? undefined
          : tokenExpiryWarning({ expiresAt: tokenExpiry.expiresAt, now: deps.now(), changes: plan.changes.length, rps: client.rateStatus().rps ?? ASSUMED_RPS });
      if (warning !== undefined) view.warn(warning);
      if (!saved && !inputs.autoApprove && expect === undefined && !(await approve(deps.confirmation, plan.changes.length))) {
        view.cancelled();
        return { kind: 'cancelled' };
      }
    }
    // How billing is read again after approval: one listing streamed behind the writes, or each
    // organisation by id just before its write, whichever costs fewer requests.
    const rereadMode = chooseRereadMode({
      changes: plan.changes.filter((c) => c.kind === 'billing' && c.knownAfter === undefined).length,
      listed,
      parallelism: inputs.parallelism,
      rps: client.rateStatus().rps,
      maxReadAgeMs: maxReadAge(inputs),
      maxPageSize: DEFAULT_PAGE_SIZE,
    });
    handedOver = true;
    return { client, state, lock, journal: lock.journal, serviceKey, changes: dropDisplays(plan.changes), rereadMode, activeFrom: plan.observedActiveId };
  } finally {
    if (!handedOver) {
      try {
        await lock?.release();
      } finally {
        await state?.close();
        await client.close();
      }
    }
  }
}

/** --expect-digest, with the reviewed plan's essence when --reviewed names a file whose marker carries its record. */
async function expected(inputs: ApplyInputs, deps: ApplyDeps): Promise<SafetyLimits['expect']> {
  if (inputs.expectDigest === undefined) return undefined;
  const reviewed = inputs.reviewedFile === undefined ? undefined : await readReviewedPlan(inputs.reviewedFile, deps.cwd, inputs.expectDigest);
  return { digest: inputs.expectDigest, ...(reviewed === undefined ? {} : { reviewed }) };
}

/**
 * The state locked for this apply: its shard's partition (a saved plan's own shard), else the whole
 * state, with what the configuration may ask of it; a lock that takes a while is told as a wait, a
 * holder found gone (its process, its session) said.
 */
async function lockState(state: StateBackend, inputs: ApplyInputs, deps: ApplyDeps, view: ApplyView, source: Source): Promise<HeldState> {
  const lockAskedAt = deps.now();
  const shard = (source.saved ? source.saved.selection.shard : inputs.selection.shard) ?? undefined;
  const request = applyLockRequest(`orgform apply${inputs.planFile === undefined ? '' : ` ${inputs.planFile}`}`, shard === undefined ? undefined : parseShard(shard), deps);
  const lock = await tellIfSlow(
    state.lock(request, journalInterest(source.selected)),
    () => stateWait(`the lock on the state at ${state.location}`, lockAskedAt, deps.stateSettings),
    (wait) => view.event(waitEvent(wait)),
    deps.now,
  );
  for (const gone of lock.replaced) if (gone.pid !== undefined) view.lockTakenOver(state.location, gone.pid);
  return lock;
}

/** What the service is read into under the lock. */
interface PlanRead {
  client: OrganisationsClient;
  journal: StateJournal;
  serviceKey: string;
}

/** The plan to check, with why it is stale (a saved plan's) and how many organisations the listing held. */
interface Made {
  plan: Plan;
  staleReasons: string[];
  listed: number | undefined;
}

/** Read: the journal (read under the lock), then the service, planning as it is read. A fresh plan is shown for review. */
async function planFresh(inputs: ApplyInputs, source: Source, read: PlanRead, view: ApplyView): Promise<Made> {
  const made = await makePlan(source.selected, { ...read, parallelism: inputs.parallelism });
  await view.planMade(made.plan);
  return { plan: made.plan, staleReasons: [], listed: made.observed.listed };
}

/**
 * A saved plan is planned again from its own desired state: what it was based on must not have
 * changed (that is how staleness shows), and it must hold exactly the changes that gives.
 */
async function replanSaved(inputs: ApplyInputs, deps: ApplyDeps, source: Source, saved: SavedPlan, read: PlanRead): Promise<Made | ApplyOutcome> {
  const { journal, serviceKey } = read;
  const compared = new Set(Object.keys(saved.plan.observed));
  const made = await makePlan(source.selected, { ...read, parallelism: inputs.parallelism, keep: (slug) => compared.has(slug), ignoreJournal: true });
  let staleReasons = findStale(saved.plan, saved.configFiles, {
    organisations: made.observed.organisations,
    activeId: made.observed.activeId,
    problems: made.observed.problems,
    fileHashes: await hashFiles(saved.configFiles.map((f) => f.path), source.workdir),
    baseUrl: serviceKey,
  });
  // The files are as planned: the desired state the changes are derived from must be theirs.
  if (staleReasons.length === 0 && source.notOfFiles !== undefined && source.notOfFiles.length > 0) staleReasons = source.notOfFiles;
  // The plan's own test of the journal (plan/is-recorded-done.ts), as it is now.
  const isJournaled = (c: ApplicableChange) => isRecordedDone(c, (kind, id, target) => journal.has(serviceKey, journalKey(kind, id, target)));
  // The plan's word that a one-shot change was done counts only when orgform's key vouches for it.
  const match = matchSavedChanges(saved.plan.changes, made.plan.changes, isJournaled, saved.plan.journaled, { signed: saved.signature !== undefined });
  if (staleReasons.length === 0 && made.observed.problems.length === 0) {
    if (match.notDerived.length > 0) return refused(inputs, { kind: 'not-derived', changes: match.notDerived });
    staleReasons = match.missing;
  }
  // The derived changes drive apply, never the file's: they are the same, or nothing is applied.
  // The file's are let go (at 100,000 changes, a second plan held to the end).
  const plan = { ...saved.plan, changes: match.changes, problems: made.observed.problems };
  saved.plan.changes = [];
  return { plan, staleReasons, listed: made.observed.listed };
}

const NOT_OF_FILES =
  'the desired state the plan holds is not what its config files give now, with its selection: the plan file was edited, or a configuration variable (ORGFORM_VAR_…) has another value than when the plan was made (set it as the plan job did)';
/** At most this many organisations are named; the rest are counted. */
const NAMED_DIFFERENCES = 10;

/**
 * A saved plan's desired state as its config files give it now, with its selection, and whether the
 * plan holds that one. Apply derives the changes from the desired state, and anyone can recompute a
 * plan's checksum: taken from the file, an e-mail edited into both an organisation and its change
 * would be derived again, matched and written, and the state (its lock, its journal) placed where
 * the file's list of files says, outside the tree. So the state and the changes come from the
 * files (which must lie in the tree), and a plan that holds anything else is stale.
 */
async function loadSavedDesired(saved: SavedPlan, workdir: string, deps: ApplyDeps): Promise<{ desired: DesiredState; selected: DesiredState; notOfFiles: string[] } | { stale: string[] }> {
  const { shard } = saved.selection;
  const selection: Selection = { files: saved.configFiles.map((f) => f.path), targets: saved.selection.targets, ...(shard === null ? {} : { shard }) };
  try {
    const { desired, selected } = await loadDesiredState(selection, { ...deps, cwd: workdir });
    return { desired, selected, notOfFiles: findDesiredDifferences(selected, saved.desired) };
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    // Files that do not load are not the files planned: say which, as findStale would. Files as
    // planned that do not load lack what the job gave the plan (a configuration variable unset):
    // their problems say what, never a variable's value. Only then: a problem may quote a value of
    // the file, and an edited plan may name any file (its workdir places the tree), but one whose
    // SHA-256 it already holds tells nothing new.
    const changed = findChangedFiles(saved.configFiles, await hashFiles(selection.files, workdir));
    if (changed.length > 0) return { stale: changed };
    const problems = err.details.length > 0 ? err.details : [err.message];
    return { stale: problems.map((problem) => `the config files do not load now, as the plan job loaded them: ${problem}`) };
  }
}

/**
 * Where the files' desired state is not the one the plan holds, compared as the plan file holds it
 * (JSON: no field left undefined), one organisation at a time: the whole state as one text would
 * be as large as the plan's desired state, and pass V8's longest string at a few million. Each
 * organisation that differs is named (its slug, never a value: a variable's value is not shown).
 */
function findDesiredDifferences(fromFiles: DesiredState, held: DesiredState): string[] {
  const asHeld = (value: unknown): unknown => (value === undefined ? undefined : JSON.parse(JSON.stringify(value)));
  const { organisations, ...rest } = fromFiles;
  const { organisations: heldOrganisations, ...heldRest } = held;
  if (organisations.length !== heldOrganisations.length || !isDeepStrictEqual(asHeld(rest), heldRest)) return [NOT_OF_FILES];
  const differ: string[] = [];
  organisations.forEach((org, i) => {
    const other = heldOrganisations[i];
    if (other === undefined || other.slug !== org.slug) differ.push('');
    else if (!isDeepStrictEqual(asHeld(org), other)) differ.push(org.slug);
  });
  // Organisations in another order or of other slugs: the plan file was edited, nothing to name.
  if (differ.includes('')) return [NOT_OF_FILES];
  const named = differ.slice(0, NAMED_DIFFERENCES).map((slug) => `${organisationAddress(slug)}: ${NOT_OF_FILES}`);
  const more = differ.length - named.length;
  return more > 0 ? [...named, `and ${more} more organisation${more === 1 ? '' : 's'}`] : named;
}

interface Source {
  saved?: SavedPlan;
  /** The whole desired state (the journal's place follows its first file). */
  desired: DesiredState;
  /** What this apply covers. */
  selected: DesiredState;
  /** Where the config files' paths start: the directory plan ran in, for a saved plan. */
  workdir: string;
  /** Where a saved plan's desired state is not the one its config files give now (edited, or a variable changed); none when it is. */
  notOfFiles?: string[];
}

async function load(inputs: ApplyInputs, deps: ApplyDeps, view: ApplyView): Promise<Source | ApplyOutcome> {
  if (inputs.planFile !== undefined) {
    const saved = await readSavedPlan(inputs.planFile, deps.cwd, inputs.planKey);
    const workdir = await savedWorkdir(saved, inputs.planFile, deps.cwd);
    const files = await loadSavedDesired(saved, workdir, deps);
    if ('stale' in files) {
      // Told as a stale plan under the lock is (a `refused` line for machines), before any connection.
      const hazard = { kind: 'stale', changed: files.stale } as const;
      await view.planRefused?.(saved.plan, hazard, saved.desired);
      return refused(inputs, hazard);
    }
    // The same state: one copy is kept (the plan's), the files' let go. At 100,000 organisations
    // a second desired state held to the end is a fifth of apply's memory.
    if (files.notOfFiles.length === 0) return { saved, desired: saved.desired, selected: saved.desired, workdir, notOfFiles: [] };
    return { saved, ...files, workdir };
  }
  try {
    return { ...(await loadDesiredState(inputs.selection, deps)), workdir: deps.cwd };
  } catch (err) {
    if (err instanceof ConfigError) await view.configRejected?.(err.problems);
    throw err;
  }
}

/**
 * Where a saved plan's relative paths start: the directory plan ran in, found from the plan file's
 * place (its `workdir`), so that apply runs from anywhere in the checkout or outside it. Where the
 * files cannot all be read there (the plan file was moved on its own) but can from here, here:
 * the hashes still decide whether they are the files planned.
 */
async function savedWorkdir(saved: SavedPlan, planFile: string, cwd: string): Promise<string> {
  if (saved.workdir === undefined) return cwd;
  const recorded = resolve(dirname(resolve(cwd, planFile)), saved.workdir);
  if (recorded === cwd) return cwd;
  // Whether the files are there is all this asks: they are read, and hashed, once, under the lock.
  const present = async (dir: string) => (await Promise.all(saved.configFiles.map((f) => isRegularFile(resolve(dir, f.path))))).every(Boolean);
  return (await present(recorded)) || !(await present(cwd)) ? recorded : cwd;
}

async function isRegularFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

async function approve(confirmation: Confirmation, changes: number): Promise<boolean> {
  return 'ask' in confirmation ? confirmation.ask(changes) : false;
}
