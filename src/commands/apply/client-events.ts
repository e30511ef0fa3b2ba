/**
 * The client's retries and rate changes as events of the apply that caused them, so that every
 * view hears of them the way it hears of changes ending.
 */
import type { RetryEvent } from '../../api/connect/client-listeners.js';
import type { RateEvent } from '../../api/rate/rate-gate.js';
import type { ApplyEvent } from '../../executor/events.js';

/** A retry of a change's request, under the change's address. (Retries of the plan's reads carry no address and are not shown.) */
export function retryEvent(retry: RetryEvent, at: number): ApplyEvent | undefined {
  if (retry.label === undefined) return undefined;
  const { requestId: _requestId, label, ...rest } = retry;
  return { type: 'change-retry', address: label, ...rest, at };
}

export function rateEvent(rate: RateEvent, at: number): ApplyEvent {
  return { type: 'rate', at, reason: rate.reason, pausedMs: rate.pausedMs, waiting: rate.waiting, ...(rate.rps === undefined ? {} : { rps: rate.rps }) };
}
