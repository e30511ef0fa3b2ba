/**
 * One logical request to the service: global fetch over our dispatcher, with the token attached,
 * redirects refused, a deadline, a size cap, and failures turned into ApiError or TransportError
 * with the token redacted where they are made.
 */
import { randomUUID } from 'node:crypto';
import { ApiError, TransportError } from './api-error.js';
import type { RetryingDispatcher, Timeouts } from './dispatcher.js';
import { BodyTooLargeError, readBodyCapped } from './read-body.js';
import { redactSecrets, sanitizeCause } from './redact.js';
import type { ErrorBody, OperationId } from './types.js';

export interface HttpOptions {
  baseUrl: URL;
  token: string;
  transport: RetryingDispatcher;
  timeouts: Timeouts;
  maxResponseBytes: number;
  userAgent?: string;
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
}

export interface HttpResponse {
  status: number;
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

function describeTransportFailure(err: unknown, deadlineHit: boolean): { failure: TransportError['failure']; detail: string } {
  const code = errorCodeOf(err);
  const name = (err as { name?: string })?.name;
  if (deadlineHit || name === 'TimeoutError') return { failure: 'timeout', detail: 'no complete answer within the time budget' };
  if (code === 'UND_ERR_HEADERS_TIMEOUT') return { failure: 'timeout', detail: 'the service sent no answer in time (headers timeout)' };
  if (code === 'UND_ERR_BODY_TIMEOUT') return { failure: 'timeout', detail: 'the answer stopped arriving (body timeout)' };
  if (code === 'UND_ERR_CONNECT_TIMEOUT') return { failure: 'timeout', detail: 'could not connect in time' };
  if (name === 'AbortError') return { failure: 'aborted', detail: 'the request was cancelled' };
  if (code === 'ECONNREFUSED') return { failure: 'connection', detail: 'connection refused: is the base URL right and the service up?' };
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return { failure: 'connection', detail: 'the host name could not be resolved' };
  if (code !== undefined) return { failure: 'connection', detail: `the connection failed (${code})` };
  return { failure: 'connection', detail: 'the connection failed' };
}

/** fetch's own refusal under `redirect: 'error'`. */
function isRedirectRefusal(err: unknown): boolean {
  const cause = (err as { cause?: { message?: unknown } })?.cause;
  return typeof cause?.message === 'string' && /redirect/i.test(cause.message);
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

export function createHttp(options: HttpOptions): Http {
  const secrets = [options.token];
  const redact = (s: string) => redactSecrets(s, secrets);

  return async function send(request: HttpRequest): Promise<HttpResponse> {
    const timeouts = request.timeouts ?? options.timeouts;
    const requestId = randomUUID();
    const record = options.transport.track(requestId, request.label);
    const headers: Record<string, string> = {
      authorization: `Bearer ${options.token}`,
      accept: 'application/json',
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
    const timer = setTimeout(() => controller.abort(new DOMException('deadline', 'TimeoutError')), timeouts.totalMs);
    timer.unref?.();
    const deadline = controller.signal;
    // Redacted only on the way to an error: the success path stays cheap.
    const target = () => redact(request.target);
    const fail = (failure: TransportError['failure'], detail: string, cause?: unknown) =>
      new TransportError({ operation: request.operation, target: target(), failure, detail: redact(detail), attempts: Math.max(1, record.attempts), cause: sanitizeCause(cause, secrets) });

    try {
      let response: Response;
      try {
        response = await fetch(request.url, {
          method: request.method,
          headers,
          body: payload,
          // A redirect would carry the body and headers to wherever it points: never follow one.
          // 'error' rather than 'manual' also spares fetch a clone of every request (and a tee of its body).
          redirect: 'error',
          signal: deadline,
          dispatcher: options.transport.dispatcher,
        } as unknown as RequestInit);
      } catch (err) {
        if (isRedirectRefusal(err)) {
          const location = record.redirectLocation;
          throw fail('redirect', `the service answered with a redirect${location ? ` to ${shorten(redact(location), 100)}` : ''}, which orgform never follows: check the base URL`);
        }
        const { failure, detail } = describeTransportFailure(err, deadline.aborted);
        throw fail(failure, detail, err);
      }

      if (response.type === 'opaqueredirect' || (response.status >= 300 && response.status < 400)) {
        await response.body?.cancel().catch(() => undefined);
        const location = response.headers.get('location');
        throw fail('redirect', `the service answered with a redirect${location ? ` to ${shorten(redact(location), 100)}` : ''}, which orgform never follows: check the base URL`);
      }

      let text: string;
      try {
        text = await readBodyCapped(response, options.maxResponseBytes);
      } catch (err) {
        if (err instanceof BodyTooLargeError) throw fail('too-large', `${err.message}; refusing to read it`);
        const { failure, detail } = describeTransportFailure(err, deadline.aborted);
        throw fail(failure, detail, err);
      }

      const contentType = response.headers.get('content-type') ?? '';
      let parsed: unknown;
      let parseFailed = false;
      if (text.trim() !== '') {
        try {
          parsed = JSON.parse(text);
        } catch {
          parseFailed = true;
        }
      }

      if (response.status < 200 || response.status >= 300) {
        const attempts = Math.max(1, record.attempts);
        const decision = record.lastDecision;
        let hint: string | undefined;
        if (decision && !decision.retry && decision.reason === 'retry-after-beyond-budget') {
          // The policy already read Retry-After, with the injected clock.
          const asked = decision.retryAfterMs ?? 0;
          hint = `The service asked to wait ${Math.ceil(asked / 1000)} s (Retry-After), beyond the ${Math.round(timeouts.totalMs / 1000)} s budget; run again later`;
        } else if (response.status === 401) {
          hint = 'Check the token (ORGFORM_TOKEN or --token-file)';
        }
        if (isErrorBody(parsed)) {
          throw new ApiError({
            operation: request.operation,
            target: target(),
            status: response.status,
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
        throw new ApiError({ operation: request.operation, target: target(), status: response.status, attempts, requestId, hint: hint ?? `The service sent ${what}` });
      }

      // A 2xx whose body is not JSON ("200 text/plain OK") is still a success: the operations that
      // need a body check its shape and refuse `undefined` with the operation's own message.
      return { status: response.status, body: parseFailed ? undefined : parsed, ...(parseFailed ? { unparsed: contentType || 'no content type' } : {}) };
    } finally {
      clearTimeout(timer);
      options.transport.untrack(requestId);
    }
  };
}
