/**
 * One organisation's changes, as apply runs them: its accepts first, each tried on its own, then
 * the rest in plan order.
 *
 * Accepts are alternatives, not a chain: any one of them makes you a member, which is all the
 * organisation's other changes need (billing, revocations, channel removals, and setting it active).
 * So an accept that fails (an invitation sent to another address, one revoked since) does not stop
 * the next one, and every failure is reported. Once one has made you a member, the ones left are
 * not sent: they end "already done", as the plan would have it (membership decides an accept, see
 * plan/is-recorded-done.ts), so that no invitation is used up for nothing and none of them fails an
 * apply whose organisation was joined. The other changes wait for the membership, not for one
 * invitation: they are skipped only when every accept failed, and the reason names them all.
 *
 * Pure sequencing: running a change, interrupts and the journal are the caller's (`run`).
 */
import type { ChangeKind } from '../model/change-kind.js';
import type { Outcome } from './events.js';

/** An end decided without sending anything: skipped (what it needs did not happen) or already done. */
export interface Decided {
  outcome: Extract<Outcome, 'skipped' | 'already-done'>;
  reason: string;
}

/** Runs change `index`, or ends it as `decided` says; resolves to how it ended. */
export type RunChange = (index: number, decided?: Decided) => Promise<Outcome>;

export interface OrganisationChange {
  /** The change's index in the plan, passed to `run`. */
  index: number;
  kind: ChangeKind;
  address: string;
}

/**
 * Runs the changes of one organisation (set-active apart: it runs later, on its own). Resolves to
 * what a change that needs this organisation's membership but runs later must be ended with:
 * undefined when nothing stands in its way.
 */
export async function runOrganisationChanges(changes: readonly OrganisationChange[], run: RunChange): Promise<Decided | undefined> {
  const accepts = changes.filter((c) => c.kind === 'accept-invitation');
  const failed: string[] = [];
  let joinedBy: string | undefined;
  for (const accept of accepts) {
    if (joinedBy !== undefined) {
      await run(accept.index, { outcome: 'already-done', reason: `you are a member of the organisation now (${joinedBy}); not sent` });
      continue;
    }
    const outcome = await run(accept.index);
    if (outcome === 'applied' || outcome === 'already-done') joinedBy = accept.address;
    else if (outcome === 'failed') failed.push(accept.address);
  }
  // Only when every accept failed is the membership known to be missing. One not started (an
  // interrupt) might have worked: what follows is then "not started" too, not "skipped".
  const blocked: Decided | undefined =
    accepts.length > 0 && failed.length === accepts.length
      ? { outcome: 'skipped', reason: `depends on membership of the organisation, which no accept gave (${failed.join(', ')} failed)` }
      : undefined;
  for (const change of changes) if (change.kind !== 'accept-invitation') await run(change.index, blocked);
  return blocked;
}
