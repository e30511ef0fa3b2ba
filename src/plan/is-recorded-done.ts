/**
 * What decides whether a change is needed. Plan and apply ask the same question of each kind, so
 * that apply never calls "already done" what the plan showed as needed, nor the other way round:
 *
 * - accept-invitation: membership, as the listing shows it. The plan shows the accepts of an
 *   organisation you are not a member of; apply ends an accept "already done" only when you are a
 *   member (an earlier accept of the same organisation made you one, or the listing shows you one
 *   after a lost answer or a 404). Never the journal: a membership can be removed and an invitation
 *   accepted before be pending again.
 * - billing: the declared fields against the values read (plan/plan-organisation.ts; apply's
 *   read after a join, executor/write-billing.ts).
 * - set-active: the active organisation read.
 * - revoke-invitation, remove-channel: the journal, because the interface cannot list invitations
 *   or channels. The plan leaves out what it records done; apply ends such a change "already done"
 *   when the journal records it (a saved plan applied after another apply), and records each one it
 *   completes. This module is that one test.
 */
import type { ChangeKind } from '../model/change-kind.js';
import type { ApplicableChange } from './types.js';

/** Whether the journal records this one-shot change as done. */
export type IsJournaled = (kind: ChangeKind, organisationId: string, targetId: string) => boolean;

/** The kinds the journal decides; only these are recorded in it. */
export const JOURNALED_KINDS: ReadonlySet<ChangeKind> = new Set<ChangeKind>(['revoke-invitation', 'remove-channel']);

/** Whether `change` is done according to the journal: the plan leaves it out, apply ends it already done. */
export function isRecordedDone(change: Pick<ApplicableChange, 'kind' | 'organisation' | 'targetId'>, isJournaled: IsJournaled): boolean {
  return JOURNALED_KINDS.has(change.kind) && change.targetId !== undefined && isJournaled(change.kind, change.organisation.id, change.targetId);
}
