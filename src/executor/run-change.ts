/**
 * Runs the work the scheduler hands out: one change (of an organisation, as organisation-steps.ts
 * lets it start, or a set-active change). For each change: whether it starts at all
 * (an interrupt, a journal that cannot be written, a change the journal records done), its attempts
 * (executeChange; a billing write held until its read aged is read and built again, in a new turn,
 * at most MAX_BILLING_BUILDS times), the journal entry of what was done, and how it ended, told to
 * the tally and as an event. The idempotent outcomes that make apply safe to run again are the
 * attempts' own: write-billing.ts, accept-invitation.ts, delete-target.ts.
 */
import { randomUUID } from 'node:crypto';
import { NotSentError } from '../api/api-error.js';
import type { OrganisationsClient } from '../api/client.js';
import { isRecordedDone, JOURNALED_KINDS, type IsJournaled } from '../plan/is-recorded-done.js';
import type { ApplicableChange } from '../plan/types.js';
import { journalKey } from '../model/journal-key.js';
import type { StateJournal } from '../state/state-backend.js';
import { acceptInvitation } from './accept-invitation.js';
import { APPLIED, ChangeFailedError, describeFailure, errorMessage, type ChangeOutcome, type Done } from './change-outcome.js';
import { deleteTarget } from './delete-target.js';
import { setActive } from './set-active.js';
import type { ApplyListener, ChangeResult, Outcome } from './events.js';
import { isMember, SharedMembership, waitsFor, type Membership, type WaitOptions } from './membership.js';
import type { OrganisationGroups } from './organisation-groups.js';
import type { Decided } from './organisation-steps.js';
import type { OutcomeTally } from './outcome-tally.js';
import { DEFAULT_READ_MAX_AGE_MS, sendWindowMs, type ListingReread } from './reread-listing.js';
import type { Turn, WorkRunner } from './scheduler.js';
import type { OpenOrganisation, Work, WorkEnd } from './work-queue.js';
import { MAX_BILLING_BUILDS, readAgeFailure, writeBilling, type BillingContext } from './write-billing.js';

/** What every change of a run is executed with; built once a run. */
export interface ExecutionContext extends BillingContext {
  /** The organisation active when the plan was read: a set-active change is written only while it still is (undefined: not checked). */
  activeFrom?: string | null;
}

export interface ExecutionOptions extends WaitOptions {
  /** The oldest read a billing write may be built from (ORGFORM_READ_MAX_AGE_MS). */
  maxReadAgeMs?: number;
  now?: () => number;
  /** The plan's observedActiveId, for set-active changes (set-active.ts). */
  activeFrom?: string | null;
}

export function executionContext(client: OrganisationsClient, options: ExecutionOptions = {}): ExecutionContext {
  return {
    client,
    waits: waitsFor(options),
    now: options.now ?? Date.now,
    maxReadAgeMs: options.maxReadAgeMs ?? DEFAULT_READ_MAX_AGE_MS,
    sendWindowMs: sendWindowMs(options.maxReadAgeMs),
    ...(options.activeFrom === undefined ? {} : { activeFrom: options.activeFrom }),
  };
}

/** What the changes of one organisation share of its reads. */
export interface OrganisationReads {
  /** For a billing change, what the listing behind the writes read of its organisation; without it, the organisation is read by id just before the write. */
  reread?: ListingReread | undefined;
  /** Its membership, for a delete answered 404; without it, read by that change on its own. */
  membership?: () => Promise<Membership>;
}

/**
 * One attempt at one change against the service. It returns how the attempt ended and never calls
 * back: what follows (a new turn and a new build for a write whose read aged, the journal, the
 * events) is the runner's.
 */
export async function executeChange(change: ApplicableChange, context: ExecutionContext, reads: OrganisationReads = {}): Promise<ChangeOutcome> {
  try {
    switch (change.kind) {
      case 'billing':
        return await writeBilling(change, context, reads.reread);
      case 'set-active':
        if (context.activeFrom !== undefined) return await setActive(change, context, context.activeFrom);
        await context.client.setActiveOrganisation(change.organisation.id, { idempotencyKey: randomUUID(), label: change.address });
        return APPLIED;
      case 'accept-invitation':
        return await acceptInvitation(change, context.client, context.waits);
      case 'revoke-invitation':
      case 'remove-channel':
        return await deleteTarget(change, context.client, context.waits, reads.membership);
      default: {
        const unreachable: never = change.kind;
        throw new Error(`unknown change kind ${String(unreachable)}`);
      }
    }
  } catch (error) {
    return { kind: 'failed', error };
  }
}

export interface ChangeRunnerOptions {
  /** The plan's changes, taken over: each slot is emptied once its change has ended. */
  changes: Array<ApplicableChange | undefined>;
  groups: OrganisationGroups;
  context: ExecutionContext;
  journal: StateJournal;
  /** The journal's key for this service (its base URL). */
  serviceKey: string;
  tally: OutcomeTally;
  emit: ApplyListener;
  now: () => number;
}

type ChangeEnd = Omit<ChangeResult, 'address' | 'organisation' | 'kind'>;

export class ChangeRunner implements WorkRunner<Work, WorkEnd> {
  /** Changes started and not ended yet. */
  inFlight = 0;
  /** Nothing more starts: apply was interrupted. */
  interrupted = false;
  /** The journal refused an entry (a full disk, a read-only directory): nothing more is started. */
  private journalFailure: string | undefined;
  /** The plan's own test (plan/is-recorded-done.ts), asked of the journal as it is now. */
  private readonly isJournaled: IsJournaled;
  /** Changes done on the service whose entries a batched journal is still writing: each ends once written. */
  private readonly ending = new Set<Promise<Outcome>>();

  constructor(private readonly options: ChangeRunnerOptions) {
    this.isJournaled = (kind, organisationId, targetId) => options.journal.has(options.serviceKey, journalKey(kind, organisationId, targetId));
  }

  /** Runs one change; resolves to how it ended. */
  async run(work: Work, turn: Turn): Promise<WorkEnd> {
    if (work.kind === 'set-active') return this.runChange(work.index, work.decided, {}, turn);
    return this.runChange(work.index, work.decided, this.readsOf(work.organisation, this.options.changes[work.index]!), turn);
  }

  /** What the organisation's changes share: the listing's read, and its membership reads (membership.ts). */
  private readsOf(organisation: OpenOrganisation, change: ApplicableChange): OrganisationReads {
    const membership = () => {
      if (organisation.membership === undefined) {
        const { id, slug } = change.organisation;
        const { client } = this.options.context;
        organisation.membership = new SharedMembership(() => isMember(client, id, slug));
      }
      return organisation.membership.check();
    };
    return { reread: organisation.reread, membership };
  }

  /** Runs change `index`, or ends it as `decided` says, or as not started; resolves to how it ended. */
  private async runChange(index: number, decided: Decided | undefined, reads: OrganisationReads, turn: Turn): Promise<Outcome> {
    const change = this.options.changes[index]!;
    const early = decided ?? this.notToStart(change) ?? (await this.lockLost(change));
    if (early !== undefined) return this.end(index, { outcome: early.outcome, reason: early.reason, durationMs: 0 });
    const { context, now } = this.options;
    const startedAt = now();
    this.inFlight += 1;
    this.options.emit({ type: 'change-start', address: change.address, organisation: change.organisation.slug, kind: change.kind, at: startedAt });
    try {
      let outcome = await executeChange(change, context, reads);
      let late = 0;
      for (let build = 1; outcome.kind === 'read-again'; build += 1) {
        if (outcome.late === true) late += 1;
        if (build >= MAX_BILLING_BUILDS) {
          outcome = { kind: 'failed', error: readAgeFailure(change, context.sendWindowMs, late) };
          break;
        }
        // Out of its turn first: at a rate learned mid-run, only the workers it serves read again.
        await turn.again();
        // By id: the listing's read is the one that aged.
        outcome = await executeChange(change, context, { membership: reads.membership });
      }
      if (outcome.kind === 'applied' || outcome.kind === 'already-done') return await this.endRecorded(index, change, outcome, startedAt);
      return this.end(index, changeEnd(outcome, now() - startedAt));
    } finally {
      this.inFlight -= 1;
    }
  }

  private notToStart(change: ApplicableChange): { outcome: Outcome; reason: string } | undefined {
    if (this.interrupted) return { outcome: 'not-started', reason: 'apply was interrupted before it started' };
    if (this.journalFailure !== undefined) {
      return { outcome: 'not-started', reason: `the state journal could not be written, so nothing more was started (${this.journalFailure})` };
    }
    if (isRecordedDone(change, this.isJournaled)) return { outcome: 'already-done', reason: 'recorded in the state journal' };
    return undefined;
  }

  /** Whether the lock on the state was lost unheard of (a file state's force-unlock): then nothing more starts, this change included. */
  private async lockLost(change: ApplicableChange): Promise<{ outcome: Outcome; reason: string } | undefined> {
    if (this.options.journal.checkHeld === undefined) return undefined;
    try {
      await this.options.journal.checkHeld();
      return undefined;
    } catch (err) {
      // A lost lock halts the run (an interrupt, said at the end); any other failure is the journal's.
      this.journalFailure ??= errorMessage(err).replace(/\.$/, '');
      return this.notToStart(change);
    }
  }

  /**
   * A change done on the service ends once its journal entry is durable. A batched journal (a
   * remote state) may take its batch delay for that: the worker goes on meanwhile, and the change
   * ends when the batch is written (`settled` waits for the last). Otherwise the worker waits, so
   * that a failure stops the next change.
   */
  private async endRecorded(index: number, change: ApplicableChange, outcome: Done, startedAt: number): Promise<Outcome> {
    const ended = this.record(change, outcome).then((recorded) => this.end(index, changeEnd(recorded, this.options.now() - startedAt)));
    if (this.options.journal.batched !== true || !JOURNALED_KINDS.has(change.kind)) return ended;
    this.ending.add(ended);
    void ended.finally(() => this.ending.delete(ended));
    return outcome.kind;
  }

  /** Waits until every change whose entry was still being written has ended. */
  async settled(): Promise<void> {
    while (this.ending.size > 0) await Promise.all(this.ending);
  }

  /**
   * Where a change done on the service is recorded in the journal: revocations and channel removals
   * (the kinds it decides). Done but not recorded: say so, and start nothing more, since nothing
   * more could be recorded either. The next apply finds these already gone.
   */
  private async record(change: ApplicableChange, outcome: Done): Promise<ChangeOutcome> {
    if (!JOURNALED_KINDS.has(change.kind) || change.targetId === undefined) return outcome;
    const entry = { kind: change.kind, organisation: change.organisation.slug, outcome: outcome.kind, at: new Date(this.options.now()).toISOString() };
    try {
      await this.options.journal.record(this.options.serviceKey, journalKey(change.kind, change.organisation.id, change.targetId), entry);
      return outcome;
    } catch (err) {
      const message = errorMessage(err).replace(/\.$/, '');
      // The changes not started say only the system's reason (the failure has the path and what to do).
      this.journalFailure ??= err instanceof Error && err.cause instanceof Error ? err.cause.message : message;
      const done = outcome.kind === 'applied' ? 'done on the service' : 'found already done on the service';
      return { kind: 'failed', error: new ChangeFailedError(change.kind, `${done}, but not recorded in the state journal: ${message}. The next apply finds it done`, undefined) };
    }
  }

  /** Ends change `index`: lets it go, counts it and tells it. */
  private end(index: number, result: ChangeEnd): Outcome {
    const change = this.options.changes[index]!;
    this.options.changes[index] = undefined;
    const full: ChangeResult = { address: change.address, organisation: change.organisation.slug, kind: change.kind, ...result };
    this.options.tally.add(index, full);
    this.options.emit({ type: 'change-end', at: this.options.now(), ...full });
    return full.outcome;
  }
}

function changeEnd(outcome: ChangeOutcome, durationMs: number): ChangeEnd {
  if (outcome.kind === 'read-again') throw new Error('a change ended waiting to be read again');
  if (outcome.kind !== 'failed') return { outcome: outcome.kind, reason: outcome.reason, durationMs };
  // Its request waited its turn (the rate limiter, a backoff) when the run was interrupted or
  // stopped: it was never sent, so nothing of it was done.
  const unsent = outcome.error instanceof ChangeFailedError ? outcome.error.underlying : outcome.error;
  if (unsent instanceof NotSentError) return { outcome: 'not-started', reason: `its request was not sent: ${unsent.why}`, durationMs };
  return { outcome: 'failed', failure: describeFailure(outcome.error), durationMs };
}
