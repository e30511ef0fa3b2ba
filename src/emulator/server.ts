/**
 * The local Organisations service emulator: a real node:http server over an in-memory store, with
 * fault injection, counters and a request log for tests and benchmarks.
 */
import { setMaxListeners } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { appendToLog, createCounters, resetCounters, type EmulatorCounters, type RequestLogEntry } from './counters.js';
import { cloneEmulatorData, readEmulatorData, type EmulatorData } from './data.js';
import { FaultList, type FaultController } from './faults.js';
import { ADMIN_PREFIX, handleAdmin } from './handle-admin.js';
import type { NextStyle } from './handle-operation.js';
import { createServiceHandler, type SuccessStyle } from './handle-service-request.js';
import { errorAnswer, statusErrorAnswer, writeAnswer, type Answer } from './http-answer.js';
import { readBody } from './read-request.js';
import { splitTarget } from './routes.js';
import { EmulatorStore } from './store.js';

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
  nextStyle?: NextStyle;
  /** Replay the stored answer for a repeated (token, method, path, Idempotency-Key). */
  idempotency?: boolean;
  successStyle?: SuccessStyle;
  /** Drives fault probabilities; inject a seeded one for repeatable tests. */
  random?: () => number;
}

export interface Emulator {
  /** Like http://127.0.0.1:PORT, without a trailing slash. */
  readonly url: string;
  readonly store: EmulatorStore;
  readonly faults: FaultController;
  /** Live: read it again after requests; resetCounters() zeroes it in place. */
  readonly counters: EmulatorCounters;
  readonly requestLog: RequestLogEntry[];
  /** Zeroes the counters and empties the request log. */
  resetCounters(): void;
  /** Closes every socket, hung ones included, and resolves when the server is closed. */
  stop(): Promise<void>;
}

const DEFAULT_DATA_URL = new URL('../../examples/emulator-data.json', import.meta.url);
let defaultData: Promise<EmulatorData> | undefined;

export async function startEmulator(options: EmulatorOptions = {}): Promise<Emulator> {
  defaultData ??= readEmulatorData(DEFAULT_DATA_URL);
  const store = new EmulatorStore(cloneEmulatorData(options.data ?? (await defaultData)));
  const faults = new FaultList(options.random);
  const counters = createCounters();
  const requestLog: RequestLogEntry[] = [];
  const stopping = new AbortController();
  // Every delayed answer listens for the stop; thousands may wait at once under load.
  setMaxListeners(0, stopping.signal);
  const sockets = new Set<Socket>();
  const host = options.host ?? '127.0.0.1';
  let baseUrl = '';

  const resetAll = () => {
    resetCounters(counters);
    requestLog.length = 0;
  };
  const handleService = createServiceHandler({
    store,
    faults,
    counters,
    requestLog,
    signal: stopping.signal,
    settings: () => ({
      slugDelayMs: options.slugDelayMs ?? 1000,
      maxPageSize: options.maxPageSize ?? 500,
      defaultPageSize: options.defaultPageSize ?? 50,
      nextStyle: options.nextStyle ?? 'cursor',
      baseUrl,
    }),
    latencyMs: options.latencyMs ?? 0,
    idempotency: options.idempotency ?? false,
    successStyle: options.successStyle ?? 'decided',
  });

  const server = createServer({ keepAliveTimeout: 10_000 }, (req, res) => {
    void route(req, res).catch(() => {
      // A bug must not take the process down nor leave the client waiting.
      writeAnswer(res, statusErrorAnswer(500, 'The emulator failed on this request.'));
    });
  });
  const route = async (req: IncomingMessage, res: ServerResponse) => {
    const { path } = splitTarget(req.url ?? '/');
    if (path.startsWith(ADMIN_PREFIX)) return handleAdminRequest(req, res, path);
    return handleService(req, res);
  };
  const handleAdminRequest = async (req: IncomingMessage, res: ServerResponse, path: string) => {
    const body = await readBody(req);
    if (body.kind === 'aborted') return;
    const answer: Answer =
      body.kind === 'ok'
        ? handleAdmin({ store, counters, faults, resetCounters: resetAll }, req.method ?? 'GET', path, body.body)
        : errorAnswer({ status: 413, code: 'payload_too_large', message: 'The request body is over 64 KiB.' }, { connection: 'close' });
    writeAnswer(res, answer);
    if (body.kind === 'too-large' && !body.drained) res.once('finish', () => req.socket.destroy());
  };

  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  server.on('clientError', (err: NodeJS.ErrnoException, socket) => {
    // Garbage that is not HTTP at all still gets an Error body when the socket can take one.
    if (!socket.writable || err.code === 'ECONNRESET') {
      socket.destroy();
      return;
    }
    const status = err.code === 'HPE_HEADER_OVERFLOW' ? 431 : 400;
    const body = JSON.stringify({ code: 'invalid_request', message: 'The request is not valid HTTP.' });
    socket.end(
      `HTTP/1.1 ${status} Bad Request\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
    );
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  baseUrl = `http://${formatHost(host)}:${port}`;

  let stopped: Promise<void> | undefined;
  return {
    url: baseUrl,
    store,
    faults,
    counters,
    requestLog,
    resetCounters: resetAll,
    stop() {
      stopped ??= new Promise<void>((resolve) => {
        stopping.abort();
        server.close(() => resolve());
        server.closeAllConnections();
        for (const socket of sockets) socket.destroy();
      });
      return stopped;
    },
  };
}

function formatHost(host: string): string {
  if (host === '0.0.0.0' || host === '::' || host === '') return '127.0.0.1';
  return host.includes(':') ? `[${host}]` : host;
}
