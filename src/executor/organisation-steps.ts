/**
 * One organisation's changes, in the order apply starts them: its accepts first, one at a time,
 * each tried on its own; then the rest (billing, revocations, channel removals), all at once as
 * workers take them, in plan order: none of them needs another, only the membership.
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
 * Pure sequencing, a state machine: the caller runs each step `take` gives (several at once after
 * the accepts) and tells how it `ended`.
 */
import type { ChangeKind } from '../model/change-kind.js';
import type { Outcome } from './events.js';

/** An end decided without sending anything: skipped (what it needs did not happen) or already done. */
export interface Decided {
  outcome: Extract<Outcome, 'skipped' | 'already-done'>;
  reason: string;
}

export interface OrganisationChange {
  /** The change's index in the plan. */
  index: number;
  kind: ChangeKind;
  address: string;
}

/** A change to run, or to end as `decided` says without sending it. */
export interface Step {
  index: number;
  decided: Decided | undefined;
}

export class OrganisationSteps {
  private readonly accepts: OrganisationChange[];
  private readonly others: OrganisationChange[];
  /** How many of the accepts, then of the others, `take` has handed out. */
  private acceptsTaken = 0;
  private othersTaken = 0;
  /** Steps handed out and not ended yet. */
  private running = 0;
  private acceptRunning = false;
  private joinedBy: string | undefined;
  private readonly failedAccepts: string[] = [];
  private decidedOthers: Decided | undefined;

  /** The changes of one organisation, set-active apart (it runs later, on its own). */
  constructor(changes: readonly OrganisationChange[]) {
    this.accepts = changes.filter((c) => c.kind === 'accept-invitation');
    this.others = changes.filter((c) => c.kind !== 'accept-invitation');
  }

  /**
   * A step that may start now: the next accept once the one before has ended, then any of the
   * others once every accept has. Undefined while an accept runs, and once all are handed out.
   */
  take(): Step | undefined {
    if (this.acceptRunning) return undefined;
    const accept = this.accepts[this.acceptsTaken];
    if (accept !== undefined) {
      this.acceptsTaken += 1;
      this.running += 1;
      this.acceptRunning = true;
      const decided: Decided | undefined =
        this.joinedBy === undefined ? undefined : { outcome: 'already-done', reason: `you are a member of the organisation now (${this.joinedBy}); not sent` };
      return { index: accept.index, decided };
    }
    const other = this.others[this.othersTaken];
    if (other === undefined) return undefined;
    if (this.othersTaken === 0) this.decidedOthers = this.blocked();
    this.othersTaken += 1;
    this.running += 1;
    return { index: other.index, decided: this.decidedOthers };
  }

  /** How step `index` ended. */
  ended(index: number, outcome: Outcome): void {
    this.running -= 1;
    const accept = this.accepts.find((a) => a.index === index);
    if (accept === undefined) return;
    this.acceptRunning = false;
    if (this.joinedBy !== undefined) return;
    if (outcome === 'applied' || outcome === 'already-done') this.joinedBy = accept.address;
    else if (outcome === 'failed') this.failedAccepts.push(accept.address);
  }

  /** Whether every step has been handed out and has ended. */
  get done(): boolean {
    return this.running === 0 && this.acceptsTaken === this.accepts.length && this.othersTaken === this.others.length;
  }

  /**
   * What a change that needs this organisation's membership must be ended with (its other changes,
   * and set-active later): undefined when nothing stands in its way. Only when every accept failed
   * is the membership known to be missing. One not started (an interrupt) might have worked: what
   * follows is then "not started" too, not "skipped".
   */
  blocked(): Decided | undefined {
    if (this.accepts.length === 0 || this.failedAccepts.length < this.accepts.length) return undefined;
    return { outcome: 'skipped', reason: `depends on membership of the organisation, which no accept gave (${this.failedAccepts.join(', ')} failed)` };
  }
}
