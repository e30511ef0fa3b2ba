/**
 * A typed client for the eight operations of the Organisations interface, on the transport: the
 * bearer token (a token command's replaced once when the service refuses it), the idempotency key
 * of a write, the request id, the shared rate gate, and the service's answers read into data or
 * errors that say what to do next (service-answer.ts).
 */
import { randomUUID } from 'node:crypto';
import { OrgformError } from '../errors.js';
import { Redactor } from '../redact.js';
import { DEFAULT_TIMEOUTS, type Timeouts } from '../transport/connection-pool.js';
import { proxySecrets, type ProxySettings } from '../transport/proxy-settings.js';
import { ACCEPT_ENCODING } from '../transport/read-answer.js';
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from '../transport/retry-policy.js';
import { Transport, type AttemptEvent, type RetryEvent, type TransportOptions } from '../transport/transport.js';
import { ApiError, NotSentError, TransportError } from './api-error.js';
import { parseBaseUrl } from './base-url.js';
import { encodePathSegment } from './encode-segment.js';
import { listPages, type ListingPage, type PageHooks, type PageReader } from './listing-pages.js';
import { DEFAULT_NO_PROGRESS_MS, RateGate, type LimiterClock, type RateEvent, type RateStatus } from './rate/rate-gate.js';
import { badShape, checkOrganisation, notJson, optionalOrganisation, readServiceAnswer, refuseEchoedCredential, type AnsweredRequest, type AnswerContext, type ServiceResponse } from './service-answer.js';
import { fixedTokenSource, type TokenSource } from './token-source.js';
import { toBillingUpdate, type OperationId, type Organisation, type OrganisationList, type SlugAvailability } from './types.js';
import type { WaitEvent } from './wait-event.js';
import { describeWait, WaitWatch, type WaitWatchClock } from './wait-watch.js';
import type { BillingDetails } from '../model/billing.js';

export type { ListingPage } from './listing-pages.js';

export interface ClientOptions {
  baseUrl: string;
  /** A fixed token; or `tokens`, a source that can replace it (a token command). */
  token?: string;
  tokens?: TokenSource;
  /** Never more requests a second than this (--max-rps); the adaptive rate stays below it. */
  maxRps?: number;
  /**
   * Only 429s for this long, with requests outstanding, and the client gives up (default 10
   * minutes); also the longest pause the service may announce (Retry-After, a quota's reset).
   */
  noProgressMs?: number;
  /** Told when the shared rate changes for a reason worth showing (a 429, an announced limit) or gives up. */
  onRate?: (event: RateEvent) => void;
  /**
   * Told when no request has ended for WAIT_NOTICE_MS while some are outstanding: what they wait
   * for (a pause, the pace, a backoff, an answer) and until when (wait-watch.ts).
   */
  onWait?: (event: WaitEvent) => void;
  /** The clock of that watch; injected by tests. */
  waitClock?: WaitWatchClock;
  /**
   * Told once when the client stops by itself, because the run cannot go on: only 429s for
   * `noProgressMs`, a pause announced beyond it, or a fixed token refused (401). From then on every
   * request not yet sent fails without being sent.
   */
  onHalt?: (error: OrgformError) => void;
  /**
   * Aborted on an interrupt: every request not yet on the wire (waiting its turn at the rate
   * limiter, in a backoff, for a token), and every read on it, fails at once with NotSentError;
   * the writes on the wire finish.
   */
  signal?: AbortSignal;
  timeouts?: Partial<Timeouts>;
  /** The slow slug check's own budget. */
  slugTimeouts?: Partial<Timeouts>;
  retryPolicy?: Partial<RetryPolicy>;
  maxResponseBytes?: number;
  /** Page size asked for; the service may return fewer. */
  pageSize?: number;
  /**
   * Requests in flight at once, reads and writes together (--parallelism), as the callers bound
   * them: the client only sizes its connection pool from it (poolSize below: 64, or twice this when
   * that is more). Unset, the pool holds 64 connections.
   */
  parallelism?: number;
  /** Injected for tests: the connections to send on, instead of undici's Agent (one that never answers). */
  pool?: TransportOptions['pool'];
  /** Told of every retry, for progress output and tests. */
  onRetry?: (event: RetryEvent) => void;
  /** Told of every attempt that went out, as it ends: when it was sent, when it ended, its status (TransportOptions.onAttempt). */
  onAttempt?: (event: AttemptEvent) => void;
  random?: () => number;
  /** The clock the retry budget is measured with. */
  now?: () => number;
  /** HTTP(S)_PROXY and NO_PROXY (readProxySettings): every request goes as they say. */
  proxy?: ProxySettings;
  /** NODE_EXTRA_CA_CERTS, as the process was started with it: named in the hint on a certificate refused. */
  extraCaCerts?: string;
  /**
   * The clock the rate limiter waits with (Retry-After, an empty quota's reset, the pace, backoffs
   * before a retry): injected by tests, so that they wait in fake time.
   */
  limiterClock?: LimiterClock;
}

export interface ListOptions {
  filter?: string;
  pageSize?: number;
  /**
   * Asks for the next page as soon as this one is read, while the caller works through it: for a
   * caller that reads every page (the plan's listing), whose pages are a chain of requests one
   * after another. A caller that may stop early leaves it off, so that no page is read for nothing.
   */
  readAhead?: boolean;
}

export interface RequestOptions {
  /** What the caller calls this request (a change's address), passed to retry events. */
  label?: string;
}

export interface WriteOptions extends RequestOptions {
  /** Sent as Idempotency-Key; the same across retries of one change. */
  idempotencyKey?: string;
  /** No attempt is sent after this time (epoch ms, the client's clock): NotSentError with `readTooOld` instead. */
  notAfter?: number;
}

/** An organisation read by id, and when the request that read it was sent (as ListingPage's `sentAt`). */
export interface OrganisationRead {
  organisation: Organisation;
  sentAt: number;
}

export interface OrganisationsClient {
  readonly baseUrl: URL;
  /** Every page the `next` links lead to; fails, naming where it stopped, rather than end part way. */
  listOrganisationPages(options?: ListOptions): AsyncIterable<ListingPage>;
  listOrganisations(options?: ListOptions): AsyncIterable<Organisation>;
  getOrganisation(organisationId: string): Promise<Organisation>;
  /** GetOrganisation, with when its request was sent: for a read whose age matters. */
  readOrganisation(organisationId: string): Promise<OrganisationRead>;
  setActiveOrganisation(organisationId: string, options?: WriteOptions): Promise<Organisation | undefined>;
  /** Sends the billing details, mapped to the request's spelling (BillingUpdate). */
  updateBillingDetails(organisationId: string, details: BillingDetails, options?: WriteOptions): Promise<Organisation | undefined>;
  getSlugAvailability(slug: string): Promise<SlugAvailability>;
  acceptInvitation(organisationId: string, invitationId: string, options?: WriteOptions): Promise<void>;
  deleteInvitation(organisationId: string, invitationId: string, options?: RequestOptions): Promise<void>;
  deleteNotificationChannel(organisationId: string, channelId: string, options?: RequestOptions): Promise<void>;
  /** The shared rate limiter as it stands: the rate, a pause, attempts waiting, 429s so far. */
  rateStatus(): RateStatus;
  close(): Promise<void>;
}

export const DEFAULT_PAGE_SIZE = 500;
export const DEFAULT_MAX_RESPONSE_BYTES = 16 * 1024 * 1024;
const SLUG_TIMEOUTS: Timeouts = { connectMs: 10_000, headersMs: 60_000, bodyMs: 30_000, totalMs: 120_000 };

/** One request to the service, as an operation makes it. */
interface ServiceRequest {
  operation: OperationId;
  method: 'GET' | 'PUT' | 'DELETE';
  /** Absolute URL (already checked to be on the base URL's origin). */
  url: URL;
  /** Names what the request is about, for messages: `organisation "acme"`. */
  target: string;
  /** The request in words, for a line saying what the run waits for. */
  what: string;
  body?: unknown;
  idempotencyKey?: string;
  label?: string;
  notAfter?: number;
  onSent?: () => void;
  onText?: (text: string) => Promise<void> | undefined;
  letGo?: AbortSignal;
}

/** Why the run stops after a 401 that no fresh token can answer, and what to do. */
function tokenRefusedError(tokens: TokenSource, err: ApiError): OrgformError {
  const from = tokens.source === undefined ? '' : ` from ${tokens.source}`;
  const answer = `HTTP 401${err.serviceCode === undefined ? '' : ` ${err.serviceCode}`}`;
  const [why, check] =
    tokens.kind === 'fixed'
      ? [', and a fixed token cannot be replaced during a run', 'the token, or set ORGFORM_TOKEN_COMMAND (or --token-command) to a command that prints a fresh one']
      : [' even just after the command gave it', 'what the command prints'];
  return new OrgformError('API_ERROR', `The service refused the token${from} (${answer})${why}: nothing more is sent. What was done is recorded. Check ${check}, and run again.`);
}

/**
 * The connection pool for `parallelism` requests in flight. The callers bound the requests (apply's
 * workers, the state reader's and export's p-limit, the sequential listing); the pool is sized above
 * that, because a pool of exactly N connections makes each request wait for a connection the
 * previous answer is still releasing (docs/performance.md).
 */
function poolSize(parallelism: number | undefined): number {
  return parallelism === undefined ? 64 : Math.max(64, parallelism * 2);
}

/** What messages call an organisation: `organisation "org_acme"`. */
function organisationTarget(id: string): string {
  return `organisation ${JSON.stringify(id)}`;
}

export function createClient(options: ClientOptions): OrganisationsClient {
  return new ServiceClient(options);
}

/** A transport of the client: its timeouts, on the shared gate, watched for waits when someone listens. */
function openTransport(options: ClientOptions, gate: RateGate, redactor: Redactor, timeouts: Timeouts): Transport {
  const watch = options.onWait === undefined ? undefined : new WaitWatch((at) => describeWait(transport, gate, at), options.onWait, options.waitClock);
  const transport: Transport = new Transport({
    retry: { ...DEFAULT_RETRY_POLICY, budgetMs: timeouts.totalMs, maxRetryAfterMs: gate.noProgressMs, ...options.retryPolicy },
    timeouts,
    maxResponseBytes: options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES,
    redactor,
    peer: { name: 'the service', address: 'the base URL' },
    connections: poolSize(options.parallelism),
    proxy: options.proxy,
    extraCaCerts: options.extraCaCerts,
    gate,
    watch,
    now: options.now,
    random: options.random,
    onRetry: options.onRetry,
    onAttempt: options.onAttempt,
    pool: options.pool,
    // The interrupt lets go of the reads on the wire; the gate, stopped by it, sends nothing more.
    interrupt: options.signal,
  });
  return transport;
}

class ServiceClient implements OrganisationsClient, PageReader, AnswerContext {
  readonly baseUrl: URL;
  readonly redactor: Redactor;
  readonly tokens: TokenSource;
  readonly #options: ClientOptions;
  readonly #gate: RateGate;
  readonly #transport: Transport;
  /** undici applies header and body timeouts per pool: the slow slug check has a transport of its own, on the same gate. */
  readonly #slugTransport: Transport;
  /** '' for a bare host: the pathname of a URL is never empty, it is '/'. */
  readonly #basePath: string;
  readonly #onAbort = () => this.#gate.stop(new NotSentError({ why: 'interrupted' }));

  constructor(options: ClientOptions) {
    this.baseUrl = parseBaseUrl(options.baseUrl);
    if (options.tokens === undefined && options.token === undefined) throw new TypeError('createClient needs a token or a token source');
    this.#options = options;
    this.tokens = options.tokens ?? fixedTokenSource(options.token!);
    // Live: grows with every token the source hands out; the proxies' credentials too.
    this.redactor = new Redactor(this.tokens.secrets).add(...proxySecrets(options.proxy));
    this.#gate = new RateGate({
      settings: { maxRps: options.maxRps ?? Infinity },
      noProgressMs: options.noProgressMs ?? DEFAULT_NO_PROGRESS_MS,
      ...(options.limiterClock === undefined ? {} : { clock: options.limiterClock }),
      ...(options.onRate === undefined ? {} : { onRate: options.onRate }),
      ...(options.onHalt === undefined ? {} : { onStall: options.onHalt }),
    });
    this.#transport = openTransport(options, this.#gate, this.redactor, { ...DEFAULT_TIMEOUTS, ...options.timeouts });
    this.#slugTransport = openTransport(options, this.#gate, this.redactor, { ...SLUG_TIMEOUTS, ...options.slugTimeouts });
    this.#basePath = this.baseUrl.pathname.replace(/\/+$/, '');
    // An interrupt: what waits its turn is not sent. (What is on the wire finishes.)
    if (options.signal?.aborted) this.#onAbort();
    else options.signal?.addEventListener('abort', this.#onAbort, { once: true });
  }

  #orgApi(path: string): URL {
    return new URL(`${this.#basePath}/api/organisations/v1${path}`, this.baseUrl.origin);
  }

  /** `/organisations/ID` (and `rest` after it) under the organisations API. */
  #organisationUrl(id: string, rest = ''): URL {
    return this.#orgApi(`/organisations/${encodePathSegment(id, 'organisation id')}${rest}`);
  }

  listOrganisationPages(list: ListOptions = {}): AsyncIterable<ListingPage> {
    const first = this.#orgApi('/organisations');
    first.searchParams.set('limit', String(list.pageSize ?? this.#options.pageSize ?? DEFAULT_PAGE_SIZE));
    if (list.filter !== undefined && list.filter !== '') first.searchParams.set('filter', list.filter);
    const filtered = list.filter !== undefined && list.filter !== '';
    return listPages(this, first, { target: filtered ? `(filter ${JSON.stringify(list.filter)})` : '(all pages)', headed: !filtered, readAhead: list.readAhead === true });
  }

  async readPage(url: URL, number: number, target: string, { onSent, onText, letGo }: PageHooks = {}): Promise<ListingPage> {
    const what = number === 1 ? `the first page of the listing ${target}` : `page ${number} of the listing ${target}`;
    const response = await this.#send({ operation: 'getOrganisations', method: 'GET', url, target, what, onSent, onText, letGo });
    const listing = response.body as OrganisationList | undefined;
    if (!listing || typeof listing !== 'object' || !Array.isArray(listing.organisations)) {
      throw badShape({ operation: 'getOrganisations', target }, `expected an object with an "organisations" array${notJson(response)}`, this.redactor);
    }
    return Object.assign(listing, { sentAt: response.sentAt });
  }

  async *listOrganisations(list?: ListOptions): AsyncIterable<Organisation> {
    for await (const page of this.listOrganisationPages(list)) yield* page.organisations;
  }

  async getOrganisation(id: string): Promise<Organisation> {
    return (await this.readOrganisation(id)).organisation;
  }

  async readOrganisation(id: string): Promise<OrganisationRead> {
    const target = organisationTarget(id);
    const request: ServiceRequest = { operation: 'getOrganisation', method: 'GET', url: this.#organisationUrl(id), target, what: `the read of ${target}` };
    const response = await this.#send(request);
    if (response.body === undefined) throw badShape(request, `expected an Organisation object${notJson(response)}`, this.redactor);
    return { organisation: checkOrganisation(response.body, request, this.redactor), sentAt: response.sentAt };
  }

  async setActiveOrganisation(id: string, write: WriteOptions = {}): Promise<Organisation | undefined> {
    const target = organisationTarget(id);
    const url = this.#organisationUrl(id, '/active');
    const request: ServiceRequest = { operation: 'setActiveOrganisation', method: 'PUT', url, target, what: `setActiveOrganisation ${target}`, idempotencyKey: write.idempotencyKey ?? randomUUID(), label: write.label };
    return optionalOrganisation((await this.#send(request)).body, request, this.redactor);
  }

  /** Sends the billing details, mapped to the request's spelling (BillingUpdate). */
  async updateBillingDetails(id: string, details: BillingDetails, write: WriteOptions = {}): Promise<Organisation | undefined> {
    const target = organisationTarget(id);
    const url = this.#organisationUrl(id, '/billing');
    const idempotencyKey = write.idempotencyKey ?? randomUUID();
    const request: ServiceRequest = { operation: 'updateBillingDetails', method: 'PUT', url, target, what: `updateBillingDetails ${target}`, body: toBillingUpdate(details), idempotencyKey, label: write.label, notAfter: write.notAfter };
    return optionalOrganisation((await this.#send(request)).body, request, this.redactor);
  }

  async getSlugAvailability(slug: string): Promise<SlugAvailability> {
    const target = `slug ${JSON.stringify(slug)}`;
    const url = this.#orgApi(`/slug/${encodePathSegment(slug, 'slug')}/availability`);
    const response = await this.#send({ operation: 'getSlugAvailability', method: 'GET', url, target, what: `the check of ${target}` }, this.#slugTransport);
    const v = response.body as SlugAvailability | undefined;
    if (!v || typeof v.ok !== 'boolean') throw badShape({ operation: 'getSlugAvailability', target }, `expected a SlugAvailability with a boolean "ok"${notJson(response)}`, this.redactor);
    const messages = Array.isArray(v.messages) ? v.messages.filter((m): m is string => typeof m === 'string') : [];
    return { ok: v.ok, messages };
  }

  async acceptInvitation(id: string, invitationId: string, write: WriteOptions = {}): Promise<void> {
    const url = this.#organisationUrl(id, `/invitations/${encodePathSegment(invitationId, 'invitation id')}/accept`);
    const about = `invitation ${JSON.stringify(invitationId)} of ${organisationTarget(id)}`;
    await this.#send({ operation: 'acceptInvitation', method: 'PUT', url, target: about, what: `acceptInvitation ${about}`, idempotencyKey: write.idempotencyKey ?? randomUUID(), label: write.label });
  }

  async deleteInvitation(id: string, invitationId: string, request: RequestOptions = {}): Promise<void> {
    const url = this.#organisationUrl(id, `/invitations/${encodePathSegment(invitationId, 'invitation id')}`);
    const about = `invitation ${JSON.stringify(invitationId)} of ${organisationTarget(id)}`;
    await this.#send({ operation: 'deleteInvitation', method: 'DELETE', url, target: about, what: `deleteInvitation ${about}`, label: request.label });
  }

  async deleteNotificationChannel(id: string, channelId: string, request: RequestOptions = {}): Promise<void> {
    const url = new URL(`${this.#basePath}/api/v2/o/${encodePathSegment(id, 'organisation id')}/notification_channels/${encodePathSegment(channelId, 'notification channel id')}`, this.baseUrl.origin);
    const about = `notification channel ${JSON.stringify(channelId)} of ${organisationTarget(id)}`;
    await this.#send({ operation: 'deleteNotificationChannel', method: 'DELETE', url, target: about, what: `deleteNotificationChannel ${about}`, label: request.label });
  }

  rateStatus(): RateStatus {
    return this.#gate.status();
  }

  async close(): Promise<void> {
    this.#options.signal?.removeEventListener('abort', this.#onAbort);
    await Promise.all([this.#transport.close(), this.#slugTransport.close()]);
  }

  /**
   * A request with the current token. A 401 with a token from a command gets a fresh token and one
   * more try (requests refused together share one run of the command; a 401 is never applied, so
   * sending a write again is safe); a 401 no fresh token can answer stops the client.
   */
  async #send(request: ServiceRequest, transport = this.#transport): Promise<ServiceResponse> {
    const token = (await this.#token(request))!;
    try {
      return await this.#sendWith(request, token, false, transport);
    } catch (err) {
      if (!(err instanceof ApiError) || err.status !== 401) throw err;
      if (this.tokens.kind !== 'command') throw this.#refused(err);
      const fresh = await this.#token(request, token);
      if (fresh === undefined) throw err;
      try {
        return await this.#sendWith(request, fresh, true, transport);
      } catch (again) {
        // Refused even just after the command gave it: another run of the command will not help.
        throw again instanceof ApiError && again.status === 401 ? this.#refused(again) : again;
      }
    }
  }

  async #sendWith(request: ServiceRequest, token: string, refreshed: boolean, transport: Transport): Promise<ServiceResponse> {
    const wire = this.#wire(request, token);
    const answer = await transport.send(wire);
    if (request.onText === undefined || answer.status < 200 || answer.status >= 300) return readServiceAnswer(answer, wire, refreshed, this);
    // A success's text, before it is parsed: the listing may ask for its next page meanwhile, and
    // have it on the wire before this page is parsed.
    refuseEchoedCredential(answer, wire, this);
    await request.onText(answer.text);
    return readServiceAnswer(answer, wire, refreshed, this, true);
  }

  #wire(request: ServiceRequest, token: string): AnsweredRequest {
    const headers: Record<string, string> = {
      authorization: `Bearer ${token}`,
      accept: 'application/json',
      'accept-encoding': ACCEPT_ENCODING,
      'x-request-id': randomUUID(),
      'user-agent': 'orgform',
    };
    if (request.idempotencyKey !== undefined) headers['idempotency-key'] = request.idempotencyKey;
    let body: string | undefined;
    if (request.body !== undefined) {
      body = JSON.stringify(request.body);
      headers['content-type'] = 'application/json';
    }
    const { method, url, operation, target, what, label, notAfter, onSent, letGo } = request;
    return { method, url, headers, body, operation, target, what, label, notAfter, onSent, letGo };
  }

  /**
   * The token to send, or after `stale` was refused a fresh one. The source's own failure (the token
   * command's) becomes this request's: it names the operation.
   */
  async #token(request: ServiceRequest, stale?: string): Promise<string | undefined> {
    try {
      return await (stale === undefined ? this.tokens.current() : this.tokens.refresh(stale));
    } catch (err) {
      // Interrupted while the token command ran: the request waited for its token, unsent.
      if (err instanceof OrgformError && err.code === 'INTERRUPTED') throw new NotSentError({ operation: request.operation, target: request.target, why: 'interrupted', redactor: this.redactor });
      const message = err instanceof Error ? err.message : String(err);
      throw new TransportError({ operation: request.operation, target: request.target, failure: 'token', detail: `no token: ${message}`, attempts: 1, cause: err, redactor: this.redactor });
    }
  }

  /** A token refused that no fresh one can replace: every request would be refused too, so nothing more is sent. */
  #refused(err: ApiError): ApiError {
    if (this.#gate.stoppedBy === undefined) {
      this.#gate.stop(new NotSentError({ why: 'the run stopped, as the service refused the token (HTTP 401)' }));
      this.#options.onHalt?.(tokenRefusedError(this.tokens, err));
    }
    return err;
  }
}
