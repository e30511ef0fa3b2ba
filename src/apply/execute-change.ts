/**
 * One change against the service, with the idempotent outcomes that make apply safe to run again:
 * a delete that finds its target gone is done (while the organisation is still readable), and an
 * accept whose answer was lost or "not found" is done only if the user is now a member.
 */
import { randomUUID } from 'node:crypto';
import { ApiError, isNotFound, TransportError } from '../api/api-error.js';
import type { OrganisationsClient } from '../api/client.js';
import type { Change } from '../plan/types.js';
import type { Outcome } from './events.js';

export interface ExecutionResult {
  outcome: Extract<Outcome, 'applied' | 'already-done'>;
  reason?: string;
}

/** Thrown when a change failed; `cause` is the service's or the transport's error. */
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

async function isReadable(client: OrganisationsClient, organisationId: string): Promise<{ ok: true } | { ok: false; why: string }> {
  try {
    await client.getOrganisation(organisationId);
    return { ok: true };
  } catch (err) {
    return { ok: false, why: err instanceof ApiError ? `HTTP ${err.status}${err.serviceCode ? ` ${err.serviceCode}` : ''}` : (err as Error).message };
  }
}

export async function executeChange(change: Change, client: OrganisationsClient): Promise<ExecutionResult> {
  const orgId = change.organisation.id;
  const target = change.targetId ?? '';
  // Retries of this change's requests are reported under its address.
  const label = change.address;
  switch (change.kind) {
    case 'billing':
      await client.updateBillingDetails(orgId, change.request ?? {}, { idempotencyKey: randomUUID(), label });
      return { outcome: 'applied' };
    case 'set-active':
      await client.setActiveOrganisation(orgId, { idempotencyKey: randomUUID(), label });
      return { outcome: 'applied' };
    case 'accept-invitation':
      try {
        await client.acceptInvitation(orgId, target, { idempotencyKey: randomUUID(), label });
        return { outcome: 'applied' };
      } catch (err) {
        if (!isNotFound(err) && !(err instanceof TransportError)) throw err;
        // The first attempt may have been applied and its answer lost: membership tells.
        const member = await isReadable(client, orgId);
        if (member.ok) return { outcome: 'already-done', reason: 'the invitation is no longer pending and you are a member of the organisation' };
        throw new ChangeFailedError(
          'acceptInvitation',
          `${(err as Error).message}; and organisation ${JSON.stringify(orgId)} is not readable (${member.why}), so the invitation was not accepted`,
          err,
        );
      }
    case 'revoke-invitation':
    case 'remove-channel':
      try {
        if (change.kind === 'revoke-invitation') await client.deleteInvitation(orgId, target, { label });
        else await client.deleteNotificationChannel(orgId, target, { label });
        return { outcome: 'applied' };
      } catch (err) {
        if (!isNotFound(err)) throw err;
        // Gone already (perhaps by our own earlier attempt whose answer was lost) — but only
        // trust that while the organisation itself answers; otherwise the 404 may mean no access.
        const readable = await isReadable(client, orgId);
        if (readable.ok) return { outcome: 'already-done', reason: 'found already gone' };
        throw new ChangeFailedError(
          (err as ApiError).operation,
          `${(err as Error).message}; and organisation ${JSON.stringify(orgId)} is not readable (${readable.why}), so this is not counted as done`,
          err,
        );
      }
    default: {
      const unreachable: never = change.kind;
      throw new Error(`unknown change kind ${String(unreachable)}`);
    }
  }
}
