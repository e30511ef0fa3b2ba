/**
 * What the service's answers mean: a success's body (JSON, or undefined), a failure's Error body as
 * an ApiError saying what to do next, and the checks that hold an answer to what the interface
 * describes. Read tolerantly (unknown fields ignored, any 2xx accepted where the interface leaves the
 * answer open), but what orgform relies on is checked here. The errors redact in their constructors.
 */
import type { Redactor } from '../redact.js';
import type { TransportAnswer, TransportRequest } from '../transport/transport.js';
import { firstHeader } from '../transport/read-answer.js';
import { ApiError, TransportError } from './api-error.js';
import type { TokenSource } from './token-source.js';
import type { ErrorBody, OperationId, Organisation } from './types.js';

export interface ServiceResponse {
  status: number;
  /** When the attempt that was answered was sent (the transport's clock): what the answer shows is no older. */
  sentAt: number;
  /** Parsed JSON, or undefined for an empty body or one that is not JSON. */
  body: unknown;
  /** The content type of a 2xx body that was not JSON, so that an operation needing a body can say so. */
  unparsed?: string;
}

/** The request an answer came to, as it was sent. */
export interface AnsweredRequest extends TransportRequest {
  operation: OperationId;
  target: string;
}

/** What reading an answer needs of the client. */
export interface AnswerContext {
  readonly redactor: Redactor;
  readonly tokens: TokenSource;
}

/**
 * A success whose text holds the credential orgform sent: refused whole (a service that echoes the
 * credential into its data, a billing value or a slug, would have it shown in the plan, its comment
 * and the saved plan). Error bodies are only ever shown redacted, so they are read as they are.
 */
export function refuseEchoedCredential(answer: TransportAnswer, request: AnsweredRequest, context: AnswerContext): void {
  if (answer.status >= 200 && answer.status < 300 && context.redactor.holds(answer.text)) {
    throw badAnswer(request, 'the answer holds the credential orgform sent with the request (the service echoed it into its data); nothing is read from it, so that it cannot be shown or saved', context.redactor, answer.attempts);
  }
}

/**
 * `refreshed`: the token sent was fresh from the command (a 401 then says the command's token is
 * refused). `echoChecked`: refuseEchoedCredential has passed it already.
 */
export function readServiceAnswer(answer: TransportAnswer, request: AnsweredRequest, refreshed: boolean, context: AnswerContext, echoChecked = false): ServiceResponse {
  const { status, text } = answer;
  const ok = status >= 200 && status < 300;
  if (!echoChecked) refuseEchoedCredential(answer, request, context);
  let parsed: unknown;
  let parseFailed = false;
  if (text.trim() !== '') {
    try {
      parsed = JSON.parse(text);
    } catch {
      parseFailed = true;
    }
  }
  if (!ok) throw failureOf(answer, request, refreshed, context, parsed, parseFailed);
  // A 2xx whose body is not JSON ("200 text/plain OK") is still a success: the operations that need
  // a body check its shape and refuse `undefined` with the operation's own message.
  if (!parseFailed) return { status, sentAt: answer.sentAt, body: parsed };
  return { status, sentAt: answer.sentAt, body: undefined, unparsed: firstHeader(answer.headers['content-type']) || 'no content type' };
}

function isErrorBody(value: unknown): value is ErrorBody {
  const v = value as ErrorBody | null;
  return typeof v === 'object' && v !== null && typeof v.code === 'string' && typeof v.message === 'string';
}

function failureOf(answer: TransportAnswer, request: AnsweredRequest, refreshed: boolean, context: AnswerContext, parsed: unknown, parseFailed: boolean): ApiError {
  const init = { operation: request.operation, target: request.target, status: answer.status, attempts: answer.attempts, requestId: request.headers['x-request-id'] ?? '' };
  const hint = hintFor(answer, request, refreshed, context.tokens);
  if (isErrorBody(parsed)) {
    const serviceCause = typeof parsed.cause === 'string' ? parsed.cause : undefined;
    return new ApiError({ ...init, serviceCode: parsed.code, serviceMessage: parsed.message, serviceCause, hint, redactor: context.redactor });
  }
  const html = (firstHeader(answer.headers['content-type']) ?? '').includes('html');
  const what = parseFailed ? (html ? 'an HTML page instead of an Error body' : 'a body that is not valid JSON') : 'no Error body';
  return new ApiError({ ...init, hint: hint ?? `The service sent ${what}`, redactor: context.redactor });
}

/** What to do about a failure, when orgform knows. */
function hintFor(answer: TransportAnswer, request: AnsweredRequest, refreshed: boolean, tokens: TokenSource): string | undefined {
  const decision = answer.decision;
  if (decision && !decision.retry && decision.reason === 'retry-after-beyond-budget') {
    // The policy already read Retry-After, with the injected clock, and said what it was beyond.
    const limitS = Math.round((decision.limitMs ?? 0) / 1000);
    const limit = answer.status === 429 ? `the ${limitS} s orgform waits out a rate limit` : `the ${limitS} s budget`;
    return `The service asked to wait ${Math.ceil((decision.retryAfterMs ?? 0) / 1000)} s (Retry-After), beyond ${limit}; run again later`;
  }
  if (answer.status === 401) return unauthorizedHint(tokens, refreshed);
  // The listing exists on every service: a 404 for it is a base URL that points elsewhere (a path
  // prefix too many or too few), not an organisation missing.
  if (answer.status === 404 && request.operation === 'getOrganisations') {
    return `The listing is not at ${request.url.origin}${request.url.pathname}: check the base URL (orgform adds /api/organisations/v1 to it)`;
  }
  return undefined;
}

/** What to do about a 401, naming where the token came from. */
function unauthorizedHint(tokens: TokenSource, refreshed: boolean): string {
  if (tokens.kind === 'fixed') {
    return `Check the token${tokens.source === undefined ? '' : ` (from ${tokens.source})`}, or set ORGFORM_TOKEN_COMMAND (or --token-command) to a command that prints a fresh one`;
  }
  const command = `the token command${tokens.source === undefined ? '' : ` (${tokens.source})`}`;
  return refreshed ? `The service refused the token even just after ${command} gave it; check what the command prints` : `Check ${command}`;
}

/** The answer is not what the interface describes. `detail` may quote it, which may echo the token: the error redacts it. */
export function badAnswer(request: { operation: OperationId; target: string }, detail: string, redactor: Redactor, attempts = 1): TransportError {
  return new TransportError({ operation: request.operation, target: request.target, failure: 'bad-response', detail, attempts, redactor });
}

/** Says why a 2xx had no usable body when it was not JSON at all. */
export function notJson(response: ServiceResponse): string {
  return response.unparsed === undefined ? '' : `, got HTTP ${response.status} with a body that is not JSON (${response.unparsed})`;
}

/** The answer does not have the shape the interface describes. */
export function badShape(request: { operation: OperationId; target: string }, detail: string, redactor: Redactor): TransportError {
  return badAnswer(request, `the answer is not what the interface describes: ${detail}`, redactor);
}

/** Checked for every organisation of every page: no function is made per call. */
export function checkOrganisation(value: unknown, request: { operation: OperationId; target: string }, redactor: Redactor): Organisation {
  const org = value as Organisation | null;
  if (typeof org !== 'object' || org === null || Array.isArray(org)) throw badShape(request, 'expected an Organisation object', redactor);
  if (typeof org.id !== 'string' || org.id === '') throw badShape(request, 'the organisation has no "id"', redactor);
  if (typeof org.slug !== 'string' || org.slug === '') throw badShape(request, `organisation "${org.id}" has no "slug"`, redactor);
  // `billing: null` is read as absent. A billing that is not an object is kept as it came: the
  // state reader marks its values unknown for that one organisation instead of failing them all.
  if (org.billing === null) delete (org as { billing?: unknown }).billing;
  return org;
}

/** For operations whose success body is not shown: a body that looks like an Organisation is used, anything else ignored. */
export function optionalOrganisation(value: unknown, request: { operation: OperationId; target: string }, redactor: Redactor): Organisation | undefined {
  const v = value as Partial<Organisation> | undefined;
  if (v && typeof v === 'object' && typeof v.id === 'string' && typeof v.slug === 'string') return checkOrganisation(v, request, redactor);
  return undefined;
}
