/**
 * The two ways a request fails without an answer orgform can use: it got none (TransportError: the
 * network, a timeout, an answer that is not what was asked for) or it was never sent (NotSentError).
 * Both redact in their constructors, with the run's Redactor: what the caller hands them (a target,
 * the words of a failure, an underlying error) goes in as it is, and comes out safe to show.
 */
import { OrgformError } from '../errors.js';
import { Redactor } from '../redact.js';

export type TransportFailure =
  | 'timeout'
  | 'connection'
  | 'too-large'
  | 'bad-response'
  | 'redirect'
  | 'aborted'
  /** Only 429s came back for too long (the rate limiter's no-progress watchdog). */
  | 'rate-limited'
  /** No token to send: the token command failed. */
  | 'token';

/** No usable answer: the network failed, a timeout fired, or the answer was not what the interface describes. */
export class TransportError extends OrgformError {
  /** What was asked (`getOrganisation`, `reading the state`). */
  readonly operation: string;
  readonly failure: TransportFailure;
  readonly attempts: number;
  /** What went wrong, alone and redacted: for a message that says more around it. */
  readonly detail: string;

  constructor(init: { operation: string; target?: string; failure: TransportFailure; detail: string; attempts: number; cause?: unknown; redactor?: Redactor }) {
    const redactor = init.redactor ?? new Redactor();
    const detail = redactor.text(init.detail);
    const about = init.target === undefined || init.target === '' ? '' : ` ${redactor.text(init.target)}`;
    const tries = init.attempts > 1 ? ` after ${init.attempts} attempts` : '';
    super('TRANSPORT_ERROR', `${init.operation}${about} failed${tries}: ${detail}`, { cause: redactor.cause(init.cause) });
    this.name = 'TransportError';
    this.operation = init.operation;
    this.failure = init.failure;
    this.attempts = init.attempts;
    this.detail = detail;
  }
}

/**
 * A request that was never sent: it waited its turn (at the rate limiter, in a backoff, for a token)
 * when the run was interrupted or stopped, or until what it was built from was too old. Nothing
 * reached the service, so nothing was done.
 */
export class NotSentError extends OrgformError {
  readonly operation: string | undefined;
  /** Why: `interrupted`, or why the run stopped. */
  readonly why: string;
  /** Held past its `notAfter` (a write built from a read that has aged meanwhile): read again and rebuilt, it may go. */
  readonly readTooOld: boolean;

  /** `letGo`: a read that was sent, its answer not waited for (nothing is made of it, as of one not sent). */
  constructor(init: { operation?: string; target?: string; why: string; readTooOld?: boolean; letGo?: boolean; redactor?: Redactor }) {
    const target = init.target === undefined ? '' : (init.redactor ?? new Redactor()).text(init.target);
    super('INTERRUPTED', `${init.operation === undefined ? 'the request' : `${init.operation} ${target}`.trimEnd()} was ${init.letGo === true ? 'let go unanswered' : 'not sent'}: ${init.why}`);
    this.name = 'NotSentError';
    this.operation = init.operation;
    this.why = init.why;
    this.readTooOld = init.readTooOld ?? false;
  }
}
