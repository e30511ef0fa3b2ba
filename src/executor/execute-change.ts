/**
 * One attempt at one change against the service, with the idempotent outcomes that make apply safe
 * to run again: a delete answered 410, or 404 with the service's Error body while you are a member,
 * is done; an accept whose answer was lost or "not found" is done only if the listing shows you a
 * member; billing is written from what the service holds just before the write (write-billing.ts).
 * It returns how the attempt ended and never calls back: what follows (a new turn and a new build
 * for a write whose read aged, the journal, the events) is the runner's (run-change.ts).
 */
import { randomUUID } from 'node:crypto';
import { ApiError, isNotFound, TransportError } from '../api/api-error.js';
import type { OrganisationsClient } from '../api/client.js';
import type { ApplicableChange } from '../plan/types.js';
import { APPLIED, ChangeFailedError, type ChangeOutcome } from './change-outcome.js';
import { describeNonMembership, isMember, isServiceNotFound, settle, waitsFor, type WaitOptions, type Waits } from './membership.js';
import { DEFAULT_READ_MAX_AGE_MS, sendWindowMs, type ListingReread } from './reread-listing.js';
import { writeBilling, type BillingContext } from './write-billing.js';

/** What every change of a run is executed with; built once a run. */
export type ExecutionContext = BillingContext;

export interface ExecutionOptions extends WaitOptions {
  /** The oldest read a billing write may be built from (ORGFORM_READ_MAX_AGE_MS). */
  maxReadAgeMs?: number;
  now?: () => number;
}

export function executionContext(client: OrganisationsClient, options: ExecutionOptions = {}): ExecutionContext {
  return {
    client,
    waits: waitsFor(options),
    now: options.now ?? Date.now,
    maxReadAgeMs: options.maxReadAgeMs ?? DEFAULT_READ_MAX_AGE_MS,
    sendWindowMs: sendWindowMs(options.maxReadAgeMs),
  };
}

/**
 * `reread`: for a billing change, what the listing behind the writes read of its organisation;
 * without it, the organisation is read by id just before the write.
 */
export async function executeChange(change: ApplicableChange, context: ExecutionContext, reread?: ListingReread): Promise<ChangeOutcome> {
  try {
    switch (change.kind) {
      case 'billing':
        return await writeBilling(change, context, reread);
      case 'set-active':
        await context.client.setActiveOrganisation(change.organisation.id, { idempotencyKey: randomUUID(), label: change.address });
        return APPLIED;
      case 'accept-invitation':
        return await acceptInvitation(change, context.client, context.waits);
      case 'revoke-invitation':
      case 'remove-channel':
        return await deleteTarget(change, context.client, context.waits);
      default: {
        const unreachable: never = change.kind;
        throw new Error(`unknown change kind ${String(unreachable)}`);
      }
    }
  } catch (error) {
    return { kind: 'failed', error };
  }
}

async function acceptInvitation(change: ApplicableChange, client: OrganisationsClient, waits: Waits): Promise<ChangeOutcome> {
  const { id: orgId, slug } = change.organisation;
  try {
    await client.acceptInvitation(orgId, change.targetId ?? '', { idempotencyKey: randomUUID(), label: change.address });
  } catch (err) {
    if (!isNotFound(err) && !(err instanceof TransportError)) throw err;
    // The first attempt may have been applied and its answer lost: membership tells.
    const member = await settle(() => isMember(client, orgId, slug), waits);
    if (member.ok) return { kind: 'already-done', reason: 'the invitation is no longer pending and you are a member of the organisation' };
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
  return APPLIED;
}

async function deleteTarget(change: ApplicableChange, client: OrganisationsClient, waits: Waits): Promise<ChangeOutcome> {
  const orgId = change.organisation.id;
  const target = change.targetId ?? '';
  const label = change.address;
  for (let retry = 0; ; retry += 1) {
    try {
      if (change.kind === 'revoke-invitation') await client.deleteInvitation(orgId, target, { label });
      else await client.deleteNotificationChannel(orgId, target, { label });
      return APPLIED;
    } catch (err) {
      if (err instanceof ApiError && err.status === 410) return { kind: 'already-done', reason: 'the service says it is gone (HTTP 410)' };
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
      if (member.ok) return { kind: 'already-done', reason: 'found already gone' };
      const next = member.checked === 'not-listed' ? '' : '; run orgform apply again: it checks';
      throw new ChangeFailedError(err.operation, `${err.message}; and ${describeNonMembership(orgId, member)}, so this is not counted as done${next}`, err);
    }
  }
}
