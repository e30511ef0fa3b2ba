/**
 * Membership as the listing shows it, and the waits that give a new membership time to show. A
 * service may let non-members read an organisation, so a successful GetOrganisation proves nothing:
 * membership comes only from the listing filtered by the organisation's slug (one small request).
 */
import { isNotFound, NotSentError } from '../api/api-error.js';
import type { OrganisationsClient } from '../api/client.js';
import { describeError } from './change-outcome.js';

export const DEFAULT_BACKOFF_BASE_MS = 250;
/** Re-reads after an accept: a service may take a moment to show a new membership (4 waits, doubling). */
const SETTLE_STEPS = [1, 2, 4, 8];
/** Retries of a 404 that did not come from the service (no Error body: a proxy or gateway). */
const FOREIGN_404_STEPS = [2, 4];

/** The waits inside a change, the same for every change of a run. */
export interface Waits {
  sleep: (ms: number) => Promise<void>;
  settle: number[];
  foreign404: number[];
  /** Apply's interrupt: a wait ends at once, and no re-read follows. */
  signal: AbortSignal | undefined;
}

export interface WaitOptions {
  /** Waits between re-reads; injected in tests. */
  sleep?: (ms: number) => Promise<void>;
  /** Apply's interrupt: ends those waits at once. */
  signal?: AbortSignal;
  /** First step of those waits, doubling (the retry policy's base: ORGFORM_RETRY_BASE_MS). */
  backoffBaseMs?: number;
}

export function waitsFor(options: WaitOptions): Waits {
  const base = options.backoffBaseMs ?? DEFAULT_BACKOFF_BASE_MS;
  return {
    sleep: interruptibleSleep(options.sleep, options.signal),
    settle: SETTLE_STEPS.map((n) => n * base),
    foreign404: FOREIGN_404_STEPS.map((n) => n * base),
    signal: options.signal,
  };
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

export type Membership = { ok: true } | { ok: false; why: string; checked: 'not-listed' | 'failed' | 'not-sent' };

export async function isMember(client: OrganisationsClient, organisationId: string, slug: string): Promise<Membership> {
  try {
    for await (const org of client.listOrganisations({ filter: slug })) if (org.id === organisationId) return { ok: true };
    return { ok: false, why: 'it is not among your organisations', checked: 'not-listed' };
  } catch (err) {
    // Not sent (an interrupt, the run stopped): nothing is known about the membership.
    return { ok: false, why: describeError(err), checked: err instanceof NotSentError ? 'not-sent' : 'failed' };
  }
}

/**
 * One organisation's membership, read for all of its changes that ask (each delete answered 404
 * does, while they run at once). A read vouches only for the 404s answered before it was sent: one
 * sent earlier (on its way, or answered, however young) may predate your removal from the
 * organisation, and the 404 would then mean no access, not gone. So a change that asks while no
 * read is on its way sends one; those that ask while one is on its way share the next, sent once it
 * has answered. At most one read is on its way for an organisation, and a read that failed serves
 * only those that asked before it was sent.
 */
export class SharedMembership {
  /** The read on its way. */
  private current: Promise<Membership> | undefined;
  /** The read to send once the current one has answered, for those that asked after it was sent. */
  private following: Promise<Membership> | undefined;

  /** `readNow`: one membership read, sent now. */
  constructor(private readonly readNow: () => Promise<Membership>) {}

  check(): Promise<Membership> {
    const current = this.current;
    if (current === undefined) return this.send();
    const sendNext = () => {
      this.following = undefined;
      return this.send();
    };
    this.following ??= current.then(sendNext, sendNext);
    return this.following;
  }

  private send(): Promise<Membership> {
    const read = this.readNow();
    this.current = read;
    const answered = () => {
      if (this.current === read) this.current = undefined;
    };
    void read.then(answered, answered);
    return read;
  }
}

/** What a failed membership check says, true to what was learnt: only a listing that answered without the organisation says "not a member". */
export function describeNonMembership(organisationId: string, member: Exclude<Membership, { ok: true }>): string {
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
export async function settle<T extends { ok: boolean }>(attempt: () => Promise<T>, waits: Waits): Promise<T> {
  let result = await attempt();
  for (const delay of waits.settle) {
    if (result.ok || waits.signal?.aborted) break;
    await waits.sleep(delay);
    result = await attempt();
  }
  return result;
}

/** A 404 carries the service's Error body when the service itself says "not found". */
export function isServiceNotFound(err: unknown): boolean {
  return isNotFound(err) && err.serviceCode !== undefined;
}
