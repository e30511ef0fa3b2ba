/**
 * The errors a remote journal gives the changes whose entries it could not make durable. The run's
 * own report of the loss (lockLostError, state-backend.ts) says the rest once; each change says only
 * why it is not recorded.
 */
import { OrgformError } from '../errors.js';

/** An entry that is not durable: its change is done on the service, and the next plan shows it again. */
export function journalNotWrittenError(location: string, why: string): OrgformError {
  return new OrgformError('STATE_LOCK_LOST', `the state at ${location} did not record it (${why.replace(/\.$/, '')})`);
}

/** What a lost write leaves unrecorded, after the reason: `N recorded entries are not written, nor any recorded after`. */
export function unwrittenAfter(why: string, unwritten: number): string {
  if (unwritten === 0) return `${why}; every entry recorded before is written, and none recorded after will be`;
  return `${why}; ${unwritten} recorded entr${unwritten === 1 ? 'y is' : 'ies are'} not written, nor any recorded after (the changes in flight)`;
}
