/**
 * The errors a call of the client can end in: ApiError (the service answered with a failure) and,
 * from the transport, TransportError (no usable answer) and NotSentError (never sent). Each redacts
 * in its constructor with the client's Redactor: the service's words may echo the token.
 */
import { OrgformError } from '../errors.js';
import { Redactor } from '../redact.js';
import type { OperationId } from './types.js';

export { NotSentError, TransportError, type TransportFailure } from '../transport/transport-error.js';

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

  /** The service's code, message and cause as it sent them: redacted, then cut (to 100, 500 and 500 characters). */
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
    redactor?: Redactor;
  }) {
    const redactor = init.redactor ?? new Redactor();
    const serviceCode = init.serviceCode === undefined ? undefined : redactor.short(init.serviceCode, 100);
    const serviceMessage = init.serviceMessage === undefined ? undefined : redactor.short(init.serviceMessage, 500);
    const serviceCause = init.serviceCause === undefined || init.serviceCause === '' ? undefined : redactor.short(init.serviceCause, 500);
    const hint = init.hint === undefined ? undefined : redactor.text(init.hint);
    const body = serviceCode ? `${serviceCode}: ${serviceMessage ?? ''}${serviceCause ? ` (cause: ${serviceCause})` : ''}` : 'no error details in the answer';
    const tries = init.attempts > 1 ? ` after ${init.attempts} attempts` : '';
    // The service's message as it was sent: a sentence it ended is not ended twice.
    const then = hint ? `${/[.!?]$/.test(body) ? '' : '.'} ${hint}` : '';
    super('API_ERROR', `${init.operation} ${redactor.text(init.target)} failed with HTTP ${init.status}${tries}: ${body}${then}`);
    this.name = 'ApiError';
    this.operation = init.operation;
    this.status = init.status;
    this.serviceCode = serviceCode;
    this.serviceMessage = serviceMessage;
    this.serviceCause = serviceCause;
    this.attempts = init.attempts;
    this.requestId = init.requestId;
    this.hint = hint;
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
