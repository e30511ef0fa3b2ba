/**
 * The pipeline of one service request: count, route, let the gateway answer (gateway-404), take
 * a rate-limit token and a share of the quota, consult the fault rules, add latency, read the body, authenticate (token
 * lifetime included), process (or replay), reshape (success-body), answer, log.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { setTimeout as delay } from 'node:timers/promises';
import { timerDelay } from '../api/rate/timer-delay.js';
import { actOutFault, isAnsweringFault, renderHtmlPage, retryAfterInSeconds } from './act-out-fault.js';
import type { Behaviour } from './behaviour.js';
import { appendToLog, type EmulatorCounters, type RequestLogEntry } from './counters.js';
import type { FaultList } from './faults.js';
import { handleOperation, type OperationSettings } from './handle-operation.js';
import { errorAnswer, statusErrorAnswer, writeAnswer, type Answer } from './http-answer.js';
import { readBody, readCredentials, readHeader } from './read-request.js';
import { matchRoute, splitTarget } from './routes.js';
import type { Quota } from './quota.js';
import type { TokenBucket } from './rate-limit.js';
import type { EmulatorStore } from './store.js';
import type { TokenBook } from './tokens.js';

/** The older name of the first values of the `success-body` point (EmulatorOptions.successStyle). */
export type SuccessStyle = 'decided' | 'empty-200' | 'json-200';

export interface ServiceDependencies {
  store: EmulatorStore;
  faults: FaultList;
  counters: EmulatorCounters;
  requestLog: RequestLogEntry[];
  /** Aborted when the emulator stops: pending waits end and nothing more is written. */
  signal: AbortSignal;
  settings: () => OperationSettings;
  latencyMs: number;
  idempotency: boolean;
  /** The open points as played (success-body, retry-after and gateway-404 are this pipeline's). */
  behaviour: Readonly<Behaviour>;
  /** Absent: no rate limit. */
  rateLimiter?: TokenBucket;
  /** Absent: no quota. */
  quota?: Quota;
  tokens: TokenBook;
  /** Epoch milliseconds, for HTTP-date Retry-After. */
  clock: () => number;
  /** Every so many service requests, a subscription is renewed before the request is handled; absent: never. */
  renewEveryRequests?: number;
}

const IDEMPOTENCY_CACHE_LIMIT = 10_000;
const GATEWAY_PATHS_LIMIT = 100_000;
const V2_PREFIX = '/api/v2';

/** What the rate limit and the quota have in common here: a decision per request, headers, and the 429's message. */
interface Gate {
  take(): { allowed: boolean; retryAfterSeconds: number };
  headers(decision: { allowed: boolean; retryAfterSeconds: number }): Record<string, string>;
  readonly refusal: string;
}

export function createServiceHandler(deps: ServiceDependencies) {
  const { counters, signal } = deps;
  const gates: Gate[] = [deps.rateLimiter, deps.quota].filter((g): g is TokenBucket | Quota => g !== undefined);
  const replays = new Map<string, Answer>();
  const { behaviour } = deps;
  /** Paths the gateway has already refused once (gateway-404 v2-once). */
  const gatewayPaths = new Set<string>();
  const gatewayTakes = (path: string): boolean => {
    const mode = behaviour['gateway-404'];
    if (mode === 'off' || !(path === V2_PREFIX || path.startsWith(`${V2_PREFIX}/`))) return false;
    if (mode === 'v2') return true;
    if (gatewayPaths.has(path)) return false;
    if (gatewayPaths.size >= GATEWAY_PATHS_LIMIT) gatewayPaths.clear();
    gatewayPaths.add(path);
    return true;
  };
  const formatRetryAfter = (seconds: number): string =>
    behaviour['retry-after'] === 'http-date'
      ? // An HTTP date has whole seconds: rounded up, so that it is never earlier than the wait asked for.
        new Date(Math.ceil((deps.clock() + seconds * 1000) / 1000) * 1000).toUTCString()
      : retryAfterInSeconds(seconds);
  /** Resolves true after `ms`, or false at once when the emulator stops. */
  const sleep = async (ms: number): Promise<boolean> => {
    if (signal.aborted) return false;
    if (ms <= 0) return true;
    try {
      // Clamped: a fault rule's `ms` comes from JSON, and Node fires a longer timer at once.
      await delay(timerDelay(ms), undefined, { signal });
      return true;
    } catch {
      return false;
    }
  };

  return async function handleServiceRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    counters.total += 1;
    // A billing system working alongside: the request sees the renewal.
    if (deps.renewEveryRequests !== undefined && counters.total % deps.renewEveryRequests === 0) deps.store.renewNextSubscription();
    counters.inFlight += 1;
    counters.maxInFlight = Math.max(counters.maxInFlight, counters.inFlight);
    res.once('close', () => {
      counters.inFlight -= 1;
    });

    const method = req.method ?? 'GET';
    const target = splitTarget(req.url ?? '/');
    const match = matchRoute(method, target.path);
    const operation = match.kind === 'not-found' ? 'unknown' : match.operation;
    counters.byOperation[operation] += 1;
    const credentials = readCredentials(req, operation === 'deleteNotificationChannel');
    const idempotencyKey = readHeader(req, 'idempotency-key');
    const requestId = readHeader(req, 'x-request-id');
    const log = (status: RequestLogEntry['status']) =>
      appendToLog(deps.requestLog, {
        method,
        path: req.url ?? '',
        operation,
        status,
        ...(idempotencyKey === undefined ? {} : { idempotencyKey }),
        ...(requestId === undefined ? {} : { requestId }),
        authorization: credentials.via,
      });
    const send = (answer: Answer, status: RequestLogEntry['status'] = answer.status) => {
      if (signal.aborted) return;
      log(status);
      writeAnswer(res, requestId === undefined ? answer : { ...answer, headers: { ...answer.headers, 'x-request-id': requestId } });
    };

    if (gatewayTakes(target.path)) {
      // The gateway answers: the service never sees the request, nothing is done.
      if (!(await sleep(deps.latencyMs)) || signal.aborted) return;
      log(404);
      writeAnswer(res, { status: 404, headers: { 'content-type': 'text/html; charset=utf-8' }, body: renderHtmlPage(404) });
      return;
    }
    // The bucket, then the quota: each sets its headers on the response (the quota's over the
    // bucket's), so that every answer carries them, faults' included; beyond either, 429.
    for (const gate of gates) {
      const decision = gate.take();
      for (const [name, value] of Object.entries(gate.headers(decision))) res.setHeader(name, value);
      if (!decision.allowed) {
        counters.rateLimited += 1;
        if (!(await sleep(deps.latencyMs))) return;
        send(errorAnswer({ status: 429, code: 'rate_limited', message: gate.refusal }, { 'retry-after': formatRetryAfter(decision.retryAfterSeconds) }));
        return;
      }
    }

    const fault = deps.faults.take(operation, method);
    if (fault?.kind === 'drop') {
      log('dropped');
      req.socket.destroy();
      return;
    }
    if (fault?.kind === 'hang') {
      // Held until the client gives up or the emulator stops.
      log('hang');
      return;
    }
    if (!(await sleep(deps.latencyMs))) return;
    if (fault && isAnsweringFault(fault)) {
      log(actOutFault(res, fault, formatRetryAfter));
      return;
    }

    const body = await readBody(req);
    if (body.kind === 'aborted' || signal.aborted) return;
    let answer: Answer;
    if (match.kind === 'not-found') {
      answer = statusErrorAnswer(404, `No such endpoint: ${method} ${target.path}.`);
    } else if (match.kind === 'method-not-allowed') {
      answer = statusErrorAnswer(405, `${method} is not allowed here.`, { allow: match.allow.join(', ') });
    } else if (match.kind === 'bad-encoding') {
      answer = statusErrorAnswer(400, 'A path segment is not valid percent-encoding.');
    } else if (body.kind === 'too-large') {
      answer = errorAnswer({ status: 413, code: 'payload_too_large', message: 'The request body is over 64 KiB.' }, { connection: 'close' });
    } else {
      const check = deps.tokens.check(credentials.token);
      if (check.kind === 'unknown') {
        answer = statusErrorAnswer(401, 'A valid bearer token is required.', { 'www-authenticate': 'Bearer' });
      } else if (check.kind === 'expired') {
        answer = errorAnswer(
          { status: 401, code: 'token_expired', message: 'The bearer token has expired: get a fresh one.' },
          { 'www-authenticate': 'Bearer error="invalid_token"' },
        );
      } else {
        const replayKey =
          deps.idempotency && idempotencyKey !== undefined && method !== 'GET'
            ? JSON.stringify([credentials.token, method, target.path, idempotencyKey])
            : undefined;
        const stored = replayKey === undefined ? undefined : replays.get(replayKey);
        if (stored) {
          answer = { ...stored, headers: { ...stored.headers, 'idempotent-replayed': 'true' } };
        } else {
          if (method === 'PUT' || method === 'DELETE') counters.writes += 1;
          // The store knows each user by their seed token; an issued token stands for its user.
          const request = { operation: match.operation, params: match.params, query: target.query, token: check.userToken, body: body.body, ...(fault?.kind === 'cycle' ? { cycle: true } : {}) };
          answer = reshapeSuccess(await handleOperation(deps.store, deps.settings(), request, sleep), behaviour['success-body'], match.operation);
          if (replayKey !== undefined) remember(replays, replayKey, answer);
        }
      }
    }

    if (signal.aborted) return;
    if (fault?.kind === 'lost-response') {
      // Processed and applied; only the answer is lost on the way back.
      log('lost');
      res.socket?.destroy();
      return;
    }
    if (fault?.kind === 'delay-headers') {
      // Taken when it came, sent later: a renewal in between is not in it.
      if (fault.renew === true) for (const id of organisationsIn(answer)) deps.store.renewSubscription(id);
      if (!(await sleep(fault.ms))) return;
    }
    send(answer);
    if (body.kind === 'too-large' && !body.drained) res.once('finish', () => req.socket.destroy());
  };
}

const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8' };
const EMPTY_200: Answer = { status: 200, headers: JSON_HEADERS, body: '' };
const TEXT_OK: Answer = { status: 200, headers: { 'content-type': 'text/plain; charset=utf-8' }, body: 'OK' };
/** success-body mixed: a different answer per operation. */
const MIXED: Partial<Record<string, Answer>> = {
  setActiveOrganisation: { status: 204 },
  updateBillingDetails: EMPTY_200,
  acceptInvitation: TEXT_OK,
  deleteInvitation: TEXT_OK,
};

/**
 * Varies the success answers whose status or body the interface leaves open (operations 3, 4, 6, 7:
 * the `success-body` point); channel deletion is fixed at 204.
 */
function reshapeSuccess(answer: Answer, style: Behaviour['success-body'], operation: string): Answer {
  if (answer.status < 200 || answer.status > 299 || style === 'decided' || operation === 'deleteNotificationChannel') return answer;
  switch (style) {
    case 'empty-200':
    case 'json-200':
      if (answer.status !== 204) return answer;
      return style === 'empty-200' ? { ...EMPTY_200 } : { status: 200, headers: JSON_HEADERS, body: '{}' };
    case 'no-content':
    case 'text-200':
    case 'mixed': {
      const reshaped = style === 'no-content' ? { status: 204 } : style === 'text-200' ? TEXT_OK : MIXED[operation];
      return reshaped && operation in MIXED ? { ...reshaped } : answer;
    }
  }
}

/** The organisations an answer shows (a listing page's, or the one read), by id. */
function organisationsIn(answer: Answer): string[] {
  if (answer.status !== 200 || typeof answer.body !== 'string') return [];
  try {
    const value = JSON.parse(answer.body) as { id?: unknown; organisations?: Array<{ id?: unknown }> };
    const listed = Array.isArray(value.organisations) ? value.organisations : [value];
    return listed.map((o) => o.id).filter((id): id is string => typeof id === 'string');
  } catch {
    return [];
  }
}

function remember(replays: Map<string, Answer>, key: string, answer: Answer): void {
  if (replays.size >= IDEMPOTENCY_CACHE_LIMIT) {
    const oldest = replays.keys().next();
    if (!oldest.done) replays.delete(oldest.value);
  }
  replays.set(key, answer);
}
