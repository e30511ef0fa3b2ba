/**
 * Words every state backend says alike: how a refusal ends, how to break a lock, that there is no
 * lock to break; and the errors a remote journal gives the changes whose entries it could not make
 * durable (the run's own report of the loss, lockLostError in state-backend.ts, says the rest once).
 */
import { OrgformError } from '../errors.js';

/** How a refusal that changed nothing ends (text/plan/plan-headline.ts says it for a plan). */
export const NOTHING_CHANGED = 'Nothing was changed.';

/** How to break the lock `id` of a remote state. */
export function forceUnlockHint(id: string): string {
  return `orgform force-unlock ${id} with the same --state (or ORGFORM_STATE)`;
}

/** A force-unlock of a state that no one holds. */
export function noLockError(location: string): OrgformError {
  return new OrgformError('STATE_LOCKED', `There is no lock on the state at ${location}; nothing was changed.`);
}

/** A force-unlock with an ID that no holder has: who holds it (`heldBy`, described), if anyone. */
export function noLockWithIdError(location: string, id: string, heldBy: string): OrgformError {
  return new OrgformError('STATE_LOCKED', `The state at ${location} has no lock with ID ${id}${heldBy === '' ? '' : `; it is held by ${heldBy}`}. ${NOTHING_CHANGED}`);
}

/** An entry that is not durable: its change is done on the service, and the next plan shows it again. */
export function journalNotWrittenError(location: string, why: string): OrgformError {
  return new OrgformError('STATE_LOCK_LOST', `the state at ${location} did not record it (${why.replace(/\.$/, '')})`);
}

/** What a lost write leaves unrecorded, after the reason: `N recorded entries are not written, nor any recorded after`. */
export function unwrittenAfter(why: string, unwritten: number): string {
  if (unwritten === 0) return `${why}; every entry recorded before is written, and none recorded after will be`;
  return `${why}; ${unwritten} recorded entr${unwritten === 1 ? 'y is' : 'ies are'} not written, nor any recorded after (the changes in flight)`;
}
