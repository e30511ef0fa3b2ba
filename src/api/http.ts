/**
 * One logical request to the service: undici's request API over our dispatcher, with the token attached,
 * redirects refused, a deadline, a size cap, and failures turned into ApiError or TransportError
 * with the token redacted where they are made. A 401 with a token from a command gets a fresh
 * token and one more try; a 401 no fresh token can answer (a fixed token, or one the command has
 * just given) is told to `onTokenRefused`, which stops the client. A request that was never sent
 * (the client stopped while it waited its turn) fails with NotSentError.
 */
import { randomUUID } from 'node:crypto';
import { pipeline } from 'node:stream';
import { createGunzip, createInflate } from 'node:zlib';
import type { Dispatcher } from 'undici';
import { ApiError, NotSentError, TransportError } from './api-error.js';
import type { RetryingDispatcher, Timeouts } from './dispatcher.js';
import { OrgformError } from '../errors.js';
import { describeNetworkFailure } from './describe-network-failure.js';
import { proxyForScheme, type ProxySettings } from './proxy-settings.js';
import { BodyNotUtf8Error, BodyTooLargeError, discardBody, readStreamCapped } from './read-body.js';
import { timerDelay } from './rate/timer-delay.js';
import { redactAddress, redactSecrets, sanitizeCause } from '../redact.js';
import type { TokenSource } from './token-source.js';
import type { ErrorBody, OperationId } from './types.js';

/** While an attempt waits at the rate limiter, the deadline looks again this often. */
const HOLD_RECHECK_MS = 1_000;

/**
 * How many times a request whose answer was cut off halfway (a connection reset mid-body) is sent
 * again whole. undici's retry interceptor cannot: it would ask for the rest by byte range.
 */
const MAX_CUT_RESENDS = 2;

/** Failures of an answer cut off after it began: the request may be sent again whole. */
const cutMidAnswer = new WeakSet<TransportError>();

export interface HttpOptions {
  baseUrl: URL;
  tokens: TokenSource;
  transport: RetryingDispatcher;
  timeouts: Timeouts;
  maxResponseBytes: number;
  userAgent?: string;
  /** A 401 that no fresh token can answer: the token is refused, and so will every request be. */
  onTokenRefused?: (err: ApiError) => void;
  /** The proxies the dispatcher uses, to name one that fails (redacted). */
  proxy?: ProxySettings;
  /** NODE_EXTRA_CA_CERTS as the process started with it, for the hint on a certificate refused. */
  extraCaCerts?: string;
  /** More to redact than the tokens: a proxy's user name and password. */
  extraSecrets?: readonly string[];
  /**
   * The run's interrupt: a read on the wire is let go at once (NotSentError, as what waits its turn
   * is): nothing is built from a read once interrupted. A write on the wire is waited for.
   */
  interrupt?: AbortSignal;
}

export interface HttpRequest {
  operation: OperationId;
  method: 'GET' | 'PUT' | 'DELETE';
  /** Absolute URL (already checked to be on the base URL's origin). */
  url: URL;
  /** Names what the request is about, for messages: `organisation "acme" (org_acme)`. */
  target: string;
  body?: unknown;
  idempotencyKey?: string;
  /** What the caller calls this request (a change's address), passed to retry events. */
  label?: string;
  /** Overrides the default timeouts (the slow slug check has its own). */
  timeouts?: Timeouts;
  /** No attempt is sent after this time (epoch ms): it fails unsent, NotSentError with `readTooOld`. */
  notAfter?: number;
  /** The request in words, for a line saying what the run waits for (default: the operation and target). */
  what?: string;
}

export interface HttpResponse {
  status: number;
  /** When the attempt that was answered was sent (the dispatcher's clock): what the answer shows is no older. */
  sentAt: number;
  /** Parsed JSON, or undefined for an empty body or one that is not JSON. */
  body: unknown;
  /** The content type of a 2xx body that was not JSON, so that an operation needing a body can say so. */
  unparsed?: string;
}

function errorCodeOf(err: unknown): string | undefined {
  let e = err as { code?: unknown; cause?: unknown } | undefined;
  for (let depth = 0; e && depth < 4; depth += 1) {
    if (typeof e.code === 'string') return e.code;
    e = e.cause as typeof e;
  }
  return undefined;
}

function describeTransportFailure(err: unknown, deadlineHit: boolean, proxied: boolean): { failure: TransportError['failure']; detail: string } {
  const code = errorCodeOf(err);
  const name = (err as { name?: string })?.name;
  if (deadlineHit || name === 'TimeoutError') return { failure: 'timeout', detail: 'no complete answer within the time budget' };
  if (code === 'UND_ERR_HEADERS_TIMEOUT') return { failure: 'timeout', detail: 'the service sent no answer in time (headers timeout)' };
  if (code === 'UND_ERR_BODY_TIMEOUT') return { failure: 'timeout', detail: 'the answer stopped arriving (body timeout)' };
  if (code === 'UND_ERR_CONNECT_TIMEOUT') return { failure: 'timeout', detail: 'could not connect in time' };
  if (name === 'AbortError') return { failure: 'aborted', detail: 'the request was cancelled' };
  if (code === 'ECONNREFUSED') return { failure: 'connection', detail: 'connection refused: is the base URL right and the service up?' };
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') {
    return { failure: 'connection', detail: `the host name could not be resolved${proxied ? '' : ': check the base URL; where the service is reached through a proxy, set HTTPS_PROXY'}` };
  }
  if (code !== undefined) return { failure: 'connection', detail: `the connection failed (${code})` };
  return { failure: 'connection', detail: 'the connection failed' };
}

/** A header undici may hand over as a list (it was sent twice). */
function firstHeader(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** Why the rate limiter let the attempt through no more (it gave up, or was stopped), wherever it was wrapped. */
function stopOf(err: unknown): OrgformError | undefined {
  let e = err as { cause?: unknown } | undefined;
  for (let depth = 0; e && depth < 4; depth += 1) {
    if (e instanceof OrgformError) return e;
    e = e.cause as typeof e;
  }
  return undefined;
}

function isErrorBody(value: unknown): value is ErrorBody {
  const v = value as ErrorBody | null;
  return typeof v === 'object' && v !== null && typeof v.code === 'string' && typeof v.message === 'string';
}

function shorten(text: string, max = 200): string {
  const oneLine = text.replace(/\s+/g, ' ').trim();
  return oneLine.length > max ? `${oneLine.slice(0, max)}…` : oneLine;
}

export type Http = (request: HttpRequest) => Promise<HttpResponse>;

/**
 * The answer's start, or the deadline's reason once it passes. undici honours the signal only once
 * the request has a connection: one queued behind a connection that never comes (a proxy that hangs
 * up on every CONNECT, which undici's pool then opens again at once, for ever) would outlast it.
 * An answer that comes after all is let go.
 */
function byDeadline(answer: Promise<Dispatcher.ResponseData>, deadline: AbortSignal): Promise<Dispatcher.ResponseData> {
  if (deadline.aborted) {
    answer.then((late) => discardBody(late.body), () => undefined);
    return Promise.reject(deadline.reason as Error);
  }
  return new Promise((resolve, reject) => {
    const onDeadline = () => {
      answer.then((late) => discardBody(late.body), () => undefined);
      reject(deadline.reason as Error);
    };
    deadline.addEventListener('abort', onDeadline, { once: true });
    answer.then(
      (response) => {
        deadline.removeEventListener('abort', onDeadline);
        resolve(response);
      },
      (err: unknown) => {
        deadline.removeEventListener('abort', onDeadline);
        reject(err as Error);
      },
    );
  });
}

/** What to do about a 401, naming where the token came from. */
function unauthorizedHint(tokens: TokenSource, refreshed: boolean): string {
  if (tokens.kind === 'fixed') {
    return `Check the token${tokens.source === undefined ? '' : ` (from ${tokens.source})`}, or set ORGFORM_TOKEN_COMMAND (or --token-command) to a command that prints a fresh one`;
  }
  const command = `the token command${tokens.source === undefined ? '' : ` (${tokens.source})`}`;
  return refreshed
    ? `The service refused the token even just after ${command} gave it; check what the command prints`
    : `Check ${command}`;
}

export function createHttp(options: HttpOptions): Http {
  // Live: every token the source ever handed out, the ones replaced since included.
  const extra = options.extraSecrets ?? [];
  const allSecrets = () => (extra.length === 0 ? options.tokens.secrets : [...options.tokens.secrets, ...extra]);
  const redact = (s: string) => redactSecrets(s, allSecrets());
  const network = { ...(options.proxy === undefined ? {} : { proxy: options.proxy }), ...(options.extraCaCerts === undefined ? {} : { extraCaCerts: options.extraCaCerts }) };

  /** The source's own failure (the token command's, already redacted), as this request's: it names the operation. */
  const tokenFor = async (request: HttpRequest, get: () => Promise<string | undefined>): Promise<string | undefined> => {
    try {
      return await get();
    } catch (err) {
      // Interrupted while the token command ran: the request waited for its token, unsent.
      if (err instanceof OrgformError && err.code === 'INTERRUPTED') throw new NotSentError({ operation: request.operation, target: redact(request.target), why: 'interrupted' });
      const message = err instanceof Error ? err.message : String(err);
      throw new TransportError({ operation: request.operation, target: redact(request.target), failure: 'token', detail: redact(`no token: ${message}`), attempts: 1, cause: sanitizeCause(err, allSecrets()) });
    }
  };

  return async function send(request: HttpRequest): Promise<HttpResponse> {
    const token = (await tokenFor(request, () => options.tokens.current()))!;
    try {
      return await sendWhole(request, token, false);
    } catch (err) {
      if (!(err instanceof ApiError) || err.status !== 401) throw err;
      if (options.tokens.kind !== 'command') {
        options.onTokenRefused?.(err);
        throw err;
      }
      // The token ran out (or was revoked) mid-run. Requests refused together share one run of
      // the command; a 401 is never applied, so sending a write again is safe.
      const fresh = await tokenFor(request, () => options.tokens.refresh(token));
      if (fresh === undefined) throw err;
      try {
        return await sendWhole(request, fresh, true);
      } catch (again) {
        // Refused even just after the command gave it: another run of the command will not help.
        if (again instanceof ApiError && again.status === 401) options.onTokenRefused?.(again);
        throw again;
      }
    }
  };

  /**
   * The request, sent whole again when its answer was cut off halfway: safe for every operation, as
   * a write carries its idempotency key and a delete found gone is done. The gate still holds each
   * send to the rate limit, an interrupt and the request's `notAfter`.
   */
  async function sendWhole(request: HttpRequest, token: string, refreshed: boolean): Promise<HttpResponse> {
    for (let resent = 0; ; resent += 1) {
      try {
        return await sendWith(request, token, refreshed);
      } catch (err) {
        if (!(err instanceof TransportError) || !cutMidAnswer.has(err) || resent >= MAX_CUT_RESENDS) throw err;
      }
    }
  }

  /** The proxy a request goes through, for its wait line: said only where NO_PROXY cannot make it untrue. */
  function via(url: URL): { via?: string } {
    const proxy = options.proxy === undefined || options.proxy.noProxy.trim() !== '' ? undefined : proxyForScheme(options.proxy, url);
    return proxy === undefined ? {} : { via: `${proxy.display} (${proxy.variable})` };
  }

  async function sendWith(request: HttpRequest, token: string, refreshed: boolean): Promise<HttpResponse> {
    const timeouts = request.timeouts ?? options.timeouts;
    const requestId = randomUUID();
    const record = options.transport.track(requestId, {
      what: request.what ?? `${request.operation} ${request.target}`,
      budgetMs: timeouts.totalMs,
      ...(request.label === undefined ? {} : { label: request.label }),
      ...(request.notAfter === undefined ? {} : { notAfter: request.notAfter }),
      ...via(request.url),
    });
    const headers: Record<string, string> = {
      authorization: `Bearer ${token}`,
      accept: 'application/json',
      'accept-encoding': 'gzip, deflate',
      'x-request-id': requestId,
      'user-agent': options.userAgent ?? 'orgform',
    };
    if (request.idempotencyKey !== undefined) headers['idempotency-key'] = request.idempotencyKey;
    let payload: string | undefined;
    if (request.body !== undefined) {
      payload = JSON.stringify(request.body);
      headers['content-type'] = 'application/json';
    }
    // Our own timer rather than AbortSignal.timeout: that one stays armed for the whole budget
    // after the request is done, keeping the request's objects alive with it (10,000 requests
    // held for a minute is most of a bulk apply's memory).
    const controller = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    let heldCounted = 0;
    const arm = (ms: number) => {
      timer = setTimeout(onDeadline, timerDelay(ms));
      timer.unref?.();
    };
    // Time held by the rate limiter (a 429's pause, pacing) is not the request's: the deadline moves by as much.
    const onDeadline = () => {
      if (record.holding) return arm(HOLD_RECHECK_MS);
      const extra = record.heldMs - heldCounted;
      heldCounted = record.heldMs;
      if (extra > 0) return arm(extra);
      controller.abort(new DOMException('deadline', 'TimeoutError'));
    };
    arm(timeouts.totalMs);
    const deadline = controller.signal;
    const letGo = () => controller.abort(new NotSentError({ why: 'interrupted' }));
    const interrupt = request.method === 'GET' ? options.interrupt : undefined;
    if (interrupt?.aborted) letGo();
    else interrupt?.addEventListener('abort', letGo, { once: true });
    /** Let go on an interrupt: as good as not sent, since nothing is made of it. */
    const letGone = () => (deadline.reason instanceof NotSentError ? new NotSentError({ operation: request.operation, target: target(), why: deadline.reason.why, letGo: true }) : undefined);
    // Redacted only on the way to an error: the success path stays cheap.
    const target = () => redact(request.target);
    const fail = (failure: TransportError['failure'], detail: string, cause?: unknown) =>
      new TransportError({ operation: request.operation, target: target(), failure, detail: redact(detail), attempts: Math.max(1, record.attempts), cause: sanitizeCause(cause, allSecrets()) });

    try {
      // undici's request API on our dispatcher rather than fetch: it never follows a redirect (a 3xx
      // is an answer like any other, refused below), and it spares each request fetch's web streams,
      // Request and Response objects and signals, about half of a bulk apply's CPU.
      let response: Dispatcher.ResponseData;
      try {
        response = await byDeadline(
          options.transport.dispatcher.request({
            origin: request.url.origin,
            path: `${request.url.pathname}${request.url.search}`,
            method: request.method,
            headers,
            body: payload,
            signal: deadline,
          }),
          deadline,
        );
      } catch (err) {
        const gone = letGone();
        if (gone !== undefined) throw gone;
        const stop = stopOf(err);
        if (stop instanceof NotSentError) throw new NotSentError({ operation: request.operation, target: target(), why: stop.why, readTooOld: stop.readTooOld });
        if (stop) throw fail('rate-limited', `${stop.message.charAt(0).toLowerCase()}${stop.message.slice(1).replace(/\.$/, '')}`);
        const { failure, detail } = (deadline.aborted ? undefined : describeNetworkFailure(err, { url: request.url, ...network })) ?? describeTransportFailure(err, deadline.aborted, options.proxy !== undefined);
        throw fail(failure, detail, err);
      }
      const status = response.statusCode;

      if (status >= 300 && status < 400) {
        // A redirect would carry the body and headers to wherever it points: never follow one.
        discardBody(response.body);
        const location = firstHeader(response.headers.location);
        throw fail('redirect', `the service answered with a redirect${location ? ` to ${shorten(redact(redactAddress(location)), 100)}` : ''}, which orgform never follows: check the base URL`);
      }

      // Asked for, as fetch did: a compressed answer is read inflated, and the cap counts what it inflates to.
      const encoding = firstHeader(response.headers['content-encoding'])?.trim().toLowerCase();
      if (encoding !== undefined && encoding !== '' && encoding !== 'identity' && encoding !== 'gzip' && encoding !== 'x-gzip' && encoding !== 'deflate') {
        // br, compress, or several layers: read as they come, they would only fail later as "not UTF-8"
        // (or, for a mislabelled plain answer, be read as if the label were not there).
        discardBody(response.body);
        throw fail('bad-response', `the answer is encoded as "${shorten(encoding, 60)}", which orgform did not ask for (it asks for gzip or deflate); nothing is read from it`);
      }
      const inflate = encoding === 'gzip' || encoding === 'x-gzip' ? createGunzip() : encoding === 'deflate' ? createInflate() : undefined;
      const body = inflate === undefined ? response.body : pipeline(response.body, inflate, () => undefined);
      let text: string;
      try {
        text = await readStreamCapped(body, inflate === undefined ? response.headers['content-length'] : undefined, options.maxResponseBytes);
      } catch (err) {
        const gone = letGone();
        if (gone !== undefined) throw gone;
        if (err instanceof BodyTooLargeError) throw fail('too-large', `${err.message}; refusing to read it`);
        if (err instanceof BodyNotUtf8Error) throw fail('bad-response', `${err.message}; nothing is read from it`);
        // node:zlib's own codes: the bytes came, but they do not inflate (the connection is not to blame).
        const zlibCode = errorCodeOf(err);
        if (inflate !== undefined && !deadline.aborted && zlibCode?.startsWith('Z_')) throw fail('bad-response', `the answer's ${encoding} encoding is corrupt or cut short (${zlibCode}); nothing is read from it`, err);
        const { failure, detail } = describeTransportFailure(err, deadline.aborted, options.proxy !== undefined);
        const error = fail(failure, detail, err);
        if (failure === 'connection') cutMidAnswer.add(error);
        throw error;
      }

      // A service that echoes the credential into its data (a billing value, a slug) would have it
      // shown in the plan, its comment and the saved plan: such an answer is refused whole. Error
      // bodies are only ever shown redacted, so they are read as they are.
      if (status >= 200 && status < 300 && holdsSecret(text, allSecrets())) {
        throw fail('bad-response', 'the answer holds the credential orgform sent with the request (the service echoed it into its data); nothing is read from it, so that it cannot be shown or saved');
      }

      const contentType = firstHeader(response.headers['content-type']) ?? '';
      let parsed: unknown;
      let parseFailed = false;
      if (text.trim() !== '') {
        try {
          parsed = JSON.parse(text);
        } catch {
          parseFailed = true;
        }
      }

      if (status < 200 || status >= 300) {
        const attempts = Math.max(1, record.attempts);
        const decision = record.lastDecision;
        let hint: string | undefined;
        if (decision && !decision.retry && decision.reason === 'retry-after-beyond-budget') {
          // The policy already read Retry-After, with the injected clock.
          const asked = decision.retryAfterMs ?? 0;
          const limitMs = decision.limitMs ?? timeouts.totalMs;
          const limit = status === 429 ? `the ${Math.round(limitMs / 1000)} s orgform waits out a rate limit` : `the ${Math.round(limitMs / 1000)} s budget`;
          hint = `The service asked to wait ${Math.ceil(asked / 1000)} s (Retry-After), beyond ${limit}; run again later`;
        } else if (status === 401) {
          hint = unauthorizedHint(options.tokens, refreshed);
        } else if (status === 404 && request.operation === 'getOrganisations') {
          // The listing exists on every service: a 404 for it is a base URL that points elsewhere (a
          // path prefix too many or too few), not an organisation missing.
          hint = `The listing is not at ${redact(`${request.url.origin}${request.url.pathname}`)}: check the base URL (orgform adds /api/organisations/v1 to it)`;
        }
        if (isErrorBody(parsed)) {
          throw new ApiError({
            operation: request.operation,
            target: target(),
            status: status,
            // Redact before shortening: a cut can fall inside the token and leave its start unredacted.
            serviceCode: shorten(redact(parsed.code), 100),
            serviceMessage: shorten(redact(parsed.message), 500),
            serviceCause: typeof parsed.cause === 'string' && parsed.cause !== '' ? shorten(redact(parsed.cause), 500) : undefined,
            attempts,
            requestId,
            hint,
          });
        }
        const what = parseFailed
          ? contentType.includes('html')
            ? 'an HTML page instead of an Error body'
            : 'a body that is not valid JSON'
          : 'no Error body';
        throw new ApiError({ operation: request.operation, target: target(), status: status, attempts, requestId, hint: hint ?? `The service sent ${what}` });
      }

      // A 2xx whose body is not JSON ("200 text/plain OK") is still a success: the operations that
      // need a body check its shape and refuse `undefined` with the operation's own message.
      return { status: status, sentAt: record.sentAt ?? record.startedAt, body: parseFailed ? undefined : parsed, ...(parseFailed ? { unparsed: contentType || 'no content type' } : {}) };
    } finally {
      clearTimeout(timer);
      interrupt?.removeEventListener('abort', letGo);
      options.transport.untrack(requestId);
    }
  }
}

/** Whether `text` holds one of `secrets` (as it is, or percent-encoded); secrets under 4 characters are not looked for, as redactSecrets does. */
function holdsSecret(text: string, secrets: readonly string[]): boolean {
  return secrets.some((secret) => secret.length >= 4 && (text.includes(secret) || text.includes(encodeURIComponent(secret))));
}
