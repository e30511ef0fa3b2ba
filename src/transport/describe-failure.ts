/**
 * What went wrong on the way to a server, in one set of words for every request orgform makes (the
 * service's, the HTTP state's) and for the sockets of PostgreSQL's: so that the reader knows what
 * to change. A proxy is named (redacted) with the variable that chose it; a certificate from a
 * private certificate authority points at NODE_EXTRA_CA_CERTS; a timeout names the setting that
 * bounds it. The caller says who the other end is and what names it (`the service`, `the base URL`).
 */
import type { TransportFailure } from './transport-error.js';
import { proxyForScheme, type ProxySettings, type ProxyUrl } from './proxy-settings.js';

export interface NetworkContext {
  /** Where the request went. */
  url: URL;
  proxy?: ProxySettings;
  /** NODE_EXTRA_CA_CERTS as the process was started with it, when set. */
  extraCaCerts?: string;
  /** What names where it went, for what to check (default `the base URL`). */
  address?: string;
}

/** Who was asked and what names it, for the words of a failure. */
export interface Peer {
  /** `the service`, `the server`, `the database`. */
  name: string;
  /** `the base URL`, `the address`, `the URL`. */
  address: string;
  /** The setting that bounds a wait, as a message names it: `ORGFORM_STATE_TIMEOUT_MS`. */
  timeoutSetting?: string;
}

export interface Failure {
  failure: TransportFailure;
  detail: string;
}

interface ErrorLike {
  name?: unknown;
  code?: unknown;
  message?: unknown;
  hostname?: unknown;
  address?: unknown;
  port?: unknown;
  cause?: unknown;
}

/** The error and its causes, outermost first. */
function chain(err: unknown): ErrorLike[] {
  const out: ErrorLike[] = [];
  let e = err as ErrorLike | undefined;
  for (let depth = 0; e && typeof e === 'object' && depth < 6; depth += 1) {
    out.push(e);
    e = e.cause as ErrorLike | undefined;
  }
  return out;
}

const UNTRUSTED = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_GET_ISSUER_CERT',
  'CERT_UNTRUSTED',
  'CERT_SIGNATURE_FAILURE',
]);

const OUT_OF_DATE: Readonly<Record<string, string>> = {
  CERT_HAS_EXPIRED: 'has expired',
  CERT_NOT_YET_VALID: 'is not valid yet',
};

function describeTls(code: string, context: NetworkContext): string | undefined {
  const host = context.url.hostname;
  const extra =
    context.extraCaCerts === undefined
      ? 'When it is your organisation\'s own certificate authority (or a proxy that inspects TLS), give Node its certificate: set NODE_EXTRA_CA_CERTS=/path/to/ca.pem in orgform\'s environment (Node reads it at start-up).'
      : `NODE_EXTRA_CA_CERTS is set (${context.extraCaCerts}), but no certificate in it signed this one: check that the file holds, in PEM, the certificate of the authority that signed ${host}'s (or the TLS-inspecting proxy's).`;
  if (UNTRUSTED.has(code)) {
    const what = code === 'DEPTH_ZERO_SELF_SIGNED_CERT' ? 'is self-signed' : 'is signed by a certificate authority this machine does not trust';
    return `the certificate of ${host} ${what} (${code}). ${extra} Never turn the check off (NODE_TLS_REJECT_UNAUTHORIZED=0 is refused)`;
  }
  const outOfDate = OUT_OF_DATE[code];
  if (outOfDate !== undefined) {
    return `the certificate of ${host}, or of an authority above it, ${outOfDate} (${code}): check this machine's clock; when the authority is your own and NODE_EXTRA_CA_CERTS${context.extraCaCerts === undefined ? '' : ` (${context.extraCaCerts})`} holds an out-of-date certificate of it, replace that; otherwise the certificate's owner must renew it`;
  }
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') return `the certificate presented is not for ${host} (${code}): check ${context.address ?? 'the base URL'}'s host name, and that no proxy answers in its place`;
  return undefined;
}

/** Whether `e` is a failure to reach `proxy` itself (refused, unresolved, timed out). */
function isReaching(e: ErrorLike, proxy: ProxyUrl): boolean {
  if (typeof e.code !== 'string') return false;
  if ((e.code === 'ENOTFOUND' || e.code === 'EAI_AGAIN') && e.hostname === proxy.hostname) return true;
  if (e.code === 'UND_ERR_CONNECT_TIMEOUT') return typeof e.message === 'string' && e.message.includes(`${proxy.hostname}:${proxy.port}`);
  // A connection failure carries the address connected to; a proxy named by host name matches on its port.
  const isIp = /^[\d.]+$|:/.test(proxy.hostname);
  return e.port === proxy.port && (!isIp || e.address === proxy.hostname);
}

const UNRESOLVED_PROXY = "the proxy's host name could not be resolved";
const CONNECT_TIMEOUT = 'could not connect in time';

const REACH: Readonly<Record<string, string>> = {
  ECONNREFUSED: 'the connection was refused: is the proxy running, and is this its address and port?',
  ENOTFOUND: UNRESOLVED_PROXY,
  EAI_AGAIN: UNRESOLVED_PROXY,
  UND_ERR_CONNECT_TIMEOUT: CONNECT_TIMEOUT,
  ETIMEDOUT: CONNECT_TIMEOUT,
  ECONNRESET: 'the proxy closed the connection',
};

function proxyAnswer(status: number, proxy: ProxyUrl, host: string): string {
  const name = `the proxy ${proxy.display} (from ${proxy.variable})`;
  if (status === 407) {
    return `${name} asks for credentials (HTTP 407): put them in ${proxy.variable}, as http://USER:PASSWORD@host:port (percent-encode special characters)`;
  }
  if (status === 403) return `${name} refused to connect to ${host} (HTTP 403): ask for ${host} to be allowed, or list it in NO_PROXY if it is reachable without the proxy`;
  if (status === 502 || status === 503 || status === 504) return `${name} could not reach ${host} (HTTP ${status}): check the base URL, and that the proxy may reach it`;
  return `${name} refused to connect to ${host} (HTTP ${status})`;
}

/** A proxy's or a certificate's failure, in words; undefined for any other. */
export function describeNetworkFailure(err: unknown, context: NetworkContext): Failure | undefined {
  const errors = chain(err);
  const proxy = context.proxy === undefined ? undefined : proxyForScheme(context.proxy, context.url);
  if (proxy !== undefined) {
    for (const e of errors) {
      const refused = typeof e.message === 'string' ? /^Proxy response \((\d{3})\)/.exec(e.message) : null;
      if (refused) return { failure: 'connection', detail: proxyAnswer(Number(refused[1]), proxy, context.url.host) };
    }
    for (const e of errors) {
      if (e.name === 'ProxyTunnelClosedError') {
        return { failure: 'connection', detail: `the proxy ${proxy.display} (from ${proxy.variable}) closed the connection instead of answering the CONNECT to ${context.url.host}: check that ${proxy.variable} names a proxy` };
      }
      if (isReaching(e, proxy)) {
        const why = REACH[e.code as string] ?? `the connection failed (${String(e.code)})`;
        const failure: TransportFailure = e.code === 'UND_ERR_CONNECT_TIMEOUT' || e.code === 'ETIMEDOUT' ? 'timeout' : 'connection';
        return { failure, detail: `could not reach the proxy ${proxy.display} (from ${proxy.variable}): ${why}` };
      }
    }
  }
  for (const e of errors) {
    if (typeof e.code !== 'string') continue;
    const tls = describeTls(e.code, context);
    if (tls !== undefined) return { failure: 'connection', detail: tls };
  }
  return undefined;
}

/** The first string `code` along the error's causes (undici wraps a socket's error; zlib's come bare). */
export function errorCodeOf(err: unknown): string | undefined {
  for (const e of chain(err)) if (typeof e.code === 'string') return e.code;
  return undefined;
}

/** `detail`, with the setting that bounds the wait named after it. */
function bounded(detail: string, peer: Peer, inside?: string): string {
  if (peer.timeoutSetting === undefined) return inside === undefined ? detail : `${detail} (${inside})`;
  return `${detail} (${inside === undefined ? '' : `${inside}, `}${peer.timeoutSetting})`;
}

/**
 * A socket that could not reach its peer: refused, or its host name not resolved; undefined for
 * anything else. `proxy`: whether the peer is reached through a proxy (which resolves the name), or
 * could be (an HTTP server), or never is (PostgreSQL, whose failures use this too).
 */
export function describeSocketError(err: unknown, peer: Peer, proxy: 'through' | 'direct' | 'never'): string | undefined {
  const code = errorCodeOf(err);
  if (code === 'ECONNREFUSED') return `connection refused: is ${peer.address} right and ${peer.name} up?`;
  if (code !== 'ENOTFOUND' && code !== 'EAI_AGAIN') return undefined;
  if (proxy === 'through') return 'the host name could not be resolved';
  const viaProxy = proxy === 'direct' ? `; where ${peer.name} is reached through a proxy, set HTTPS_PROXY` : '';
  return `the host name could not be resolved: check ${peer.address}${viaProxy}`;
}

/**
 * Why a request got no answer, in words. `deadlineHit`: its own deadline fired (the time budget),
 * rather than one of the connection's timeouts.
 */
export function describeFailure(err: unknown, peer: Peer & Partial<NetworkContext>, deadlineHit = false): Failure {
  const network = deadlineHit || peer.url === undefined ? undefined : describeNetworkFailure(err, { ...peer, url: peer.url, address: peer.address });
  return network ?? describeConnectionFailure(err, peer, deadlineHit);
}

/** A failure of the connection itself: a timeout, a cancel, a refusal, a name, or its code. */
export function describeConnectionFailure(err: unknown, peer: Peer & { proxy?: ProxySettings }, deadlineHit = false): Failure {
  const code = errorCodeOf(err);
  const name = (err as { name?: unknown } | undefined)?.name;
  if (deadlineHit || name === 'TimeoutError') return { failure: 'timeout', detail: bounded('no complete answer within the time budget', peer) };
  if (code === 'UND_ERR_HEADERS_TIMEOUT') return { failure: 'timeout', detail: bounded(`${peer.name} sent no answer in time`, peer, 'headers timeout') };
  if (code === 'UND_ERR_BODY_TIMEOUT') return { failure: 'timeout', detail: bounded('the answer stopped arriving', peer, 'body timeout') };
  if (code === 'UND_ERR_CONNECT_TIMEOUT') return { failure: 'timeout', detail: bounded(CONNECT_TIMEOUT, peer) };
  if (name === 'AbortError') return { failure: 'aborted', detail: 'the request was cancelled' };
  const socket = describeSocketError(err, peer, peer.proxy === undefined ? 'direct' : 'through');
  if (socket !== undefined) return { failure: 'connection', detail: socket };
  return { failure: 'connection', detail: code === undefined ? 'the connection failed' : `the connection failed (${code})` };
}
