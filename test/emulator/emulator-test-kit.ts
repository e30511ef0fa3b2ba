/**
 * Starting an emulator per test and talking to it over real loopback HTTP with global fetch.
 */
import { afterEachTest } from '../support/after-each-test.js';
import { startEmulator, type Emulator, type EmulatorOptions } from '../../src/emulator/server.js';

export const ORG_API = '/api/organisations/v1';
export const V2_API = '/api/v2';
export const DEMO = 'demo-token';
export const OTHER = 'other-token';

const running = new Set<Emulator>();

afterEachTest(async () => {
  await Promise.all([...running].map((e) => e.stop()));
  running.clear();
});

/** Stopped after the test, whatever happens. */
export async function useEmulator(options: EmulatorOptions = {}): Promise<Emulator> {
  const emulator = await startEmulator({ slugDelayMs: 0, ...options });
  running.add(emulator);
  return emulator;
}

export interface CallOptions {
  method?: string;
  token?: string | null;
  body?: unknown;
  headers?: Record<string, string>;
  signal?: AbortSignal;
  redirect?: 'follow' | 'manual' | 'error';
}

/** A request as orgform would send it: bearer token (demo by default), JSON body when given. */
export function call(emulator: Emulator, path: string, options: CallOptions = {}): Promise<Response> {
  const headers: Record<string, string> = { ...options.headers };
  const token = options.token === undefined ? DEMO : options.token;
  if (token !== null) headers.authorization = `Bearer ${token}`;
  let body: string | undefined;
  if (options.body !== undefined) {
    headers['content-type'] = 'application/json';
    body = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
  }
  return fetch(`${emulator.url}${path}`, {
    method: options.method ?? 'GET',
    headers,
    ...(body === undefined ? {} : { body }),
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.redirect ? { redirect: options.redirect } : {}),
  });
}

export async function callJson<T = any>(emulator: Emulator, path: string, options: CallOptions = {}): Promise<{ status: number; body: T; response: Response }> {
  const response = await call(emulator, path, options);
  const text = await response.text();
  return { status: response.status, body: (text === '' ? undefined : JSON.parse(text)) as T, response };
}

export const orgPath = (id: string, ...rest: string[]) =>
  [`${ORG_API}/organisations/${encodeURIComponent(id)}`, ...rest.map(encodeURIComponent)].join('/');

export async function waitUntil(condition: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}
