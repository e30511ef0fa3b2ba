/**
 * Applies a plan: changes in parallel (bounded), of one organisation or of many: an organisation's
 * accepts first, one at a time and each tried on its own, then its billing, revocations and channel
 * removals at once (see organisation-steps.ts); the active organisation last, after its own
 * organisation's changes.
 * A failure skips only what depends on it. Revocations and channel removals are recorded in the
 * journal as soon as they complete (each ends once its entry is durable: the file state writes what
 * arrived during a write in the next one, a remote state writes in batches), and
 * one the journal records done is not sent again. On interrupt, nothing new starts and what is in
 * flight finishes.
 *
 * Billing is written from what the service holds just before the write, never from the plan's read:
 * with a `rereadMode` of kind listing, an organisation whose billing changes starts only once the
 * listing streamed behind the writes (reread-listing.ts) has read it again; otherwise its billing is
 * read by id just before the write (write-billing.ts).
 *
 * The parts: WorkQueue (what comes next), Scheduler (workers and turns), ChangeRunner (one change,
 * the journal, the events), executeChange (one attempt at one change).
 */
import type { OrganisationsClient } from '../api/client.js';
import type { ApplicableChange } from '../plan/types.js';
import type { StateJournal } from '../state/state-backend.js';
import type { ApplyListener, ApplySummary } from './events.js';
import { ChangeRunner, executionContext } from './run-change.js';
import { groupByOrganisation } from './organisation-groups.js';
import { OutcomeTally } from './outcome-tally.js';
import { DEFAULT_READ_MAX_AGE_MS, lowWaterMark, sendWindowMs, type RereadListingOptions, type RereadMode } from './reread-listing.js';
import { Scheduler } from './scheduler.js';
import { WorkQueue } from './work-queue.js';

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
  rereadMode?: RereadMode;
  /** A read older than this is read again by id before a write is built from it (ORGFORM_READ_MAX_AGE_MS). */
  maxReadAgeMs?: number;
  /**
   * The organisation active when the plan was read (Plan.observedActiveId): a set-active change is
   * written only while it still is, read again just before (set-active.ts). Undefined: not checked.
   */
  activeFrom?: string | null;
}

const ignore: ApplyListener = () => undefined;

/**
 * Takes the changes over: each slot of `changes` is emptied once its change has ended, so that what
 * an apply of 100,000 holds shrinks as it goes (the summary keeps what it needs).
 */
export async function applyPlan(changes: ApplicableChange[], options: ApplyOptions): Promise<ApplySummary> {
  const now = options.now ?? Date.now;
  const started = now();
  const emit = options.onEvent ?? ignore;
  const groups = groupByOrganisation(changes);
  const queue = new WorkQueue(changes, groups, listingOptions(options, now));
  const scheduler = new Scheduler(queue, { parallelism: options.parallelism, sendWindowMs: sendWindowMs(options.maxReadAgeMs), rps: () => options.client.rateStatus().rps });
  const tally = new OutcomeTally(changes.length);
  const context = executionContext(options.client, { ...options, now });
  const runner = new ChangeRunner({ changes, groups, context, journal: options.journal, serviceKey: options.serviceKey, tally, emit, now });

  const onInterrupt = () => {
    runner.interrupted = true;
    scheduler.stop();
    emit({ type: 'interrupted', at: now(), inFlight: runner.inFlight });
  };
  // apply-start comes first, whatever happens: an interrupt before it is told right after it.
  emit({ type: 'apply-start', total: changes.length, parallelism: options.parallelism, at: started });
  // An apply with nothing to do leaves nothing undone: an interrupt then changes nothing about it.
  const signal = changes.length > 0 ? options.signal : undefined;
  if (signal?.aborted) onInterrupt();
  else signal?.addEventListener('abort', onInterrupt, { once: true });

  await scheduler.run(runner);
  await options.journal.flush();
  await runner.settled();
  signal?.removeEventListener('abort', onInterrupt);

  const summary = tally.summary(groups, runner.interrupted, now() - started);
  emit({ type: 'apply-end', at: now(), summary });
  return summary;
}

/** The listing behind the writes, when billing is read again from one: its next page follows the rate. */
function listingOptions(options: ApplyOptions, now: () => number): RereadListingOptions | undefined {
  if (options.rereadMode?.kind !== 'listing') return undefined;
  const { client, parallelism } = options;
  return { client, pageSize: options.rereadMode.pageSize, maxReadAgeMs: options.maxReadAgeMs ?? DEFAULT_READ_MAX_AGE_MS, lowWater: (pageMs, pageYield) => lowWaterMark(parallelism, client.rateStatus().rps, pageMs, pageYield, sendWindowMs(options.maxReadAgeMs)), now };
}
