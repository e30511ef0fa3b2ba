/**
 * The typed failure every store operation may return instead of data, and the HTTP answer it
 * becomes. Codes and statuses are those each response of schemas/organisations.openapi.yaml lists.
 */
import type { ErrorBody } from '../api/types.js';

export interface StoreFailure {
  status: number;
  code: string;
  message: string;
  cause?: string;
}

export type StoreResult<T> = { ok: true; value: T } | ({ ok: false } & StoreFailure);

export function succeed<T>(value: T): StoreResult<T> {
  return { ok: true, value };
}

export function fail(status: number, code: string, message: string, cause?: string): { ok: false } & StoreFailure {
  return cause === undefined ? { ok: false, status, code, message } : { ok: false, status, code, message, cause };
}

/** The Error body of a failure; `cause` is omitted when empty, as the interface says. */
export function toErrorBody(failure: StoreFailure): ErrorBody {
  const body: ErrorBody = { code: failure.code, message: failure.message };
  if (failure.cause) body.cause = failure.cause;
  return body;
}

/** The code that goes with a status when a fault or garbage needs a plausible Error body. */
export function codeForStatus(status: number): string {
  switch (status) {
    case 400:
      return 'invalid_request';
    case 401:
      return 'unauthenticated';
    case 403:
      return 'forbidden';
    case 404:
      return 'not_found';
    case 405:
      return 'method_not_allowed';
    case 413:
      return 'payload_too_large';
    case 422:
      return 'validation_failed';
    case 429:
      return 'rate_limited';
    case 502:
    case 503:
      return 'unavailable';
    case 504:
      return 'timeout';
    default:
      return status >= 500 ? 'internal' : 'error';
  }
}

export const organisationNotFound = (id: string) =>
  fail(404, 'organisation_not_found', 'No organisation with this identifier exists among yours.', `organisation ${id}`);
