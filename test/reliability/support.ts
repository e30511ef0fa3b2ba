/**
 * What the reliability cases share: an emulator whose user holds a canary token, the CLI run
 * in-process or as the built binary with that token, a scanner that fails a test when the canary
 * shows up anywhere it was collected from, and a purpose-built loopback proxy that can fault
 * requests by path (the emulator's own faults match by operation only) and time them.
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { join } from 'node:path';
import { expect } from 'vitest';
import { afterEachTest } from '../support/after-each-test.js';
import { startEmulator, type Emulator, type EmulatorOptions } from '../../src/emulator/server.js';
import type { EmulatorData } from '../../src/emulator/data.js';
import type { LockHolder } from '../../src/state/state-backend.js';
import { runCli, spawnCli, type CliResult, type RunOptions } from '../support/run-cli.js';
import { makeWorkspace } from '../support/workspace.js';

export const ORG_API = '/api/organisations/v1';

/** A token that must never be seen again once handed to orgform. */
export function canaryToken(): string {
  return `canary-${randomBytes(12).toString('hex')}`;
}

const running: Array<{ stop(): Promise<void> }> = [];
afterEachTest(async () => {
  await Promise.all(running.splice(0).map((s) => s.stop()));
});

/** Everything orgform wrote that a leak could hide in, collected as the test goes. */
export class LeakScanner {
  private readonly texts: Array<{ where: string; text: string }> = [];
  constructor(readonly secret: string) {}

  add(where: string, text: string): void {
    this.texts.push({ where, text });
  }

  addError(where: string, err: unknown): void {
    const e = err as { message?: unknown; stack?: unknown; cause?: unknown } | null;
    const parts = [String(err), typeof e?.message === 'string' ? e.message : '', typeof e?.stack === 'string' ? e.stack : ''];
    try {
      parts.push(JSON.stringify(err));
    } catch {
      // a cycle: the message and stack are what matters
    }
    let cause = e?.cause as typeof e;
    for (let depth = 0; cause && depth < 4; depth += 1) {
      parts.push(String(cause), typeof cause.stack === 'string' ? cause.stack : '');
      cause = cause.cause as typeof e;
    }
    this.add(where, parts.join('\n'));
  }

  /** Every file under a workspace (journal, lock, saved plans, temp files) goes in too. */
  async addTree(dir: string, except: readonly string[] = []): Promise<void> {
    if (!existsSync(dir)) return;
    for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
      if (!entry.isFile()) continue;
      const path = join(entry.parentPath, entry.name);
      if (except.includes(path)) continue;
      this.add(path, await readFile(path, 'utf8'));
    }
  }

  /** How many texts were scanned; a case that scanned nothing proves nothing. */
  get size(): number {
    return this.texts.length;
  }

  expectClean(): void {
    const leaks = this.texts.filter((t) => t.text.includes(this.secret) || t.text.includes(encodeURIComponent(this.secret)));
    expect(leaks.map((l) => l.where)).toEqual([]);
  }
}

export interface World {
  emulator: Emulator;
  token: string;
  cwd: string;
  env: Record<string, string>;
  leaks: LeakScanner;
  /** The CLI in-process with the canary token; its stdout and stderr are scanned. */
  cli(args: string[], options?: Partial<RunOptions>): Promise<CliResult>;
  /** The built CLI as a child process. */
  spawn(args: string[], options?: Partial<Parameters<typeof spawnCli>[1]>): Promise<CliResult & { signal: NodeJS.Signals | null }>;
  journalPath: string;
  /** The canary user as the store holds it now. */
  user(): EmulatorData['users'][number];
  org(id: string): EmulatorData['organisations'][number] | undefined;
}

export interface WorldOptions {
  config?: string;
  files?: Record<string, string>;
  emulator?: EmulatorOptions;
  /** Base URL to give orgform instead of the emulator's (e.g. a proxy in front of it). */
  baseUrl?: (emulator: Emulator) => string | Promise<string>;
}

/**
 * An emulator (examples/emulator-data.json, or the data given) where the user ada (or the first
 * user) also answers to a fresh canary token, and a workspace with orgs.yaml.
 */
export async function startWorld(options: WorldOptions = {}): Promise<World> {
  const emulator = await startEmulator({ slugDelayMs: 0, ...options.emulator });
  running.push(emulator);
  const token = canaryToken();
  const template = emulator.store.dump().users[0];
  if (!template) throw new Error('the emulator data has no user');
  emulator.store.putUser({ ...template, token });
  const cwd = await makeWorkspace({ ...(options.config === undefined ? {} : { 'orgs.yaml': options.config }), ...options.files });
  const baseUrl = options.baseUrl ? await options.baseUrl(emulator) : emulator.url;
  const env = { ORGFORM_TOKEN: token, ORGFORM_BASE_URL: baseUrl };
  const leaks = new LeakScanner(token);
  let runs = 0;
  return {
    emulator,
    token,
    cwd,
    env,
    leaks,
    journalPath: join(cwd, '.orgform', 'state.json'),
    async cli(args, more = {}) {
      const result = await runCli(args, { cwd, ...more, env: { ...env, ...more.env } });
      runs += 1;
      leaks.add(`run ${runs} (${args.join(' ')}) stdout`, result.stdout);
      leaks.add(`run ${runs} (${args.join(' ')}) stderr`, result.stderr);
      return result;
    },
    async spawn(args, more = {}) {
      const result = await spawnCli(args, { cwd, ...more, env: { ...env, ...more.env } });
      runs += 1;
      leaks.add(`spawned run ${runs} (${args.join(' ')}) stdout`, result.stdout);
      leaks.add(`spawned run ${runs} (${args.join(' ')}) stderr`, result.stderr);
      return result;
    },
    user() {
      const found = emulator.store.dump().users.find((u) => u.token === token);
      if (!found) throw new Error('the canary user is gone');
      return found;
    },
    org(id) {
      return emulator.store.dump().organisations.find((o) => o.id === id);
    },
  };
}

/**
 * A world whose writes wait at a proxy in front of the emulator until `release()`: an apply stops at
 * its first write, lock in hand, however loaded the machine; `writeHeld()` tells when it is there.
 */
export async function startWorldHeldAtWrites(options: Omit<WorldOptions, 'baseUrl'> = {}): Promise<{ world: World; writeHeld(): Promise<boolean>; release(): void }> {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let held!: FaultProxy;
  const world = await startWorld({
    ...options,
    baseUrl: async (emulator) => {
      held = await startFaultProxy(emulator.url, (method) => (method === 'GET' ? { kind: 'pass' } : { kind: 'hold', until: released }));
      return held.url;
    },
  });
  return { world, release, writeHeld: () => waitFor(() => held.records.some((r) => r.method !== 'GET'), 15_000) };
}

// ---- a loopback proxy that can fault by path and records when each request arrived ------------

export type ProxyAction =
  | { kind: 'pass' }
  | { kind: 'status'; status: number; body?: unknown; headers?: Record<string, string> }
  | { kind: 'reset' }
  /** Forwarded once `until` settles: the client is held at this request (a fault point), however loaded the machine. */
  | { kind: 'hold'; until: Promise<void> };

export interface ProxyRecord {
  method: string;
  path: string;
  at: number;
  idempotencyKey?: string;
  /** The status sent back, or 'reset'. */
  outcome: number | 'reset';
}

export interface FaultProxy {
  url: string;
  records: ProxyRecord[];
  stop(): Promise<void>;
}

/** Forwards to `target` unless `decide` says otherwise for a request. */
export async function startFaultProxy(target: string, decide: (method: string, path: string) => ProxyAction = () => ({ kind: 'pass' })): Promise<FaultProxy> {
  const records: ProxyRecord[] = [];
  const sockets = new Set<Socket>();
  const upstream = new URL(target);
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const method = req.method ?? 'GET';
    const path = req.url ?? '/';
    const key = req.headers['idempotency-key'];
    const record: ProxyRecord = { method, path, at: Date.now(), outcome: 0, ...(typeof key === 'string' ? { idempotencyKey: key } : {}) };
    records.push(record);
    const action = decide(method, path);
    if (action.kind === 'reset') {
      record.outcome = 'reset';
      req.socket.destroy();
      return;
    }
    if (action.kind === 'status') {
      record.outcome = action.status;
      const body = JSON.stringify(action.body ?? { code: 'injected', message: `Injected by the test proxy: HTTP ${action.status}.` });
      res.writeHead(action.status, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), ...action.headers });
      res.end(body);
      return;
    }
    const forward = () => {
      const request = httpRequest(
        { host: upstream.hostname, port: upstream.port, method, path, headers: { ...req.headers, host: upstream.host } },
        (answer) => {
          record.outcome = answer.statusCode ?? 0;
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      request.on('error', () => {
        record.outcome = 'reset';
        req.socket.destroy();
      });
      req.pipe(request);
    };
    if (action.kind === 'hold') {
      // The body waits in the socket meanwhile; piped on release.
      req.pause();
      void action.until.then(forward, () => req.socket.destroy());
      return;
    }
    forward();
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  let stopped: Promise<void> | undefined;
  const proxy: FaultProxy = {
    url: `http://127.0.0.1:${port}`,
    records,
    stop() {
      stopped ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      });
      return stopped;
    },
  };
  running.push(proxy);
  return proxy;
}

/** Polls until `condition` holds or `ms` pass; resolves with whether it held. */
export async function waitFor(condition: () => boolean, ms = 10_000, everyMs = 2): Promise<boolean> {
  const until = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > until) return false;
    await new Promise((r) => setTimeout(r, everyMs));
  }
  return true;
}

/** A stack trace line as node prints one. */
export const STACK_LINE = /^\s+at .+(\(|:\d+:\d+)/m;

/** Sends a signal to a child we spawned; false if it had already gone. */
export function signalChild(pid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(pid, signal);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ESRCH') return false;
    throw err;
  }
}

/** No stack trace and no "bug in orgform": what a run that failed as designed never prints (in a text, or a run's two streams). */
export function expectNoCrash(output: string | { stdout: string; stderr: string }): void {
  const text = typeof output === 'string' ? output : output.stdout + output.stderr;
  expect(text).not.toMatch(STACK_LINE);
  expect(text).not.toContain('bug in orgform');
}

/** The lock file once its holder has written it (it is created empty, then filled). */
export async function readLock(path: string): Promise<LockHolder> {
  for (let i = 0; ; i += 1) {
    try {
      return JSON.parse(await readFile(path, 'utf8')) as LockHolder;
    } catch (err) {
      if (i > 500) throw err;
      await new Promise((r) => setTimeout(r, 2));
    }
  }
}
