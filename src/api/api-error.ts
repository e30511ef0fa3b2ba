import { OrgformError } from '../errors.js';
import type { OperationId } from './types.js';

/** The service answered with a failure status. Carries the Error body's code, message and cause. */
export class ApiError extends OrgformError {
  readonly operation: OperationId;
  readonly status: number;
  /** The Error body's `code`, when the body had the Error shape. */
  readonly serviceCode: string | undefined;
  readonly serviceMessage: string | undefined;
  readonly serviceCause: string | undefined;
  readonly attempts: number;
  readonly requestId: string;
  /** What to do about it, when orgform knows (check the token, Retry-After beyond the budget...). */
  readonly hint: string | undefined;

  constructor(init: {
    operation: OperationId;
    target: string;
    status: number;
    serviceCode?: string;
    serviceMessage?: string;
    serviceCause?: string;
    attempts: number;
    requestId: string;
    hint?: string;
  }) {
    const body = init.serviceCode
      ? `${init.serviceCode}: ${init.serviceMessage ?? ''}${init.serviceCause ? ` (cause: ${init.serviceCause})` : ''}`
      : 'no error details in the answer';
    const tries = init.attempts > 1 ? ` after ${init.attempts} attempts` : '';
    // The service's message as it was sent: a sentence it ended is not ended twice.
    const hint = init.hint ? `${/[.!?]$/.test(body) ? '' : '.'} ${init.hint}` : '';
    super('API_ERROR', `${init.operation} ${init.target} failed with HTTP ${init.status}${tries}: ${body}${hint}`);
    this.name = 'ApiError';
    this.operation = init.operation;
    this.status = init.status;
    this.serviceCode = init.serviceCode;
    this.serviceMessage = init.serviceMessage;
    this.serviceCause = init.serviceCause;
    this.attempts = init.attempts;
    this.requestId = init.requestId;
    this.hint = init.hint;
  }
}

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
  readonly operation: OperationId;
  readonly failure: TransportFailure;
  readonly attempts: number;

  constructor(init: { operation: OperationId; target: string; failure: TransportFailure; detail: string; attempts: number; cause?: Error }) {
    const tries = init.attempts > 1 ? ` after ${init.attempts} attempts` : '';
    super('TRANSPORT_ERROR', `${init.operation} ${init.target} failed${tries}: ${init.detail}`, { cause: init.cause });
    this.name = 'TransportError';
    this.operation = init.operation;
    this.failure = init.failure;
    this.attempts = init.attempts;
  }
}

/**
 * A request that was never sent: it waited its turn (at the rate limiter, in a backoff, for a token)
 * when the run was interrupted or stopped. Nothing reached the service, so nothing was done.
 */
export class NotSentError extends OrgformError {
  readonly operation: OperationId | undefined;
  /** Why: `interrupted`, or why the run stopped. */
  readonly why: string;
  /** Held past its `notAfter` (a write built from a read that has aged meanwhile): read again and rebuilt, it may go. */
  readonly readTooOld: boolean;

  /** `letGo`: a read that was sent, its answer not waited for (nothing is made of it, as of one not sent). */
  constructor(init: { operation?: OperationId; target?: string; why: string; readTooOld?: boolean; letGo?: boolean }) {
    super('INTERRUPTED', `${init.operation === undefined ? 'the request' : `${init.operation} ${init.target ?? ''}`.trimEnd()} was ${init.letGo === true ? 'let go unanswered' : 'not sent'}: ${init.why}`);
    this.name = 'NotSentError';
    this.operation = init.operation;
    this.why = init.why;
    this.readTooOld = init.readTooOld ?? false;
  }
}

export function isApiError(err: unknown): err is ApiError {
  return err instanceof ApiError;
}

/** True when the service said the thing is not there (HTTP 404). */
export function isNotFound(err: unknown): err is ApiError {
  return err instanceof ApiError && err.status === 404;
}

/** True when the service refused access (HTTP 403), as some services answer for organisations you have not joined yet. */
export function isForbidden(err: unknown): err is ApiError {
  return err instanceof ApiError && err.status === 403;
}
