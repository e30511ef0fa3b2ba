/**
 * Accepting an invitation. An accept whose answer was lost, or "not found", is done only if the
 * listing shows you a member: the first attempt may have been applied and its answer lost. Once
 * accepted, it waits (bounded) for the listing to show the membership, so that the next plan agrees.
 */
import { randomUUID } from 'node:crypto';
import { isNotFound, TransportError } from '../api/api-error.js';
import type { OrganisationsClient } from '../api/client.js';
import type { ApplicableChange } from '../plan/types.js';
import { APPLIED, ChangeFailedError, type ChangeOutcome } from './change-outcome.js';
import { describeNonMembership, isMember, settle, type Waits } from './membership.js';

export async function acceptInvitation(change: ApplicableChange, client: OrganisationsClient, waits: Waits): Promise<ChangeOutcome> {
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
