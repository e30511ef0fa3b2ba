/**
 * A billing change, written from what the service holds just before the write (a listing page read
 * moments ago, or the organisation read by id): the declared fields over the others as they are
 * then, nothing when the declared values hold already, and nothing either (stale) when a declared
 * field changed since the plan so that the write would differ from what was shown. Never built from
 * a read older than the read age bound, nor sent later than the send window after its read: a write
 * held longer (a 429's pause, a retry's backoff) is not sent, and the runner has it read and built
 * again, under a new Idempotency-Key (its body may differ).
 */
import { randomUUID } from 'node:crypto';
import { isForbidden, isNotFound, NotSentError } from '../api/api-error.js';
import type { OrganisationsClient } from '../api/client.js';
import { observeBilling } from '../api/observe-billing.js';
import { decideBillingWrite, type BillingValues } from '../model/billing.js';
import type { ApplicableChange } from '../plan/types.js';
import { APPLIED, ChangeFailedError, describeError, errorMessage, READ_AGAIN, READ_AGAIN_LATE, type ChangeOutcome } from './change-outcome.js';
import { isServiceNotFound, settle, type Waits } from './membership.js';
import type { ListingReread } from './reread-listing.js';

export interface BillingContext {
  client: OrganisationsClient;
  waits: Waits;
  now: () => number;
  /** A listing read older than this is read again by id before a write is built from it (ORGFORM_READ_MAX_AGE_MS). */
  maxReadAgeMs: number;
  /** How long after its read a write may still be sent (sendWindowMs of the bound). */
  sendWindowMs: number;
}

/** How many times a billing write held until its read was too old is built before the change fails. */
export const MAX_BILLING_BUILDS = 3;

/**
 * The failure of a billing (or set-active) change whose write was held too long each of MAX_BILLING_BUILDS times.
 * `late`: how many of those reads were answered already too old to build a write from.
 */
export function readAgeFailure(change: ApplicableChange, sendWindowMs: number, late = 0): ChangeFailedError {
  const why =
    late === MAX_BILLING_BUILDS
      ? `each time the read itself was answered more than ${sendWindowMs} ms after it was sent (the service is slow to answer), too late to build a write from`
      : `each time its write was held (rate limit, retries${late > 0 ? ', or the read came late' : ''}) until the read was older than ${sendWindowMs} ms`;
  const active = change.kind === 'set-active';
  const what = `${active ? 'the active organisation, before setting' : 'the billing of'} organisation ${JSON.stringify(change.organisation.slug)} (${change.organisation.id})`;
  return new ChangeFailedError(
    active ? 'setActiveOrganisation' : 'updateBillingDetails',
    `${what} was read ${MAX_BILLING_BUILDS} times, and ${why}, so it was not sent. Nothing was written; run orgform apply again later`,
    // Not the NotSentError: that would report the change as not started, as an interrupt does.
    undefined,
  );
}

type BillingRead = { values: BillingValues; readAt: number };

/** One build of a billing change: read, decide, write. `reread`: what the listing read of its organisation. */
export async function writeBilling(change: ApplicableChange, context: BillingContext, reread: ListingReread | undefined): Promise<ChangeOutcome> {
  const declared = change.declared;
  if (declared === undefined) throw new Error(`plan change ${change.address} has no declared billing`);
  const read = change.knownAfter !== undefined ? await billingAfterJoin(change, context) : await billingNow(change, context, reread);
  if (!('values' in read)) return read;
  // Answered already too old to build a write from (a slow service), before anything held its write.
  const late = context.now() - read.readAt > context.sendWindowMs;
  const decision = decideBillingWrite(declared, change.seen, read.values);
  switch (decision.kind) {
    case 'current':
      return {
        kind: 'already-done',
        reason: change.knownAfter !== undefined ? 'the billing read after joining already holds the declared values' : 'the service already holds the declared values',
      };
    case 'stale': {
      const fields = decision.changed.map((c) => `billing.${c.field} changed on the service since the plan, from ${show(c.seen)} to ${show(c.now)} (the plan showed ${c.seen === c.declared ? 'no change to it' : `${show(c.seen)} → ${show(c.declared)}`})`);
      return { kind: 'stale', reason: staleReason(fields.join('; ')) };
    }
    case 'write':
      try {
        // A write goes out moments after its read; a bound of 0 ("always read by id first") still lets it.
        await context.client.updateBillingDetails(change.organisation.id, decision.body, { idempotencyKey: randomUUID(), label: change.address, notAfter: read.readAt + context.sendWindowMs });
      } catch (err) {
        if (err instanceof NotSentError && err.readTooOld) return late ? READ_AGAIN_LATE : READ_AGAIN;
        throw err;
      }
      return APPLIED;
    default: {
      const unreachable: never = decision;
      throw new Error(`unknown billing decision ${JSON.stringify(unreachable)}`);
    }
  }
}

/** Why a change was not written: the reason of a `stale` outcome (set-active.ts's too). */
export function staleReason(what: string): string {
  return `${what}; nothing was written for this organisation. Run orgform plan again to review it`;
}

const show = (value: string | null) => (value === null ? '(none)' : JSON.stringify(value));

/**
 * The billing of a member organisation as it is now: from the listing apply just read, when it shows
 * billing and the read is recent enough; otherwise read by id, now. Membership comes from a listing
 * (the plan's, or the one apply streams), never from a successful read by id.
 */
async function billingNow(change: ApplicableChange, context: BillingContext, reread: ListingReread | undefined): Promise<BillingRead | ChangeOutcome> {
  const { id, slug } = change.organisation;
  if (reread?.kind === 'unreadable') {
    throw new ChangeFailedError(
      'getOrganisations',
      `${errorMessage(reread.error)}; the listing apply reads just before writing failed before it reached organisation ${JSON.stringify(slug)} (${id}), and billing is written only from what was just read. Nothing was written; run orgform apply again`,
      reread.error,
    );
  }
  if (reread?.kind === 'unlisted' && !(await isListedAfterAll(change, context.client))) {
    return { kind: 'stale', reason: staleReason(`organisation ${JSON.stringify(slug)} (${id}) is no longer among your organisations (the listing does not show it)`) };
  }
  if (reread?.kind === 'listed') {
    if (reread.slug !== slug) return slugChanged(change, reread.slug);
    if (reread.billing !== null && context.now() - reread.readAt <= context.maxReadAgeMs) return { values: reread.billing, readAt: reread.readAt };
  }
  return billingById(change, context.client);
}

/**
 * An organisation the whole listing did not show: left, or missed by a listing that shifted as it
 * was read. One small filtered listing tells; one that fails tells nothing.
 */
async function isListedAfterAll(change: ApplicableChange, client: OrganisationsClient): Promise<boolean> {
  const { id, slug } = change.organisation;
  try {
    for await (const org of client.listOrganisations({ filter: slug })) if (org.id === id) return true;
    return false;
  } catch (err) {
    throw new ChangeFailedError(
      'getOrganisations',
      `${errorMessage(err)}; organisation ${JSON.stringify(slug)} (${id}) was not in the listing read just before writing, and asking the listing filtered by its slug failed. Nothing was written; run orgform apply again`,
      err,
    );
  }
}

async function billingById(change: ApplicableChange, client: OrganisationsClient): Promise<BillingRead | ChangeOutcome> {
  const { id, slug } = change.organisation;
  let org;
  let readAt: number;
  try {
    ({ organisation: org, sentAt: readAt } = await client.readOrganisation(id));
  } catch (err) {
    if (isServiceNotFound(err)) {
      return { kind: 'stale', reason: staleReason(`organisation ${JSON.stringify(slug)} (${id}) can no longer be read (${describeError(err)}): it was deleted, or you left it, since the plan`) };
    }
    throw new ChangeFailedError(
      'getOrganisation',
      `${errorMessage(err)}; the billing of organisation ${JSON.stringify(slug)} (${id}) is read again just before it is written, and that read failed. Nothing was written; run orgform apply again`,
      err,
    );
  }
  if (org.slug !== slug) return slugChanged(change, org.slug);
  const billing = observeBilling(org.billing, true);
  if (!billing.known) {
    throw new ChangeFailedError(
      'getOrganisation',
      `the billing of organisation ${JSON.stringify(slug)} (${id}) cannot be read now (${billing.reason}), and a write built from values not read could clear them. Nothing was written`,
      undefined,
    );
  }
  return { values: billing.values, readAt };
}

function slugChanged(change: ApplicableChange, slug: string): ChangeOutcome {
  const { id, slug: planned } = change.organisation;
  return { kind: 'stale', reason: staleReason(`organisation ${id} is now called ${JSON.stringify(slug)}, not ${JSON.stringify(planned)} as planned`) };
}

/**
 * The billing of an organisation joined by this apply: read now that the accept has succeeded
 * (waiting a little while a new membership does not show yet).
 */
async function billingAfterJoin(change: ApplicableChange, context: BillingContext): Promise<BillingRead> {
  const orgId = change.organisation.id;
  const read = await settle(async () => {
    try {
      const { organisation, sentAt } = await context.client.readOrganisation(orgId);
      return { ok: true as const, org: organisation, sentAt };
    } catch (err) {
      if (isNotFound(err) || isForbidden(err)) return { ok: false as const, err };
      throw err;
    }
  }, context.waits).catch((err: unknown) => ({ ok: false as const, err }));
  // Starts with the underlying error's message, so that the views show the service's answer and then this.
  const failed = (why: string, err?: unknown) =>
    new ChangeFailedError(
      'getOrganisation',
      `${err instanceof Error ? `${err.message}; ` : ''}the billing of organisation ${JSON.stringify(change.organisation.slug)} (${orgId}) must be read before it is written, and ${why}. Nothing was written; run orgform apply again once the organisation can be read`,
      err,
    );
  if (!read.ok) throw failed('it could not be read after the accept', read.err);
  const billing = observeBilling(read.org.billing, true);
  if (!billing.known) throw failed(`it cannot be read (${billing.reason})`);
  return { values: billing.values, readAt: read.sentAt };
}
