/**
 * The local Organisations service emulator: a real node:http server over an in-memory store, with
 * fault injection, counters and a request log for tests and benchmarks.
 */
import { setMaxListeners } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { resolveBehaviour, type Behaviour, type ProfileName } from './behaviour.js';
import { createCounters, resetCounters, type EmulatorCounters, type RequestLogEntry } from './counters.js';
import { cloneEmulatorData, readEmulatorData, type EmulatorData } from './data.js';
import { FaultList, type FaultController } from './faults.js';
import { ADMIN_PREFIX, handleAdmin } from './handle-admin.js';
import type { NextStyle } from './handle-operation.js';
import { ServiceHandler, type ServiceDependencies, type SuccessStyle } from './handle-service-request.js';
import { errorAnswer, statusErrorAnswer, writeAnswer, type Answer } from './http-answer.js';
import { Quota, type QuotaOptions } from './quota.js';
import { TokenBucket, type RateLimitOptions } from './rate-limit.js';
import { readBody } from './read-request.js';
import { splitTarget } from './routes.js';
import { EmulatorStore } from './store.js';
import { TokenBook, type TokenLifetime } from './tokens.js';

export interface EmulatorOptions {
  /** Seed data; default a copy of examples/emulator-data.json. */
  data?: EmulatorData;
  host?: string;
  /** 0 (the default) picks a free port. */
  port?: number;
  /** Added before every answer of the service (not of the admin endpoints). */
  latencyMs?: number;
  slugDelayMs?: number;
  maxPageSize?: number;
  defaultPageSize?: number;
  /** Alias of the `next-link` point (behaviour['next-link'] wins when both are given). */
  nextStyle?: NextStyle;
  /** Replay the stored answer for a repeated (token, method, path, Idempotency-Key). */
  idempotency?: boolean;
  /** Alias of the `success-body` point (behaviour['success-body'] wins when both are given). */
  successStyle?: SuccessStyle;
  /** Drives fault probabilities; inject a seeded one for repeatable tests. */
  random?: () => number;
  /** How the points the interface leaves open are played; default lenient (the project's decisions). */
  profile?: ProfileName;
  /** Points set on top of the profile. */
  behaviour?: Partial<Behaviour>;
  /** A token bucket over all service requests (admin endpoints exempt); absent: no limit. */
  rateLimit?: RateLimitOptions;
  /** A fixed-window quota over all service requests, its reset on every answer (a daily quota: windowSeconds 86400); absent: none. */
  quota?: QuotaOptions;
  /** Every token expires after so many service requests or seconds; absent: tokens never expire. */
  tokenLifetime?: TokenLifetime;
  /** Epoch milliseconds, for the rate limit, token lifetimes and HTTP dates; inject one for tests. */
  clock?: () => number;
  /**
   * A billing system working alongside: every `everyRequests` service requests, one organisation's
   * subscription is renewed (a new subscriptionId and customerId; store.renewals lists them).
   */
  renewals?: { everyRequests: number };
}

export interface Emulator {
  /** Like http://127.0.0.1:PORT, without a trailing slash. */
  readonly url: string;
  readonly store: EmulatorStore;
  readonly faults: FaultController;
  /** Live: read it again after requests; resetCounters() zeroes it in place. */
  readonly counters: EmulatorCounters;
  readonly requestLog: RequestLogEntry[];
  /** The open points as played: the profile with the overrides on top. */
  readonly behaviour: Readonly<Behaviour>;
  /** Zeroes the counters and empties the request log. */
  resetCounters(): void;
  /** Lets every request a `hold` fault holds go on to its answer; how many there were. */
  release(): number;
  /**
   * A fresh token (an unsigned JWT) for the user named by a token of theirs or their e-mail address
   * (default the first user), with a fresh lifetime; throws when there is no such user.
   */
  issueToken(user?: string): string;
  /** Closes every socket, hung ones included, and resolves when the server is closed. */
  stop(): Promise<void>;
}

const DEFAULT_DATA_URL = new URL('../../examples/emulator-data.json', import.meta.url);
let defaultData: Promise<EmulatorData> | undefined;

export async function startEmulator(options: EmulatorOptions = {}): Promise<Emulator> {
  // The older options are aliases of points; the points, when given, win.
  const aliases: Partial<Behaviour> = {};
  if (options.nextStyle !== undefined) aliases['next-link'] = options.nextStyle;
  if (options.successStyle !== undefined) aliases['success-body'] = options.successStyle;
  const behaviour = Object.freeze(resolveBehaviour(options.profile ?? 'lenient', { ...aliases, ...options.behaviour }));
  defaultData ??= readEmulatorData(DEFAULT_DATA_URL);
  const store = new EmulatorStore(cloneEmulatorData(options.data ?? (await defaultData)), behaviour);
  const emulator = new EmulatorServer(options, behaviour, store);
  await emulator.listen(options.port ?? 0, options.host ?? '127.0.0.1');
  return emulator;
}

/** The node:http server: the service's requests through the ServiceHandler, the admin endpoints beside it. */
class EmulatorServer implements Emulator {
  url = '';
  readonly faults: FaultList;
  readonly counters = createCounters();
  readonly requestLog: RequestLogEntry[] = [];
  private readonly clock: () => number;
  private readonly tokens: TokenBook;
  private readonly service: ServiceHandler;
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();
  /** Aborted on stop: every delayed answer listens for it; thousands may wait at once under load. */
  private readonly stopping = new AbortController();
  private stopped: Promise<void> | undefined;

  constructor(
    options: EmulatorOptions,
    readonly behaviour: Readonly<Behaviour>,
    readonly store: EmulatorStore,
  ) {
    setMaxListeners(0, this.stopping.signal);
    this.clock = options.clock ?? Date.now;
    this.tokens = new TokenBook(store, options.tokenLifetime, this.clock);
    this.faults = new FaultList(options.random);
    this.service = new ServiceHandler(this.serviceDependencies(options));
    this.server = createServer({ keepAliveTimeout: 10_000 }, (req, res) => {
      void this.route(req, res).catch(() => {
        // A bug must not take the process down nor leave the client waiting.
        writeAnswer(res, statusErrorAnswer(500, 'The emulator failed on this request.'));
      });
    });
    this.server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    });
    this.server.on('clientError', answerGarbage);
  }

  private serviceDependencies(options: EmulatorOptions): ServiceDependencies {
    const { rateLimit, quota, renewals } = options;
    return {
      store: this.store,
      faults: this.faults,
      counters: this.counters,
      requestLog: this.requestLog,
      signal: this.stopping.signal,
      settings: () => ({ slugDelayMs: options.slugDelayMs ?? 1000, maxPageSize: options.maxPageSize ?? 500, defaultPageSize: options.defaultPageSize ?? 50, behaviour: this.behaviour, baseUrl: this.url }),
      latencyMs: options.latencyMs ?? 0,
      idempotency: options.idempotency ?? false,
      behaviour: this.behaviour,
      ...(rateLimit === undefined ? {} : { rateLimiter: new TokenBucket(rateLimit, this.clock) }),
      ...(quota === undefined ? {} : { quota: new Quota(quota, this.clock) }),
      tokens: this.tokens,
      clock: this.clock,
      ...(renewals === undefined ? {} : { renewEveryRequests: checkRenewals(renewals.everyRequests) }),
    };
  }

  async listen(port: number, host: string): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, host, () => {
        this.server.off('error', reject);
        resolve();
      });
    });
    this.url = `http://${formatHost(host)}:${(this.server.address() as AddressInfo).port}`;
  }

  resetCounters(): void {
    resetCounters(this.counters);
    this.requestLog.length = 0;
  }

  release(): number {
    return this.service.release();
  }

  issueToken(user?: string): string {
    const token = this.tokens.issue(user);
    if (token === undefined) throw new Error(user === undefined ? 'The emulator has no users.' : `No user with the token or e-mail address ${user}.`);
    return token;
  }

  stop(): Promise<void> {
    this.stopped ??= new Promise<void>((resolve) => {
      this.stopping.abort();
      this.server.close(() => resolve());
      this.server.closeAllConnections();
      for (const socket of this.sockets) socket.destroy();
    });
    return this.stopped;
  }

  private async route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const { path } = splitTarget(req.url ?? '/');
    if (!path.startsWith(ADMIN_PREFIX)) return this.service.handle(req, res);
    const body = await readBody(req);
    if (body.kind === 'aborted') return;
    const admin = { store: this.store, counters: this.counters, faults: this.faults, resetCounters: () => this.resetCounters(), release: () => this.release(), behaviour: this.behaviour, issueToken: (user?: string) => this.tokens.issue(user) };
    const answer: Answer =
      body.kind === 'ok'
        ? handleAdmin(admin, req.method ?? 'GET', path, body.body)
        : errorAnswer({ status: 413, code: 'payload_too_large', message: 'The request body is over 64 KiB.' }, { connection: 'close' });
    writeAnswer(res, answer);
    if (body.kind === 'too-large' && !body.drained) res.once('finish', () => req.socket.destroy());
  }
}

/** Garbage that is not HTTP at all still gets an Error body when the socket can take one. */
function answerGarbage(err: NodeJS.ErrnoException, socket: Duplex): void {
  if (!socket.writable || err.code === 'ECONNRESET') {
    socket.destroy();
    return;
  }
  const status = err.code === 'HPE_HEADER_OVERFLOW' ? 431 : 400;
  const body = JSON.stringify({ code: 'invalid_request', message: 'The request is not valid HTTP.' });
  socket.end(`HTTP/1.1 ${status} Bad Request\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
}

function checkRenewals(everyRequests: number): number {
  if (!Number.isSafeInteger(everyRequests) || everyRequests < 1) throw new TypeError(`renewals.everyRequests must be a whole number of at least 1 (got ${everyRequests}).`);
  return everyRequests;
}

function formatHost(host: string): string {
  if (host === '0.0.0.0' || host === '::' || host === '') return '127.0.0.1';
  return host.includes(':') ? `[${host}]` : host;
}
