/**
 * The connections a transport sends on: undici's Agent, or with proxies in the settings its
 * EnvHttpProxyAgent, given the proxies explicitly ('' for none, so that undici never falls back to
 * process.env), with the same timeouts and size either way.
 */
import { Agent, EnvHttpProxyAgent, Pool, type buildConnector, type Dispatcher } from 'undici';
import type { ProxySettings } from './proxy-settings.js';

export interface Timeouts {
  connectMs: number;
  /** Time to the response headers of one attempt. */
  headersMs: number;
  /** Longest silence between body chunks. */
  bodyMs: number;
  /** Whole logical request, retries and waits included (the retry budget). */
  totalMs: number;
}

export const DEFAULT_TIMEOUTS: Timeouts = { connectMs: 10_000, headersMs: 30_000, bodyMs: 30_000, totalMs: 60_000 };

/**
 * A proxy closed the connection instead of answering the CONNECT (a web server that is no proxy
 * does that). undici's pool takes its own code for that failure (UND_ERR_SOCKET) for one that a new
 * connection mends, keeps the request queued and connects again at once, for ever, at full CPU;
 * under this code the request fails (and is retried as a reset connection).
 */
export class ProxyTunnelClosedError extends Error {
  readonly code = 'ECONNRESET';
  constructor(cause: unknown) {
    super('the proxy closed the connection instead of answering the CONNECT', { cause });
    this.name = 'ProxyTunnelClosedError';
  }
}

function reportClosedTunnel(connect: buildConnector.connector): buildConnector.connector {
  return (options, callback) =>
    connect(options, (...args) => {
      const [err] = args;
      if (err !== null && (err as { code?: unknown }).code === 'UND_ERR_SOCKET') callback(new ProxyTunnelClosedError(err), null);
      else callback(...args);
    });
}

/**
 * The pool an EnvHttpProxyAgent opens for each origin (its `factory`): one whose tunnels, when a
 * proxy hangs up on the CONNECT, fail the request (ProxyTunnelClosedError) rather than open again.
 */
export function proxiedPool(origin: URL | string, opts: Pool.Options): Pool {
  return new Pool(origin, typeof opts.connect === 'function' ? { ...opts, connect: reportClosedTunnel(opts.connect) } : opts);
}

export function openConnectionPool(timeouts: Timeouts, connections: number, proxy: ProxySettings | undefined): Dispatcher {
  const pool = { headersTimeout: timeouts.headersMs, bodyTimeout: timeouts.bodyMs, connections, keepAliveTimeout: 10_000 };
  const connect = { timeout: timeouts.connectMs };
  if (proxy === undefined) return new Agent({ ...pool, connect });
  return new EnvHttpProxyAgent({
    ...pool,
    connect,
    // A proxy's own `connect` replaces ours: the connect timeout goes to the proxy's socket and to the TLS inside the tunnel.
    proxyTls: connect,
    requestTls: connect,
    // The pool that asks the proxy for tunnels: its CONNECT is part of connecting, so the proxy's
    // answer must come within the connect timeout (undici's default, 300 s, let a proxy that took
    // the connection and never answered hold each attempt, and close(), for five minutes).
    clientFactory: (origin: URL, opts: object) => new Pool(origin, { ...opts, headersTimeout: timeouts.connectMs, bodyTimeout: timeouts.connectMs }),
    // Each origin's pool, its tunnels opened through the proxy: a proxy that hangs up on a CONNECT
    // fails the request (and is retried, and named) rather than being opened again for ever.
    factory: proxiedPool,
    httpProxy: proxy.http?.url ?? '',
    httpsProxy: proxy.https?.url ?? '',
    noProxy: proxy.noProxy,
  });
}
