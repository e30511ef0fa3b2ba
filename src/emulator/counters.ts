/**
 * What the emulator counts and logs, for tests and benchmarks. The log never holds a token: only
 * how the caller presented one.
 */
import { OPERATION_IDS, type OperationId } from '../api/types.js';

export type CountedOperation = OperationId | 'unknown';

export interface EmulatorCounters {
  /** Service requests received (admin requests are not counted). */
  total: number;
  byOperation: Record<CountedOperation, number>;
  /** PUT and DELETE requests that reached processing (faulted-away and replayed ones do not). */
  writes: number;
  /** Service requests answered 429 by the rate limit (not injected 429 faults). */
  rateLimited: number;
  inFlight: number;
  maxInFlight: number;
}

export interface RequestLogEntry {
  method: string;
  /** Raw, as received (percent-encodings and query string kept). */
  path: string;
  operation: CountedOperation;
  status: number | 'dropped' | 'lost' | 'hang';
  idempotencyKey?: string;
  requestId?: string;
  authorization: 'bearer' | 'cookie' | 'none';
}

/** Beyond this many entries the oldest half is discarded, so long benchmarks stay in bounded memory. */
export const REQUEST_LOG_LIMIT = 100_000;

export function createCounters(): EmulatorCounters {
  return { total: 0, byOperation: zeroByOperation(), writes: 0, rateLimited: 0, inFlight: 0, maxInFlight: 0 };
}

/** Zeroes in place, so references held by tests stay live; requests still in flight stay counted as such. */
export function resetCounters(counters: EmulatorCounters): void {
  counters.total = 0;
  for (const key of Object.keys(counters.byOperation) as CountedOperation[]) counters.byOperation[key] = 0;
  counters.writes = 0;
  counters.rateLimited = 0;
  counters.maxInFlight = counters.inFlight;
}

export function appendToLog(log: RequestLogEntry[], entry: RequestLogEntry): void {
  if (log.length >= REQUEST_LOG_LIMIT) log.splice(0, REQUEST_LOG_LIMIT / 2);
  log.push(entry);
}

function zeroByOperation(): Record<CountedOperation, number> {
  const counts = { unknown: 0 } as Record<CountedOperation, number>;
  for (const id of OPERATION_IDS) counts[id] = 0;
  return counts;
}
