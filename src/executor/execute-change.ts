/**
 * One change against the service, with the idempotent outcomes that make apply safe to run again:
 * a delete answered 410, or 404 with the service's Error body while you are a member, is done; an
 * accept whose answer was lost or "not found" is done only if the listing shows you a member. A
 * billing change is written from what the service holds just before the write (a listing page read
 * moments ago, or the organisation read by id): the declared fields over the others as they are
 * then, nothing when the declared values hold already, and nothing either (stale) when a declared
 * field changed since the plan so that the write would differ from what was shown.
 */
import { randomUUID } from 'node:crypto';
import { ApiError, isForbidden, isNotFound, NotSentError, TransportError } from '../api/api-error.js';
import type { OrganisationsClient } from '../api/client.js';
import { observeBilling } from '../api/observe-billing.js';
import { decideBillingWrite, type BillingValues } from '../model/billing.js';
import type { ApplicableChange } from '../plan/types.js';
import type { Outcome } from './events.js';

export interface ExecutionResult {
  outcome: Extract<Outcome, 'applied' | 'already-done' | 'stale'>;
  reason?: string;
}

/**
 * What apply read of a billing change's organisation after approval, in the listing it streams behind
 * the writes (apply-plan.ts). Without one, the organisation is read by id just before the write.
 */
export type FreshRead =
  /** Listed when `readAt`: its slug, and its billing when the listing shows it (null: it does not). */
  | { kind: 'listed'; slug: string; billing: BillingValues | null; readAt: number }
  /** The listing, read to its end, does not show it: it may have left your organisations. */
  | { kind: 'unlisted' }
  /** The listing failed before it reached the organisation. */
  | { kind: 'unreadable'; error: unknown };

/** Thrown when a change failed; `underlying` is the service's or the transport's error. */
export class ChangeFailedError extends Error {
  constructor(
    readonly operation: string,
    message: string,
    readonly underlying: unknown,
  ) {
    super(message);
    this.name = 'ChangeFailedError';
  }
}

export interface ExecuteOptions {
  /** Waits between the re-reads that give a just-joined membership time to show; injected in tests. */
  sleep?: (ms: number) => Promise<void>;
  /** Apply's interrupt: ends those waits at once. */
  signal?: AbortSignal;
  /** First step of those waits, doubling (the retry policy's base: ORGFORM_RETRY_BASE_MS). */
  backoffBaseMs?: number;
  /** A billing change's fresh read, when apply streamed one; otherwise the organisation is read now. */
  fresh?: FreshRead;
  /** A fresh read older than this is read again by id just before the write (ORGFORM_READ_MAX_AGE_MS). */
  maxReadAgeMs?: number;
  now?: () => number;
  /**
   * Before a billing write held until its read aged is read and built again: apply waits here for
   * its turn again, so that at a rate learned mid-run only the workers it serves read again.
   */
  beforeReadAgain?: () => Promise<void>;
}

export const DEFAULT_BACKOFF_BASE_MS = 250;
/** The oldest read a billing write may be built from (ORGFORM_READ_MAX_AGE_MS); older, it is read again. */
export const DEFAULT_READ_MAX_AGE_MS = 5_000;

/** The least time a write may take to go out after its read, whatever ORGFORM_READ_MAX_AGE_MS says. */
const MIN_SEND_WINDOW_MS = 1_000;

/** How long after its read a billing write may still be sent: the read age bound, at least MIN_SEND_WINDOW_MS. */
export function sendWindowMs(maxReadAgeMs: number | undefined): number {
  return Math.max(maxReadAgeMs ?? DEFAULT_READ_MAX_AGE_MS, MIN_SEND_WINDOW_MS);
}
/** How many times a billing write held until its read was too old is built again before the change fails. */
const MAX_BILLING_BUILDS = 3;

/** Re-reads after an accept: a service may take a moment to show a new membership (4 waits, doubling). */
const SETTLE_STEPS = [1, 2, 4, 8];
/** Retries of a 404 that did not come from the service (no Error body: a proxy or gateway). */
const FOREIGN_404_STEPS = [2, 4];

interface Waits {
  sleep: (ms: number) => Promise<void>;
  settle: number[];
  foreign404: number[];
  /** Apply's interrupt: a wait ends at once, and no re-read follows. */
  signal: AbortSignal | undefined;
}

/** `sleep`, over at once on an interrupt (its own timer then cleared, so that it keeps nothing alive). */
function interruptibleSleep(sleep: ((ms: number) => Promise<void>) | undefined, signal: AbortSignal | undefined): (ms: number) => Promise<void> {
  return (ms) => {
    if (signal?.aborted) return Promise.resolve();
    return new Promise<void>((done) => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const finish = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', finish);
        done();
      };
      signal?.addEventListener('abort', finish, { once: true });
      if (sleep === undefined) timer = setTimeout(finish, ms);
      else void sleep(ms).then(finish, finish);
    });
  };
}

function describeError(err: unknown): string {
  return err instanceof ApiError ? `HTTP ${err.status}${err.serviceCode ? ` ${err.serviceCode}` : ''}` : (err as Error).message;
}

type Membership = { ok: true } | { ok: false; why: string; checked: 'not-listed' | 'failed' | 'not-sent' };

/**
 * Membership as the listing shows it: a service may let non-members read an organisation, so a
 * successful GetOrganisation proves nothing. The listing filtered by slug is one small request.
 */
async function isMember(client: OrganisationsClient, organisationId: string, slug: string): Promise<Membership> {
  try {
    for await (const org of client.listOrganisations({ filter: slug })) if (org.id === organisationId) return { ok: true };
    return { ok: false, why: 'it is not among your organisations', checked: 'not-listed' };
  } catch (err) {
    // Not sent (an interrupt, the run stopped): nothing is known about the membership.
    return { ok: false, why: describeError(err), checked: err instanceof NotSentError ? 'not-sent' : 'failed' };
  }
}

/** What a failed membership check says, true to what was learnt: only a listing that answered without the organisation says "not a member". */
function describeNonMembership(organisationId: string, member: Exclude<Membership, { ok: true }>): string {
  const org = `organisation ${JSON.stringify(organisationId)}`;
  switch (member.checked) {
    case 'not-listed':
      return `you are not a member of ${org} (${member.why})`;
    case 'failed':
      return `your membership of ${org} could not be confirmed (the listing answered ${member.why})`;
    case 'not-sent':
      return `your membership of ${org} was not checked (${member.why})`;
  }
}

/** Retries `attempt` while it says no, for a membership or organisation that may not show at once. */
async function settle<T extends { ok: boolean }>(attempt: () => Promise<T>, waits: Waits): Promise<T> {
  let result = await attempt();
  for (const delay of waits.settle) {
    if (result.ok || waits.signal?.aborted) break;
    await waits.sleep(delay);
    result = await attempt();
  }
  return result;
}

/** A 404 carries the service's Error body when the service itself says "not found". */
function isServiceNotFound(err: unknown): boolean {
  return isNotFound(err) && err.serviceCode !== undefined;
}

export async function executeChange(change: ApplicableChange, client: OrganisationsClient, options: ExecuteOptions = {}): Promise<ExecutionResult> {
  const base = options.backoffBaseMs ?? DEFAULT_BACKOFF_BASE_MS;
  const waits: Waits = {
    sleep: interruptibleSleep(options.sleep, options.signal),
    settle: SETTLE_STEPS.map((n) => n * base),
    foreign404: FOREIGN_404_STEPS.map((n) => n * base),
    signal: options.signal,
  };
  const orgId = change.organisation.id;
  const slug = change.organisation.slug;
  const target = change.targetId ?? '';
  // Retries of this change's requests are reported under its address.
  const label = change.address;
  switch (change.kind) {
    case 'billing':
      return writeBilling(change, client, waits, options);
    case 'set-active':
      await client.setActiveOrganisation(orgId, { idempotencyKey: randomUUID(), label });
      return { outcome: 'applied' };
    case 'accept-invitation':
      try {
        await client.acceptInvitation(orgId, target, { idempotencyKey: randomUUID(), label });
      } catch (err) {
        if (!isNotFound(err) && !(err instanceof TransportError)) throw err;
        // The first attempt may have been applied and its answer lost: membership tells.
        const member = await settle(() => isMember(client, orgId, slug), waits);
        if (member.ok) return { outcome: 'already-done', reason: 'the invitation is no longer pending and you are a member of the organisation' };
        // Interrupted before the checks were done (a membership that takes a moment to show may not
        // have yet), or the last check failed: whether it was accepted is not known.
        if (member.checked !== 'not-listed' || waits.signal?.aborted === true) {
          const why =
            member.checked === 'failed' && waits.signal?.aborted !== true
              ? describeNonMembership(orgId, member)
              : `apply was interrupted before your membership of organisation ${JSON.stringify(orgId)} could be confirmed (last check: ${member.why})`;
          throw new ChangeFailedError('acceptInvitation', `${(err as Error).message}; whether the invitation was accepted is not known: ${why}. Run orgform apply again: it checks`, err);
        }
        throw new ChangeFailedError('acceptInvitation', `${(err as Error).message}; and ${describeNonMembership(orgId, member)}, so the invitation was not accepted`, err);
      }
      // Wait (bounded) until the listing shows the membership, so that the next plan, which takes
      // membership from the listing, agrees with what was just done. Accepted either way.
      await settle(() => isMember(client, orgId, slug), waits);
      return { outcome: 'applied' };
    case 'revoke-invitation':
    case 'remove-channel':
      return deleteTarget(change, client, waits);
    default: {
      const unreachable: never = change.kind;
      throw new Error(`unknown change kind ${String(unreachable)}`);
    }
  }
}

async function deleteTarget(change: ApplicableChange, client: OrganisationsClient, waits: Waits): Promise<ExecutionResult> {
  const orgId = change.organisation.id;
  const target = change.targetId ?? '';
  const label = change.address;
  const send = () =>
    change.kind === 'revoke-invitation' ? client.deleteInvitation(orgId, target, { label }) : client.deleteNotificationChannel(orgId, target, { label });
  for (let retry = 0; ; retry += 1) {
    try {
      await send();
      return { outcome: 'applied' };
    } catch (err) {
      if (err instanceof ApiError && err.status === 410) return { outcome: 'already-done', reason: 'the service says it is gone (HTTP 410)' };
      if (!isNotFound(err)) throw err;
      if (!isServiceNotFound(err)) {
        // No Error body: a proxy or gateway answered, not the service. Nothing says the target is gone.
        const delay = waits.foreign404[retry];
        if (delay !== undefined) {
          await waits.sleep(delay);
          continue;
        }
        throw new ChangeFailedError(
          err.operation,
          `${err.message}; a 404 without the service's Error body comes from something in front of the service (a proxy or gateway), so this is not counted as done. Check the base URL and the route to ${change.kind === 'remove-channel' ? '/api/v2' : '/api/organisations/v1'}, then run apply again`,
          err,
        );
      }
      // Gone already (perhaps by our own earlier attempt whose answer was lost), but only while
      // you are still a member; otherwise the 404 may mean no access.
      const member = await isMember(client, orgId, change.organisation.slug);
      if (member.ok) return { outcome: 'already-done', reason: 'found already gone' };
      const next = member.checked === 'not-listed' ? '' : '; run orgform apply again: it checks';
      throw new ChangeFailedError(err.operation, `${err.message}; and ${describeNonMembership(orgId, member)}, so this is not counted as done${next}`, err);
    }
  }
}

/** Why a billing change was not written: the reason of a `stale` outcome. */
function staleReason(what: string): string {
  return `${what}; nothing was written for this organisation. Run orgform plan again to review it`;
}

const show = (value: string | null) => (value === null ? '(none)' : JSON.stringify(value));

/**
 * A billing change: the organisation's billing as it is now, then the declared fields over it, or
 * nothing (already holds them, or stale). Never built from a read older than `maxReadAgeMs`, nor
 * sent later than that after its read: a write held longer (a 429's pause, a retry's backoff) is
 * not sent, but built again from a new read, under a new Idempotency-Key (its body may differ).
 */
async function writeBilling(change: ApplicableChange, client: OrganisationsClient, waits: Waits, options: ExecuteOptions): Promise<ExecutionResult> {
  const declared = change.declared;
  if (declared === undefined) throw new Error(`plan change ${change.address} has no declared billing`);
  // A write goes out moments after its read; a bound of 0 ("always read by id first") still lets it.
  const sendWithinMs = sendWindowMs(options.maxReadAgeMs);
  const now = options.now ?? Date.now;
  let fresh = options.fresh;
  /** Builds whose read was answered already too old to send a write from (a slow service, not a held write). */
  let late = 0;
  for (let build = 1; ; build += 1) {
    const read =
      change.knownAfter !== undefined
        ? await billingAfterJoin(change, client, waits)
        : await billingNow(change, client, { ...options, ...(fresh === undefined ? {} : { fresh }) });
    if ('outcome' in read) return read;
    if (now() - read.readAt > sendWithinMs) late += 1;
    const decision = decideBillingWrite(declared, change.seen, read.values);
    switch (decision.kind) {
      case 'current':
        return {
          outcome: 'already-done',
          reason: change.knownAfter !== undefined ? 'the billing read after joining already holds the declared values' : 'the service already holds the declared values',
        };
      case 'stale': {
        const fields = decision.changed.map((c) => `billing.${c.field} changed on the service since the plan, from ${show(c.seen)} to ${show(c.now)} (the plan showed ${c.seen === c.declared ? 'no change to it' : `${show(c.seen)} → ${show(c.declared)}`})`);
        return { outcome: 'stale', reason: staleReason(fields.join('; ')) };
      }
      case 'write':
        try {
          await client.updateBillingDetails(change.organisation.id, decision.body, { idempotencyKey: randomUUID(), label: change.address, notAfter: read.readAt + sendWithinMs });
        } catch (err) {
          if (!(err instanceof NotSentError && err.readTooOld)) throw err;
          if (build >= MAX_BILLING_BUILDS) {
            const why =
              late === build
                ? `each time the read itself was answered more than ${sendWithinMs} ms after it was sent (the service is slow to answer), too late to build a write from`
                : `each time its write was held (rate limit, retries${late > 0 ? ', or the read came late' : ''}) until the read was older than ${sendWithinMs} ms`;
            throw new ChangeFailedError(
              'updateBillingDetails',
              `the billing of organisation ${JSON.stringify(change.organisation.slug)} (${change.organisation.id}) was read ${MAX_BILLING_BUILDS} times, and ${why}, so it was not sent. Nothing was written; run orgform apply again later`,
              // Not the NotSentError: that would report the change as not started, as an interrupt does.
              undefined,
            );
          }
          // Read again by id: the listing's read is the one that aged.
          fresh = undefined;
          await options.beforeReadAgain?.();
          continue;
        }
        return { outcome: 'applied' };
      default: {
        const unreachable: never = decision;
        throw new Error(`unknown billing decision ${JSON.stringify(unreachable)}`);
      }
    }
  }
}

/**
 * The billing of a member organisation as it is now: from the listing apply just read, when it shows
 * billing and the read is recent enough; otherwise read by id, now. Membership comes from a listing
 * (the plan's, or the one apply streams), never from a successful read by id.
 */
async function billingNow(change: ApplicableChange, client: OrganisationsClient, options: ExecuteOptions): Promise<{ values: BillingValues; readAt: number } | ExecutionResult> {
  const { id, slug } = change.organisation;
  const fresh = options.fresh;
  const now = options.now ?? Date.now;
  if (fresh?.kind === 'unreadable') {
    throw new ChangeFailedError(
      'getOrganisations',
      `${errorMessage(fresh.error)}; the listing apply reads just before writing failed before it reached organisation ${JSON.stringify(slug)} (${id}), and billing is written only from what was just read. Nothing was written; run orgform apply again`,
      fresh.error,
    );
  }
  if (fresh?.kind === 'unlisted') {
    // Read to its end without it: left, or missed by a listing that shifted as it was read. One
    // small filtered listing tells; one that fails tells nothing.
    let listed = false;
    try {
      for await (const org of client.listOrganisations({ filter: slug })) {
        if (org.id !== id) continue;
        listed = true;
        break;
      }
    } catch (err) {
      throw new ChangeFailedError(
        'getOrganisations',
        `${errorMessage(err)}; organisation ${JSON.stringify(slug)} (${id}) was not in the listing read just before writing, and asking the listing filtered by its slug failed. Nothing was written; run orgform apply again`,
        err,
      );
    }
    if (!listed) return { outcome: 'stale', reason: staleReason(`organisation ${JSON.stringify(slug)} (${id}) is no longer among your organisations (the listing does not show it)`) };
  }
  if (fresh?.kind === 'listed') {
    if (fresh.slug !== slug) return slugChanged(change, fresh.slug);
    const maxAge = options.maxReadAgeMs ?? DEFAULT_READ_MAX_AGE_MS;
    if (fresh.billing !== null && now() - fresh.readAt <= maxAge) return { values: fresh.billing, readAt: fresh.readAt };
  }
  let org;
  let readAt: number;
  try {
    ({ organisation: org, sentAt: readAt } = await client.readOrganisation(id));
  } catch (err) {
    if (isServiceNotFound(err)) {
      return { outcome: 'stale', reason: staleReason(`organisation ${JSON.stringify(slug)} (${id}) can no longer be read (${describeError(err)}): it was deleted, or you left it, since the plan`) };
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

function slugChanged(change: ApplicableChange, slug: string): ExecutionResult {
  const { id, slug: planned } = change.organisation;
  return { outcome: 'stale', reason: staleReason(`organisation ${id} is now called ${JSON.stringify(slug)}, not ${JSON.stringify(planned)} as planned`) };
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * The billing of an organisation joined by this apply: read now that the accept has succeeded
 * (waiting a little while a new membership does not show yet).
 */
async function billingAfterJoin(change: ApplicableChange, client: OrganisationsClient, waits: Waits): Promise<{ values: BillingValues; readAt: number }> {
  const orgId = change.organisation.id;
  const read = await settle(async () => {
    try {
      const { organisation, sentAt } = await client.readOrganisation(orgId);
      return { ok: true as const, org: organisation, sentAt };
    } catch (err) {
      if (isNotFound(err) || isForbidden(err)) return { ok: false as const, err };
      throw err;
    }
  }, waits).catch((err: unknown) => ({ ok: false as const, err }));
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
