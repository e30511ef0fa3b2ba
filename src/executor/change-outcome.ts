/**
 * How one attempt at a change ended, as executeChange returns it to the runner (run-change.ts),
 * which decides what follows: a write held until its read was too old is read and built again in a
 * new turn; a failure whose request was never sent (an interrupt) ends the change "not started".
 */
import { ApiError } from '../api/api-error.js';
import type { ChangeFailure } from './events.js';

export type ChangeOutcome =
  | Done
  /** Nothing written: what it was planned from changed on the service since the plan. */
  | { kind: 'stale'; reason: string }
  /**
   * A billing write held (rate limit, retries) until its read was too old to send: nothing was sent.
   * `late`: the read itself was answered already too old to build a write from (a slow service).
   */
  | { kind: 'read-again'; late?: boolean }
  /** `error`: a ChangeFailedError, or the service's or the transport's error as it came. */
  | { kind: 'failed'; error: unknown };

/** Done, by this attempt or before it. */
export type Done = { kind: 'applied' | 'already-done'; reason?: string };

export const APPLIED: ChangeOutcome = Object.freeze({ kind: 'applied' });
export const READ_AGAIN: ChangeOutcome = Object.freeze({ kind: 'read-again' });
export const READ_AGAIN_LATE: ChangeOutcome = Object.freeze({ kind: 'read-again', late: true });

/** A change that failed; `underlying` is the service's or the transport's error. */
export class ChangeFailedError extends Error {
  constructor(
    readonly operation: string,
    message: string,
    readonly underlying: unknown,
  ) {
    super(message);
    this.name = 'ChangeFailedError';
  }
}

/** An answer in a few words: `HTTP 404 organisation_not_found`, or the error's message. */
export function describeError(err: unknown): string {
  return err instanceof ApiError ? `HTTP ${err.status}${err.serviceCode ? ` ${err.serviceCode}` : ''}` : (err as Error).message;
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** A failure as apply reports it: the service's answer apart, and what orgform adds to it. */
export function describeFailure(err: unknown): ChangeFailure {
  const underlying = err instanceof ChangeFailedError ? err.underlying : err;
  const operation = err instanceof ChangeFailedError ? err.operation : ((underlying as { operation?: string }).operation ?? 'unknown');
  const message = errorMessage(err);
  if (!(underlying instanceof ApiError)) return { operation, message };
  // A ChangeFailedError explains, after the service's error, why it is a failure.
  const explanation = err instanceof ChangeFailedError && message.startsWith(`${underlying.message}; `) ? message.slice(underlying.message.length + 2) : undefined;
  const note = [underlying.hint, explanation].filter((n): n is string => n !== undefined && n !== '').join('; ');
  return {
    operation,
    message,
    status: underlying.status,
    serviceCode: underlying.serviceCode,
    serviceMessage: underlying.serviceMessage,
    serviceCause: underlying.serviceCause,
    ...(note === '' ? {} : { note }),
  };
}
