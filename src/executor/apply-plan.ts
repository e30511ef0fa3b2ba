/**
 * Applies a plan: organisations in parallel (bounded), each organisation's changes in order
 * (accepts, each tried on its own, then billing, revocations, channel removals: see
 * run-organisation-changes.ts), the active organisation last, after its own organisation's changes.
 * A failure skips only what depends on it. Revocations and channel removals are recorded in the
 * journal as soon as they complete (the file writes each at once, a remote state in batches), and
 * one the journal records done is not sent again. On interrupt, nothing new starts and what is in
 * flight finishes.
 *
 * Billing is written from what the service holds just before the write, never from the plan's read:
 * with `freshReads` of kind listing, an organisation whose billing changes starts only once the
 * listing streamed behind the writes (fresh-listing.ts) has read it again; otherwise its billing is
 * read by id just before the write (execute-change.ts).
 */
import { ApiError, NotSentError } from '../api/api-error.js';
import type { OrganisationsClient } from '../api/client.js';
import { isRecordedDone, JOURNALED_KINDS, type IsJournaled } from '../plan/is-recorded-done.js';
import type { ApplicableChange } from '../plan/types.js';
import { journalKey } from '../model/journal-key.js';
import type { StateJournal } from '../state/state-backend.js';
import { CHANGED_LISTED, type ApplyListener, type ApplySummary, type ChangeFailure, type ChangeResult, type Outcome } from './events.js';
import { ChangeFailedError, executeChange, sendWindowMs, type FreshRead } from './execute-change.js';
import { FreshListing, lowWaterMark, workersAtRate, type FreshReads } from './fresh-listing.js';
import { runOrganisationChanges, type Decided, type OrganisationChange, type RunChange } from './run-organisation-changes.js';

export interface ApplyOptions {
  client: OrganisationsClient;
  journal: StateJournal;
  /** The journal's key for this service (its base URL). */
  serviceKey: string;
  parallelism: number;
  signal?: AbortSignal;
  onEvent?: ApplyListener;
  now?: () => number;
  /** Waits between re-reads inside a change (a membership that takes a moment to show); injected in tests. */
  sleep?: (ms: number) => Promise<void>;
  /** First step of those waits, doubling; the retry policy's base (ORGFORM_RETRY_BASE_MS). */
  backoffBaseMs?: number;
  /** How billing is read again before it is written (default: each organisation by id, just before). */
  freshReads?: FreshReads;
  /** A read older than this is read again by id before a write is built from it (ORGFORM_READ_MAX_AGE_MS). */
  maxReadAgeMs?: number;
}

/** Outcomes as the codes `applyPlan` keeps per change (0: not ended yet). */
const OUTCOMES: readonly Outcome[] = ['applied', 'already-done', 'skipped', 'not-started', 'stale', 'failed'];
const APPLIED = 1 + OUTCOMES.indexOf('applied');

function describeFailure(err: unknown): ChangeFailure {
  const underlying = err instanceof ChangeFailedError ? err.underlying : err;
  const operation = err instanceof ChangeFailedError ? err.operation : ((underlying as { operation?: string }).operation ?? 'unknown');
  const message = err instanceof Error ? err.message : String(err);
  if (underlying instanceof ApiError) {
    // A ChangeFailedError explains, after the service's error, why it is a failure.
    const explanation =
      err instanceof ChangeFailedError && message.startsWith(`${underlying.message}; `) ? message.slice(underlying.message.length + 2) : undefined;
    const note = [underlying.hint, explanation].filter((n): n is string => n !== undefined && n !== '').join('; ');
    return {
      operation,
      message,
      status: underlying.status,
      serviceCode: underlying.serviceCode,
      serviceMessage: underlying.serviceMessage,
      serviceCause: underlying.serviceCause,
      ...(note === '' ? {} : { note }),
    };
  }
  return { operation, message };
}

/**
 * Journal entries of changes done on the service, until each is durable: a change ends (its event,
 * its count in the summary) only then, as recorded or as done but not recorded.
 */
class PendingRecords {
  private readonly waiting = new Set<Promise<void>>();

  /** Resolves once the change has ended, either way. */
  add(record: Promise<void>, then: { recorded(): void; failed(message: string, cause: string | undefined): void }): Promise<void> {
    const ended = record.then(then.recorded, (err: unknown) => {
      const message = (err instanceof Error ? err.message : String(err)).replace(/\.$/, '');
      // The changes not started say only the system's reason (the failure has the path and what to do).
      then.failed(message, err instanceof Error && err.cause instanceof Error ? err.cause.message : undefined);
    });
    this.waiting.add(ended);
    void ended.finally(() => this.waiting.delete(ended));
    return ended;
  }

  /** Waits until every change added has ended. */
  async settled(): Promise<void> {
    while (this.waiting.size > 0) await Promise.all(this.waiting);
  }
}

/**
 * Takes the changes over: each slot of `changes` is emptied once its change has ended, so that what
 * an apply of 100,000 holds shrinks as it goes (the results keep what the summary needs).
 */
export async function applyPlan(changes: ApplicableChange[], options: ApplyOptions): Promise<ApplySummary> {
  const slots: Array<ApplicableChange | undefined> = changes;
  const now = options.now ?? Date.now;
  const started = now();
  const emit = options.onEvent ?? (() => undefined);
  // By the change's index in the plan: each one's outcome, and the results of those not applied.
  // (A record per applied change was 12 MB at 100,000 changes, held to the end.)
  const outcomes = new Uint8Array(changes.length);
  const notApplied = new Map<number, ChangeResult>();
  let interrupted = false;
  /** The journal refused an entry (a full disk, a read-only directory): nothing more is started. */
  let journalFailure: string | undefined;
  const recording = new PendingRecords();
  let inFlight = 0;
  // Set below, once the groups are known; an interrupt reads no more of it.
  let listing: FreshListing | undefined;
  const onAbort = () => {
    interrupted = true;
    listing?.close();
    emit({ type: 'interrupted', at: now(), inFlight });
  };
  // apply-start comes first, whatever happens: an interrupt before it is told right after it.
  emit({ type: 'apply-start', total: changes.length, parallelism: options.parallelism, at: started });
  // An apply with nothing to do leaves nothing undone: an interrupt then changes nothing about it.
  const signal = changes.length > 0 ? options.signal : undefined;
  if (signal?.aborted) onAbort();
  else signal?.addEventListener('abort', onAbort, { once: true });

  const finish = (index: number, result: Omit<ChangeResult, 'address' | 'organisation' | 'kind'>) => {
    const change = slots[index]!;
    slots[index] = undefined;
    const full: ChangeResult = { address: change.address, organisation: change.organisation.slug, kind: change.kind, ...result };
    outcomes[index] = 1 + OUTCOMES.indexOf(full.outcome);
    if (full.outcome !== 'applied') notApplied.set(index, full);
    emit({ type: 'change-end', at: now(), ...full });
  };

  // The plan's own test (plan/is-recorded-done.ts), asked of the journal as it is now.
  const isJournaled: IsJournaled = (kind, organisationId, targetId) => options.journal.has(options.serviceKey, journalKey(kind, organisationId, targetId));

  /**
   * Runs one change, or ends it as `decided` says, or as not started; resolves to how it ended.
   * `fresh`: what the listing read again of its organisation, for a billing change.
   */
  async function run(index: number, decided: Decided | undefined, fresh: FreshRead | undefined): Promise<Outcome> {
    const change = slots[index]!;
    if (decided !== undefined) {
      finish(index, { outcome: decided.outcome, reason: decided.reason, durationMs: 0 });
      return decided.outcome;
    }
    if (interrupted) {
      finish(index, { outcome: 'not-started', reason: 'apply was interrupted before it started', durationMs: 0 });
      return 'not-started';
    }
    if (journalFailure !== undefined) {
      finish(index, { outcome: 'not-started', reason: `the state journal could not be written, so nothing more was started (${journalFailure})`, durationMs: 0 });
      return 'not-started';
    }
    if (isRecordedDone(change, isJournaled)) {
      finish(index, { outcome: 'already-done', reason: 'recorded in the state journal', durationMs: 0 });
      return 'already-done';
    }
    const t0 = now();
    inFlight += 1;
    emit({ type: 'change-start', address: change.address, organisation: change.organisation.slug, kind: change.kind, at: t0 });
    try {
      const result = await executeChange(change, options.client, {
        now,
        ...(options.sleep === undefined ? {} : { sleep: options.sleep }),
        ...(options.signal === undefined ? {} : { signal: options.signal }),
        ...(options.backoffBaseMs === undefined ? {} : { backoffBaseMs: options.backoffBaseMs }),
        ...(options.maxReadAgeMs === undefined ? {} : { maxReadAgeMs: options.maxReadAgeMs }),
        ...(fresh === undefined || change.kind !== 'billing' ? {} : { fresh }),
        // Every change runs in its worker's turn. Those started before a 429 told the rate (all the
        // workers) held their writes at the limiter until their reads aged, and read again, all at
        // once, and again: 300 changes at a service's 5 a second, --parallelism 256, 8 done in 2
        // minutes. Each steps out before it reads again, and waits for a turn at the rate now known.
        beforeReadAgain: async () => {
          endTurn();
          await takeTurn();
        },
      });
      // Only billing can be stale; a revocation or channel removal that ended is done, once its entry
      // is durable. A batched journal's worker goes on meanwhile (a batch may wait 2 s).
      if (JOURNALED_KINDS.has(change.kind) && change.targetId !== undefined && result.outcome !== 'stale') {
        const entry = { kind: change.kind, organisation: change.organisation.slug, outcome: result.outcome, at: new Date(now()).toISOString() };
        const ended = recording.add(options.journal.record(options.serviceKey, journalKey(change.kind, change.organisation.id, change.targetId), entry), {
          recorded: () => finish(index, { outcome: result.outcome, reason: result.reason, durationMs: now() - t0 }),
          // Done on the service but not recorded: say so, and start nothing more, since nothing more
          // could be recorded either. The next apply finds these already gone.
          failed: (message, cause) => {
            journalFailure ??= cause ?? message;
            const failure = { operation: change.kind, message: `${result.outcome === 'applied' ? 'done on the service' : 'found already done on the service'}, but not recorded in the state journal: ${message}. The next apply finds it done` };
            finish(index, { outcome: 'failed', failure, durationMs: now() - t0 });
          },
        });
        if (options.journal.batched !== true) await ended;
        return result.outcome;
      }
      finish(index, { outcome: result.outcome, reason: result.reason, durationMs: now() - t0 });
      return result.outcome;
    } catch (err) {
      // Its request waited its turn (the rate limiter, a backoff) when the run was interrupted or
      // stopped: it was never sent, so nothing of it was done.
      const unsent = err instanceof ChangeFailedError ? err.underlying : err;
      if (unsent instanceof NotSentError) {
        finish(index, { outcome: 'not-started', reason: `its request was not sent: ${unsent.why}`, durationMs: now() - t0 });
        return 'not-started';
      }
      finish(index, { outcome: 'failed', failure: describeFailure(err), durationMs: now() - t0 });
      return 'failed';
    } finally {
      inFlight -= 1;
    }
  }

  // Group by organisation, keeping plan order within each group; a set-active change waits for its
  // organisation's group. `order` holds the other changes' indexes, each organisation's together;
  // group g is order[starts[g]..starts[g + 1]).
  const { order, starts } = groupByOrganisation(changes);
  const groupCount = starts.length - 1;
  // Each group's organisation, and each set-active change's, taken now: the changes go as they end.
  const groupSlugs = Array.from({ length: groupCount }, (_, group) => changes[order[starts[group]!]!]!.organisation.slug);
  const active = changes.flatMap((change, index) => (change.kind === 'set-active' ? [{ index, slug: change.organisation.slug }] : []));
  const activeBySlug = new Map<string, number[]>();
  /** Set-active changes whose organisation's changes are done (or that have none): they start once no group is left. */
  const ready: Array<{ index: number; decided: Decided | undefined }> = [];
  const grouped = new Set(groupSlugs.filter((slug) => active.some((a) => a.slug === slug)));
  for (const { index, slug } of active) {
    if (!grouped.has(slug)) ready.push({ index, decided: undefined });
    else activeBySlug.set(slug, [...(activeBySlug.get(slug) ?? []), index]);
  }

  /**
   * Runs group `group`, all of one organisation; its set-active changes then wait for a worker.
   * `fresh`: what the listing read again of the organisation, when it was read from it.
   */
  async function runGroup(group: number, fresh: FreshRead | undefined): Promise<void> {
    const mine: OrganisationChange[] = [];
    for (let at = starts[group]!; at < starts[group + 1]!; at++) {
      const index = order[at]!;
      const { kind, address } = slots[index]!;
      mine.push({ index, kind, address });
    }
    const runHere: RunChange = (index, decided) => run(index, decided, fresh);
    const decided = await runOrganisationChanges(mine, runHere);
    for (const index of activeBySlug.get(groupSlugs[group]!) ?? []) ready.push({ index, decided });
  }

  // The groups whose billing is read again from the listing wait for it, by organisation id; the
  // others (`immediate`) can start at once.
  const { waiting, immediate } = splitByFreshRead(changes, order, starts, options.freshReads);
  if (options.freshReads?.kind === 'listing') {
    listing = new FreshListing(waiting, { client: options.client, pageSize: options.freshReads.pageSize, lowWater: (pageMs) => lowWaterMark(options.parallelism, options.client.rateStatus().rps, pageMs), now });
    if (interrupted) listing.close();
  }

  // `parallelism` workers share the work: a page of the listing when the groups read from it run
  // low (a read takes a worker's place, so that reads and writes together stay within the
  // parallelism), those groups first (their reads age), then the other groups, then set-active
  // changes. Workers, not one p-limit task per organisation: those are all queued at once and each is
  // held, about 1 KB, until its turn (100 MB at 100,000 organisations).
  let nextImmediate = 0;
  // At a known rate, only as many workers take work as the rate serves within the read age bound
  // (workersAtRate): the others wait here for one to finish. 256 workers at 5 requests a second held
  // their writes at the rate limiter until every read they were built from was too old to send.
  const maxReadAgeMs = sendWindowMs(options.maxReadAgeMs);
  let working = 0;
  const waitingForTurn: Array<() => void> = [];
  async function takeTurn(): Promise<void> {
    while (working >= workersAtRate(options.parallelism, options.client.rateStatus().rps, maxReadAgeMs)) {
      await new Promise<void>((resolve) => waitingForTurn.push(resolve));
    }
    working += 1;
  }
  function endTurn(): void {
    working -= 1;
    waitingForTurn.shift()?.();
  }
  /** The next piece of work, taken only once the worker has its turn (a group read from the listing ages while it waits). */
  function nextWork(): (() => Promise<unknown>) | undefined {
    const arrived = listing?.take();
    if (arrived !== undefined) return () => runGroup(arrived.group, arrived.fresh);
    if (nextImmediate < immediate.length) {
      const group = immediate[nextImmediate++]!;
      return () => runGroup(group, undefined);
    }
    if (listing?.busy) return undefined;
    const next = ready.shift();
    return next === undefined ? undefined : () => run(next.index, next.decided, undefined);
  }
  async function worker(): Promise<void> {
    for (;;) {
      if (listing?.wantsRead()) {
        await listing.readPage();
        continue;
      }
      await takeTurn();
      const work = nextWork();
      if (work === undefined) {
        endTurn();
        // The listing ran dry while this worker waited for its turn, and no page is on its way: read it.
        if (listing?.wantsRead()) continue;
        if (!listing?.busy) return;
        await listing.arrival();
        continue;
      }
      try {
        await work();
      } finally {
        endTurn();
      }
    }
  }
  const workers = Math.max(1, Math.min(options.parallelism, groupCount + active.length));
  await Promise.all(Array.from({ length: workers }, () => worker()));
  await options.journal.flush();
  await recording.settled();
  signal?.removeEventListener('abort', onAbort);

  const counts = new Array<number>(OUTCOMES.length + 1).fill(0);
  for (const code of outcomes) counts[code]! += 1;
  const count = (outcome: Outcome) => counts[1 + OUTCOMES.indexOf(outcome)]!;
  const summary: ApplySummary = {
    total: changes.length,
    applied: count('applied'),
    alreadyDone: count('already-done'),
    skipped: count('skipped'),
    notStarted: count('not-started'),
    stale: count('stale'),
    failed: count('failed'),
    interrupted,
    elapsedMs: now() - started,
    notApplied: [...notApplied.keys()].sort((a, b) => a - b).map((index) => notApplied.get(index)!),
    changed: countChanged(groupSlugs, active, outcomes, order, starts),
  };
  emit({ type: 'apply-end', at: now(), summary });
  return summary;
}

/**
 * The organisations with a change applied, in plan order (the groups, then set-active changes,
 * which count for their organisation): how many, and the first CHANGED_LISTED with their counts.
 */
function countChanged(
  groupSlugs: readonly string[],
  active: ReadonlyArray<{ index: number; slug: string }>,
  outcomes: Uint8Array,
  order: Uint32Array,
  starts: Uint32Array,
): ApplySummary['changed'] {
  const first: ApplySummary['changed']['first'] = [];
  let organisations = 0;
  const name = (applied: number, slug: string) => {
    organisations += 1;
    const entry = { organisation: slug, applied };
    if (first.length < CHANGED_LISTED) first.push(entry);
    return entry;
  };
  // Only the organisations of set-active changes can be met twice.
  const activeSlugs = new Set(active.map((a) => a.slug));
  const met = new Map<string, { applied: number }>();
  for (let group = 0; group + 1 < starts.length; group++) {
    let applied = 0;
    for (let at = starts[group]!; at < starts[group + 1]!; at++) if (outcomes[order[at]!] === APPLIED) applied += 1;
    if (applied === 0) continue;
    const slug = groupSlugs[group]!;
    const entry = name(applied, slug);
    if (activeSlugs.has(slug)) met.set(slug, entry);
  }
  for (const { index, slug } of active) {
    if (outcomes[index] !== APPLIED) continue;
    const entry = met.get(slug);
    if (entry) entry.applied += 1;
    else met.set(slug, name(1, slug));
  }
  return { organisations, first };
}

/**
 * The groups whose billing change is read again from the listing (by organisation id; not billing
 * known only after an accept, which is read once joined), and the others, in plan order.
 */
function splitByFreshRead(
  changes: readonly ApplicableChange[],
  order: Uint32Array,
  starts: Uint32Array,
  freshReads: FreshReads | undefined,
): { waiting: Map<string, number>; immediate: Uint32Array } {
  const waiting = new Map<string, number>();
  const immediate: number[] = [];
  for (let group = 0; group + 1 < starts.length; group++) {
    let listed: string | undefined;
    if (freshReads?.kind === 'listing') {
      for (let at = starts[group]!; at < starts[group + 1]!; at++) {
        const change = changes[order[at]!]!;
        if (change.kind === 'billing' && change.knownAfter === undefined) listed = change.organisation.id;
      }
    }
    // An id met twice (never in a valid plan) is read by id rather than left waiting for ever.
    if (listed !== undefined && !waiting.has(listed)) waiting.set(listed, group);
    else immediate.push(group);
  }
  return { waiting, immediate: Uint32Array.from(immediate) };
}

/**
 * The indexes of the changes other than set-active, each organisation's together and in plan order,
 * organisations in the order they first appear, and where each organisation's group starts (with
 * the end as the last start). A plan is sorted by organisation, so `order` is usually every index
 * in turn; only a plan in another order needs the map.
 */
function groupByOrganisation(changes: readonly ApplicableChange[]): { order: Uint32Array; starts: Uint32Array } {
  const indexes: number[] = [];
  let sorted = true;
  let previous: string | undefined;
  for (let index = 0; index < changes.length; index++) {
    const change = changes[index]!;
    if (change.kind === 'set-active') continue;
    const slug = change.organisation.slug;
    if (previous !== undefined && slug < previous) sorted = false;
    previous = slug;
    indexes.push(index);
  }
  let order = Uint32Array.from(indexes);
  if (!sorted) {
    const groups = new Map<string, number[]>();
    for (const index of indexes) {
      const slug = changes[index]!.organisation.slug;
      const group = groups.get(slug);
      if (group === undefined) groups.set(slug, [index]);
      else group.push(index);
    }
    order = Uint32Array.from([...groups.values()].flat());
  }
  const starts: number[] = [];
  for (let at = 0; at < order.length; at++) {
    if (at === 0 || changes[order[at]!]!.organisation.slug !== changes[order[at - 1]!]!.organisation.slug) starts.push(at);
  }
  starts.push(order.length);
  return { order, starts: Uint32Array.from(starts) };
}
