/**
 * Requests to a Terraform HTTP backend, by the rules every orgform request follows: redirects never
 * followed (the credentials would go along), a deadline on every attempt, bounded retries of what
 * is safe to send again, a cap on what is read, and the password kept out of every message.
 */
import { describeNetworkFailure } from '../api/describe-network-failure.js';
import { proxySecrets, type ProxySettings } from '../api/proxy-settings.js';
import { redactAddress, redactSecrets } from '../redact.js';
import { BodyTooLargeError, readBodyCapped } from '../api/read-body.js';
import { stateUnavailableError } from './state-backend.js';

/** A whole journal of a million entries is about 150 MB; more than this is not a state orgform wrote. */
const MAX_STATE_BYTES = 512 * 2 ** 20;
const RETRYABLE = new Set([408, 429, 500, 502, 503, 504]);
const MAX_RETRY_WAIT_MS = 10_000;

export interface StateHttpOptions {
  location: string;
  username?: string;
  password?: string;
  timeoutMs: number;
  /** Attempts for a request that may be sent again (default 3). */
  attempts?: number;
  sleep?(ms: number): Promise<void>;
  /** HTTP(S)_PROXY and NO_PROXY: the backend is reached through the proxy, as the service is. */
  proxy?: ProxySettings;
  /** NODE_EXTRA_CA_CERTS, for the hint on a certificate refused. */
  extraCaCerts?: string;
}

export interface StateRequest {
  method: string;
  url: URL;
  body?: string;
  /** Safe to send again after a failure or a 5xx (reads, whole-document writes, unlocks). */
  retry: boolean;
  /** What this request is, for messages: "reading the state". */
  doing: string;
}

export interface StateAnswer {
  status: number;
  text: string;
}

export type StateHttp = (request: StateRequest) => Promise<StateAnswer>;

export function createStateHttp(options: StateHttpOptions): { send: StateHttp; redact(text: string): string; close(): Promise<void> } {
  const secrets: string[] = proxySecrets(options.proxy);
  let authorization: string | undefined;
  if (options.username !== undefined || options.password !== undefined) {
    const token = Buffer.from(`${options.username ?? ''}:${options.password ?? ''}`).toString('base64');
    authorization = `Basic ${token}`;
    secrets.push(token);
    if (options.password) secrets.push(options.password);
  }
  const redact = (text: string) => redactSecrets(text, secrets).replace(/(basic\s+)[A-Za-z0-9+/=]{4,}/gi, '$1[REDACTED]');
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  let agent: import('undici').Dispatcher | undefined;

  async function attempt(request: StateRequest): Promise<StateAnswer> {
    const [undici, { proxiedPool }] = await Promise.all([import('undici'), import('../api/dispatcher.js')]);
    const pool = { connect: { timeout: options.timeoutMs }, headersTimeout: options.timeoutMs, bodyTimeout: options.timeoutMs, keepAliveTimeout: 10_000 };
    const proxy = options.proxy;
    agent ??=
      proxy === undefined
        ? new undici.Agent(pool)
        : new undici.EnvHttpProxyAgent({ ...pool, proxyTls: pool.connect, requestTls: pool.connect, factory: proxiedPool, httpProxy: proxy.http?.url ?? '', httpsProxy: proxy.https?.url ?? '', noProxy: proxy.noProxy });
    const headers: Record<string, string> = { accept: 'application/json', 'user-agent': 'orgform' };
    if (authorization !== undefined) headers.authorization = authorization;
    if (request.body !== undefined) headers['content-type'] = 'application/json';
    const response = await undici.fetch(request.url, {
      method: request.method,
      headers,
      ...(request.body === undefined ? {} : { body: request.body }),
      redirect: 'manual',
      signal: AbortSignal.timeout(options.timeoutMs),
      dispatcher: agent,
    });
    if (response.status >= 300 && response.status < 400) {
      await response.body?.cancel().catch(() => undefined);
      const location = response.headers.get('location');
      throw new Refusal(`the server answered ${request.doing} with a redirect${location ? ` to ${redact(redactAddress(location))}` : ''}, which orgform never follows (the credentials would go along): use the address it points to`);
    }
    try {
      return { status: response.status, text: await readBodyCapped(response as unknown as Response, MAX_STATE_BYTES) };
    } catch (err) {
      if (err instanceof BodyTooLargeError) throw new Refusal(`the answer to ${request.doing} is larger than ${MAX_STATE_BYTES} bytes`);
      throw err;
    }
  }

  async function send(request: StateRequest): Promise<StateAnswer> {
    const attempts = request.retry ? Math.max(1, options.attempts ?? 3) : 1;
    for (let n = 1; ; n += 1) {
      let answer: StateAnswer | undefined;
      let failure: unknown;
      try {
        answer = await attempt(request);
      } catch (err) {
        if (err instanceof Refusal) throw stateUnavailableError(options.location, err.message);
        failure = err;
      }
      const again = answer === undefined || RETRYABLE.has(answer.status);
      if (!again || n >= attempts) {
        if (answer !== undefined) return answer;
        const network = describeNetworkFailure(failure, { url: request.url, ...(options.proxy === undefined ? {} : { proxy: options.proxy }), ...(options.extraCaCerts === undefined ? {} : { extraCaCerts: options.extraCaCerts }) });
        const why = network === undefined ? describeFailure(failure, redact) : redact(network.detail);
        throw stateUnavailableError(options.location, `${request.doing} failed: ${why}${n > 1 ? ` (${n} attempts)` : ''}`);
      }
      await sleep(Math.min(MAX_RETRY_WAIT_MS, 250 * 2 ** (n - 1)));
    }
  }

  // Closed after a read, and used again by a lock after it (state migrate reads its source, then locks
  // it): the next request makes a new agent rather than use the closed one.
  const close = async () => {
    const closing = agent;
    agent = undefined;
    await closing?.close();
  };
  return { send, redact, close };
}

class Refusal extends Error {}

function describeFailure(err: unknown, redact: (text: string) => string): string {
  const e = err as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  if (e?.name === 'TimeoutError' || e?.name === 'AbortError') return 'no answer in time (ORGFORM_STATE_TIMEOUT_MS)';
  const code = e?.cause?.code;
  if (code === 'ECONNREFUSED') return 'connection refused (is the address right and the server up?)';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'the host name could not be resolved';
  if (code !== undefined) return `the connection failed (${code})`;
  return redact(e?.cause?.message ?? e?.message ?? String(err));
}
