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
import type { OperationId } from '../api/types.js';
import { appendToLog, type EmulatorCounters, type RequestLogEntry } from './counters.js';
import type { Fault, FaultList } from './faults.js';
import { handleOperation, type OperationSettings } from './handle-operation.js';
import { errorAnswer, statusErrorAnswer, writeAnswer, type Answer } from './http-answer.js';
import { readBody, readCredentials, readHeader, type BodyResult, type Credentials } from './read-request.js';
import { matchRoute, splitTarget, type RouteMatch } from './routes.js';
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

/** One request on its way through the pipeline: what it asks, and how its answer is logged and sent. */
class Exchange {
  readonly method: string;
  readonly target: { path: string; query: string };
  readonly match: RouteMatch;
  readonly operation: OperationId | 'unknown';
  readonly credentials: Credentials;
  readonly idempotencyKey: string | undefined;
  readonly requestId: string | undefined;

  constructor(
    readonly req: IncomingMessage,
    readonly res: ServerResponse,
    private readonly requestLog: RequestLogEntry[],
  ) {
    this.method = req.method ?? 'GET';
    this.target = splitTarget(req.url ?? '/');
    this.match = matchRoute(this.method, this.target.path);
    this.operation = this.match.kind === 'not-found' ? 'unknown' : this.match.operation;
    this.credentials = readCredentials(req, this.operation === 'deleteNotificationChannel');
    this.idempotencyKey = readHeader(req, 'idempotency-key');
    this.requestId = readHeader(req, 'x-request-id');
  }

  log(status: RequestLogEntry['status']): void {
    appendToLog(this.requestLog, {
      method: this.method,
      path: this.req.url ?? '',
      operation: this.operation,
      status,
      ...(this.idempotencyKey === undefined ? {} : { idempotencyKey: this.idempotencyKey }),
      ...(this.requestId === undefined ? {} : { requestId: this.requestId }),
      authorization: this.credentials.via,
    });
  }

  /** Logs and writes the answer, with the request's X-Request-Id. */
  send(answer: Answer, status: RequestLogEntry['status'] = answer.status): void {
    this.log(status);
    writeAnswer(this.res, this.requestId === undefined ? answer : { ...answer, headers: { ...answer.headers, 'x-request-id': this.requestId } });
  }
}

/**
 * The service side of the emulator: each request through the pipeline (see the top of this file).
 * Holds what lasts across requests: the answers kept for replay and the paths the gateway refused.
 */
export class ServiceHandler {
  private readonly gates: Gate[];
  private readonly replays = new Map<string, Answer>();
  /** Paths the gateway has already refused once (gateway-404 v2-once). */
  private readonly gatewayPaths = new Set<string>();
  /** Requests a hold fault holds, each let go with true (answered) or false (the emulator stopped). */
  private held: Array<(answer: boolean) => void> = [];

  constructor(private readonly deps: ServiceDependencies) {
    this.gates = [deps.rateLimiter, deps.quota].filter((g): g is TokenBucket | Quota => g !== undefined);
  }

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const { deps } = this;
    this.count(res);
    const exchange = new Exchange(req, res, deps.requestLog);
    deps.counters.byOperation[exchange.operation] += 1;
    if (this.gatewayTakes(exchange.target.path)) return this.answerFromGateway(exchange);
    if (await this.refuseAtGate(exchange)) return;
    const fault = deps.faults.take(exchange.operation, exchange.method);
    if (fault?.kind === 'drop') {
      exchange.log('dropped');
      req.socket.destroy();
      return;
    }
    // Held until the client gives up or the emulator stops.
    if (fault?.kind === 'hang') return exchange.log('hang');
    if (fault?.kind === 'hold' && !(await this.hold())) return;
    if (!(await this.sleep(deps.latencyMs))) return;
    if (fault && isAnsweringFault(fault)) return exchange.log(actOutFault(res, fault, (seconds) => this.formatRetryAfter(seconds)));
    const body = await readBody(req);
    if (body.kind === 'aborted' || deps.signal.aborted) return;
    const answer = await this.answer(exchange, body, fault);
    if (deps.signal.aborted) return;
    if (fault?.kind === 'lost-response') {
      // Processed and applied; only the answer is lost on the way back.
      exchange.log('lost');
      res.socket?.destroy();
      return;
    }
    if (fault?.kind === 'delay-headers' && !(await this.holdAnswer(fault, answer))) return;
    if (deps.signal.aborted) return;
    exchange.send(answer);
    if (body.kind === 'too-large' && !body.drained) res.once('finish', () => req.socket.destroy());
  }

  /** The request counters, and a renewal by the billing system working alongside: the request sees it. */
  private count(res: ServerResponse): void {
    const { counters } = this.deps;
    counters.total += 1;
    if (this.deps.renewEveryRequests !== undefined && counters.total % this.deps.renewEveryRequests === 0) this.deps.store.renewNextSubscription();
    counters.inFlight += 1;
    counters.maxInFlight = Math.max(counters.maxInFlight, counters.inFlight);
    res.once('close', () => {
      counters.inFlight -= 1;
    });
  }

  private gatewayTakes(path: string): boolean {
    const mode = this.deps.behaviour['gateway-404'];
    if (mode === 'off' || !(path === V2_PREFIX || path.startsWith(`${V2_PREFIX}/`))) return false;
    if (mode === 'v2') return true;
    if (this.gatewayPaths.has(path)) return false;
    if (this.gatewayPaths.size >= GATEWAY_PATHS_LIMIT) this.gatewayPaths.clear();
    this.gatewayPaths.add(path);
    return true;
  }

  /** The gateway answers: the service never sees the request, nothing is done. */
  private async answerFromGateway(exchange: Exchange): Promise<void> {
    if (!(await this.sleep(this.deps.latencyMs)) || this.deps.signal.aborted) return;
    exchange.log(404);
    writeAnswer(exchange.res, { status: 404, headers: { 'content-type': 'text/html; charset=utf-8' }, body: renderHtmlPage(404) });
  }

  /**
   * The bucket, then the quota: each sets its headers on the response (the quota's over the
   * bucket's), so that every answer carries them, faults' included; beyond either, 429. True when refused.
   */
  private async refuseAtGate(exchange: Exchange): Promise<boolean> {
    for (const gate of this.gates) {
      const decision = gate.take();
      for (const [name, value] of Object.entries(gate.headers(decision))) exchange.res.setHeader(name, value);
      if (decision.allowed) continue;
      this.deps.counters.rateLimited += 1;
      if ((await this.sleep(this.deps.latencyMs)) && !this.deps.signal.aborted) {
        exchange.send(errorAnswer({ status: 429, code: 'rate_limited', message: gate.refusal }, { 'retry-after': this.formatRetryAfter(decision.retryAfterSeconds) }));
      }
      return true;
    }
    return false;
  }

  /** What the service answers a request that reached it: a routing or size failure, a token refused, a replay, or the operation. */
  private async answer(exchange: Exchange, body: Exclude<BodyResult, { kind: 'aborted' }>, fault: Fault | undefined): Promise<Answer> {
    const { match, method, target } = exchange;
    if (match.kind === 'not-found') return statusErrorAnswer(404, `No such endpoint: ${method} ${target.path}.`);
    if (match.kind === 'method-not-allowed') return statusErrorAnswer(405, `${method} is not allowed here.`, { allow: match.allow.join(', ') });
    if (match.kind === 'bad-encoding') return statusErrorAnswer(400, 'A path segment is not valid percent-encoding.');
    if (body.kind === 'too-large') return errorAnswer({ status: 413, code: 'payload_too_large', message: 'The request body is over 64 KiB.' }, { connection: 'close' });
    const check = this.deps.tokens.check(exchange.credentials.token);
    if (check.kind === 'unknown') return statusErrorAnswer(401, 'A valid bearer token is required.', { 'www-authenticate': 'Bearer' });
    if (check.kind === 'expired') {
      return errorAnswer({ status: 401, code: 'token_expired', message: 'The bearer token has expired: get a fresh one.' }, { 'www-authenticate': 'Bearer error="invalid_token"' });
    }
    const replayKey = this.deps.idempotency && exchange.idempotencyKey !== undefined && method !== 'GET' ? JSON.stringify([exchange.credentials.token, method, target.path, exchange.idempotencyKey]) : undefined;
    const stored = replayKey === undefined ? undefined : this.replays.get(replayKey);
    if (stored) return { ...stored, headers: { ...stored.headers, 'idempotent-replayed': 'true' } };
    if (method === 'PUT' || method === 'DELETE') this.deps.counters.writes += 1;
    // The store knows each user by their seed token; an issued token stands for its user.
    const request = { operation: match.operation, params: match.params, query: target.query, token: check.userToken, body: body.body, ...(fault?.kind === 'cycle' ? { cycle: true } : {}) };
    const answer = reshapeSuccess(await handleOperation(this.deps.store, this.deps.settings(), request, (ms) => this.sleep(ms)), this.deps.behaviour['success-body'], match.operation);
    if (replayKey !== undefined) remember(this.replays, replayKey, answer);
    return answer;
  }

  /** Lets every request a hold fault holds go on to its answer; how many there were. */
  release(): number {
    const held = this.held;
    this.held = [];
    for (const go of held) go(true);
    return held.length;
  }

  /** A hold: resolves true once released, false at once when the emulator stops. */
  private hold(): Promise<boolean> {
    const { signal } = this.deps;
    if (signal.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      const stop = () => resolve(false);
      signal.addEventListener('abort', stop, { once: true });
      this.held.push((answer) => {
        signal.removeEventListener('abort', stop);
        resolve(answer);
      });
    });
  }

  /** delay-headers: taken when it came, sent later; a renewal in between is not in it. False when the emulator stopped meanwhile. */
  private holdAnswer(fault: Extract<Fault, { kind: 'delay-headers' }>, answer: Answer): Promise<boolean> {
    if (fault.renew === true) for (const id of organisationsIn(answer)) this.deps.store.renewSubscription(id);
    return this.sleep(fault.ms);
  }

  private formatRetryAfter(seconds: number): string {
    if (this.deps.behaviour['retry-after'] !== 'http-date') return retryAfterInSeconds(seconds);
    // An HTTP date has whole seconds: rounded up, so that it is never earlier than the wait asked for.
    return new Date(Math.ceil((this.deps.clock() + seconds * 1000) / 1000) * 1000).toUTCString();
  }

  /** Resolves true after `ms`, or false at once when the emulator stops. */
  private async sleep(ms: number): Promise<boolean> {
    const { signal } = this.deps;
    if (signal.aborted) return false;
    if (ms <= 0) return true;
    try {
      // Clamped: a fault rule's `ms` comes from JSON, and Node fires a longer timer at once.
      await delay(timerDelay(ms), undefined, { signal });
      return true;
    } catch {
      return false;
    }
  }
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
