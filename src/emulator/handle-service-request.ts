/**
 * The pipeline of one service request: count, route, consult the fault rules, add latency, read
 * the body, authenticate, process (or replay), reshape, answer, log.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { setTimeout as delay } from 'node:timers/promises';
import { actOutFault, isAnsweringFault } from './act-out-fault.js';
import { appendToLog, type EmulatorCounters, type RequestLogEntry } from './counters.js';
import type { FaultList } from './faults.js';
import { handleOperation, type OperationSettings } from './handle-operation.js';
import { errorAnswer, statusErrorAnswer, writeAnswer, type Answer } from './http-answer.js';
import { readBody, readCredentials, readHeader } from './read-request.js';
import { matchRoute, splitTarget } from './routes.js';
import type { EmulatorStore } from './store.js';

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
  successStyle: SuccessStyle;
}

const IDEMPOTENCY_CACHE_LIMIT = 10_000;

export function createServiceHandler(deps: ServiceDependencies) {
  const { counters, signal } = deps;
  const replays = new Map<string, Answer>();
  /** Resolves true after `ms`, or false at once when the emulator stops. */
  const sleep = async (ms: number): Promise<boolean> => {
    if (signal.aborted) return false;
    if (ms <= 0) return true;
    try {
      await delay(ms, undefined, { signal });
      return true;
    } catch {
      return false;
    }
  };

  return async function handleServiceRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    counters.total += 1;
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
      log(actOutFault(res, fault));
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
    } else if (credentials.token === undefined || !deps.store.users.has(credentials.token)) {
      answer = statusErrorAnswer(401, 'A valid bearer token is required.', { 'www-authenticate': 'Bearer' });
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
        const request = { operation: match.operation, params: match.params, query: target.query, token: credentials.token, body: body.body };
        answer = reshapeSuccess(await handleOperation(deps.store, deps.settings(), request, sleep), deps.successStyle, match.operation);
        if (replayKey !== undefined) remember(replays, replayKey, answer);
      }
    }

    if (signal.aborted) return;
    if (fault?.kind === 'lost-response') {
      // Processed and applied; only the answer is lost on the way back.
      log('lost');
      res.socket?.destroy();
      return;
    }
    if (fault?.kind === 'delay-headers' && !(await sleep(fault.ms))) return;
    send(answer);
    if (body.kind === 'too-large' && !body.drained) res.once('finish', () => req.socket.destroy());
  };
}

/** Varies the success answers whose status the interface leaves open (operations 4, 6, 7); channel deletion is fixed at 204. */
function reshapeSuccess(answer: Answer, style: SuccessStyle, operation: string): Answer {
  if (answer.status !== 204 || style === 'decided' || operation === 'deleteNotificationChannel') return answer;
  const headers = { 'content-type': 'application/json; charset=utf-8' };
  return style === 'empty-200' ? { status: 200, headers, body: '' } : { status: 200, headers, body: '{}' };
}

function remember(replays: Map<string, Answer>, key: string, answer: Answer): void {
  if (replays.size >= IDEMPOTENCY_CACHE_LIMIT) {
    const oldest = replays.keys().next();
    if (!oldest.done) replays.delete(oldest.value);
  }
  replays.set(key, answer);
}
