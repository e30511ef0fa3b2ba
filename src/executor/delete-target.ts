/**
 * Revoking an invitation or removing a notification channel. A delete answered 410 is done; a 404
 * with the service's Error body is done only while the listing shows you a member (otherwise it may
 * mean no access); a 404 without it came from something in front of the service and is tried
 * twice more, then fails.
 */
import { ApiError, isNotFound } from '../api/api-error.js';
import type { OrganisationsClient } from '../api/client.js';
import type { ApplicableChange } from '../plan/types.js';
import { APPLIED, ChangeFailedError, type ChangeOutcome } from './change-outcome.js';
import { describeNonMembership, isMember, isServiceNotFound, type Membership, type Waits } from './membership.js';

/** `membership`: the organisation's membership, as its changes share it (SharedMembership); by default read on its own. */
export async function deleteTarget(
  change: ApplicableChange,
  client: OrganisationsClient,
  waits: Waits,
  membership: () => Promise<Membership> = () => isMember(client, change.organisation.id, change.organisation.slug),
): Promise<ChangeOutcome> {
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
      const member = await membership();
      if (member.ok) return { kind: 'already-done', reason: 'found already gone' };
      const next = member.checked === 'not-listed' ? '' : '; run orgform apply again: it checks';
      throw new ChangeFailedError(err.operation, `${err.message}; and ${describeNonMembership(orgId, member)}, so this is not counted as done${next}`, err);
    }
  }
}
