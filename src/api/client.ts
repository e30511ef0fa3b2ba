/**
 * A typed client for the eight operations of the Organisations interface. Responses are read
 * tolerantly (unknown fields ignored, any 2xx accepted where the interface leaves the answer open)
 * but what orgform relies on is checked at this boundary.
 */
import { randomUUID } from 'node:crypto';
import { NotSentError, TransportError, type ApiError } from './api-error.js';
import { createDispatcher, DEFAULT_TIMEOUTS, type DispatcherOptions, type RetryingDispatcher, type Timeouts } from './dispatcher.js';
import { encodePathSegment } from './encode-segment.js';
import { createHttp, type Http, type HttpResponse } from './http.js';
import { ListingGuard } from './listing-guard.js';
import { resolveNextPage } from './next-page-url.js';
import { parseBaseUrl } from './base-url.js';
import { proxySecrets, type ProxySettings } from './proxy-settings.js';
import { DEFAULT_NO_PROGRESS_MS, RateGate, type LimiterClock, type RateEvent, type RateStatus } from './rate/rate-gate.js';
import { OrgformError } from '../errors.js';
import { redactSecrets } from '../redact.js';
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from './retry-policy.js';
import { fixedTokenSource, type TokenSource } from './token-source.js';
import type { WaitEvent } from './wait-event.js';
import type { WaitWatchClock } from './wait-watch.js';
import type { BillingDetails } from '../model/billing.js';
import { toBillingUpdate, type OperationId, type Organisation, type OrganisationList, type SlugAvailability } from './types.js';

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
  /** Injected for tests: a dispatcher of your own (for instance with a fake clock). */
  transport?: RetryingDispatcher;
  onRetry?: DispatcherOptions['onRetry'];
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

/**
 * A page of the listing, and when the request that brought it was sent (the client's clock, the
 * attempt that was answered): the page shows the service as it was at that moment or later, so a
 * read's age counts from then, however long the answer took or waited (read ahead) to be used.
 */
export interface ListingPage extends OrganisationList {
  sentAt: number;
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

/** `detail` may quote the service's answer, which may echo the token: redacted here, where the error is made. */
function badResponse(operation: OperationId, target: string, detail: string, secrets: readonly string[]): TransportError {
  return new TransportError({
    operation,
    target: redactSecrets(target, secrets),
    failure: 'bad-response',
    detail: redactSecrets(`the answer is not what the interface describes: ${detail}`, secrets),
    attempts: 1,
  });
}

function checkOrganisation(value: unknown, operation: OperationId, target: string, secrets: readonly string[]): Organisation {
  const org = value as Organisation | null;
  if (typeof org !== 'object' || org === null || Array.isArray(org)) throw badResponse(operation, target, 'expected an Organisation object', secrets);
  if (typeof org.id !== 'string' || org.id === '') throw badResponse(operation, target, 'the organisation has no "id"', secrets);
  if (typeof org.slug !== 'string' || org.slug === '') throw badResponse(operation, target, `organisation "${org.id}" has no "slug"`, secrets);
  // `billing: null` is read as absent. A billing that is not an object is kept as it came: the
  // state reader marks its values unknown for that one organisation instead of failing them all.
  if (org.billing === null) delete (org as { billing?: unknown }).billing;
  return org;
}

/** Says why a 2xx had no usable body when it was not JSON at all. */
function notJson(response: HttpResponse): string {
  return response.unparsed === undefined ? '' : `, got HTTP ${response.status} with a body that is not JSON (${response.unparsed})`;
}

function optionalOrganisation(value: unknown, operation: OperationId, target: string, secrets: readonly string[]): Organisation | undefined {
  // Operations whose success body is not shown: a body that looks like an Organisation is used, anything else ignored.
  const v = value as Partial<Organisation> | undefined;
  if (v && typeof v === 'object' && typeof v.id === 'string' && typeof v.slug === 'string') return checkOrganisation(v, operation, target, secrets);
  return undefined;
}

/** Why the run stops after a 401 that no fresh token can answer, and what to do. */
function tokenRefusedError(tokens: TokenSource, err: ApiError): OrgformError {
  const from = tokens.source === undefined ? '' : ` from ${tokens.source}`;
  const answer = `HTTP 401${err.serviceCode === undefined ? '' : ` ${err.serviceCode}`}`;
  return tokens.kind === 'fixed'
    ? new OrgformError(
        'API_ERROR',
        `The service refused the token${from} (${answer}), and a fixed token cannot be replaced during a run: nothing more is sent. What was done is recorded. Check the token, or set ORGFORM_TOKEN_COMMAND (or --token-command) to a command that prints a fresh one, and run again.`,
      )
    : new OrgformError(
        'API_ERROR',
        `The service refused the token${from} (${answer}) even just after the command gave it: nothing more is sent. What was done is recorded. Check what the command prints, and run again.`,
      );
}

/**
 * The connection pool for `parallelism` requests in flight. The callers bound the requests (apply's
 * workers, the state reader's and export's p-limit, the sequential listing); the pool is sized above
 * that, because a pool of exactly N connections makes each request wait for a connection the
 * previous answer is still releasing: measured at 1.54 against 1.25 × the ideal on apply 10,000.
 */
function poolSize(parallelism: number | undefined): number | undefined {
  return parallelism === undefined ? undefined : Math.max(64, parallelism * 2);
}

export function createClient(options: ClientOptions): OrganisationsClient {
  const baseUrl = parseBaseUrl(options.baseUrl);
  if (options.tokens === undefined && options.token === undefined) throw new TypeError('createClient needs a token or a token source');
  const tokens = options.tokens ?? fixedTokenSource(options.token!);
  // Live: grows with every token the source hands out.
  const secrets = tokens.secrets;
  const timeouts: Timeouts = { ...DEFAULT_TIMEOUTS, ...options.timeouts };
  const slugTimeouts: Timeouts = { ...SLUG_TIMEOUTS, ...options.slugTimeouts };
  const noProgressMs = options.noProgressMs ?? DEFAULT_NO_PROGRESS_MS;
  // One limiter for every request of this client, on both dispatchers: all workers share one rate.
  const limiter = new RateGate({
    settings: { maxRps: options.maxRps ?? Infinity },
    noProgressMs,
    ...(options.limiterClock === undefined ? {} : { clock: options.limiterClock }),
    ...(options.onRate === undefined ? {} : { onRate: options.onRate }),
    ...(options.onHalt === undefined ? {} : { onStall: options.onHalt }),
  });
  // An interrupt: what waits its turn is not sent. (What is on the wire finishes.)
  const onAbort = () => limiter.stop(new NotSentError({ why: 'interrupted' }));
  if (options.signal?.aborted) onAbort();
  else options.signal?.addEventListener('abort', onAbort, { once: true });
  // A token refused that no fresh one can replace: every request would be refused too, so nothing more is sent.
  const onTokenRefused = (err: ApiError) => {
    if (limiter.stoppedBy) return;
    limiter.stop(new NotSentError({ why: 'the run stopped, as the service refused the token (HTTP 401)' }));
    options.onHalt?.(tokenRefusedError(tokens, err));
  };
  // What both dispatchers share: the proxies and the watch over waits.
  const shared = {
    ...(options.proxy === undefined ? {} : { proxy: options.proxy }),
    ...(options.onWait === undefined ? {} : { onWait: options.onWait }),
    ...(options.waitClock === undefined ? {} : { waitClock: options.waitClock }),
  };
  const policy: RetryPolicy = { ...DEFAULT_RETRY_POLICY, budgetMs: timeouts.totalMs, maxRetryAfterMs: noProgressMs, ...options.retryPolicy };
  const transport =
    options.transport ??
    createDispatcher({ policy, timeouts, onRetry: options.onRetry, random: options.random, now: options.now, limiter, connections: poolSize(options.parallelism), ...shared });
  // What a failure names: the proxy (redacted: its credentials join the secrets) and NODE_EXTRA_CA_CERTS;
  // and the interrupt, which lets go of the reads on the wire.
  const network = {
    ...(options.signal === undefined ? {} : { interrupt: options.signal }),
    ...(options.proxy === undefined ? {} : { proxy: options.proxy, extraSecrets: proxySecrets(options.proxy) }),
    ...(options.extraCaCerts === undefined ? {} : { extraCaCerts: options.extraCaCerts }),
  };
  const http: Http = createHttp({
    baseUrl,
    tokens,
    transport,
    timeouts,
    maxResponseBytes: options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES,
    onTokenRefused,
    ...network,
  });
  // undici applies header and body timeouts per dispatcher, not per request: the slow slug check
  // gets a dispatcher of its own, so that its own timeouts (and budget) are the ones that fire.
  const slugTransport =
    options.transport ??
    createDispatcher({
      policy: { ...DEFAULT_RETRY_POLICY, budgetMs: slugTimeouts.totalMs, maxRetryAfterMs: noProgressMs, ...options.retryPolicy },
      timeouts: slugTimeouts,
      onRetry: options.onRetry,
      random: options.random,
      now: options.now,
      limiter,
      // Its own pool of the same size: only `slugs check` sends here, and it sends nothing else.
      connections: poolSize(options.parallelism),
      ...shared,
    });
  const slugHttp: Http =
    slugTransport === transport
      ? http
      : createHttp({ baseUrl, tokens, transport: slugTransport, timeouts: slugTimeouts, maxResponseBytes: options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES, onTokenRefused, ...network });
  // '' for a bare host: the pathname of a URL is never empty, it is '/'.
  const basePath = baseUrl.pathname.replace(/\/+$/, '');
  const orgApi = (path: string) => new URL(`${basePath}/api/organisations/v1${path}`, baseUrl.origin);
  const v2Api = (path: string) => new URL(`${basePath}/api/v2${path}`, baseUrl.origin);
  const org = (id: string) => encodePathSegment(id, 'organisation id');
  const orgTarget = (id: string) => `organisation ${JSON.stringify(id)}`;

  async function* listOrganisationPages(list: ListOptions = {}): AsyncIterable<ListingPage> {
    const first = orgApi('/organisations');
    first.searchParams.set('limit', String(list.pageSize ?? options.pageSize ?? DEFAULT_PAGE_SIZE));
    if (list.filter !== undefined && list.filter !== '') first.searchParams.set('filter', list.filter);
    const target = list.filter ? `(filter ${JSON.stringify(list.filter)})` : '(all pages)';
    const readPage = async (pageUrl: URL, number: number): Promise<ListingPage> => {
      const response = await http({ operation: 'getOrganisations', method: 'GET', url: pageUrl, target, what: number === 1 ? `the first page of the listing ${target}` : `page ${number} of the listing ${target}` });
      const listing = response.body as OrganisationList | undefined;
      if (!listing || typeof listing !== 'object' || !Array.isArray(listing.organisations)) {
        throw badResponse('getOrganisations', target, `expected an object with an "organisations" array${notJson(response)}`, secrets);
      }
      return Object.assign(listing, { sentAt: response.sentAt });
    };
    const guard = new ListingGuard(list.filter === undefined || list.filter === '');
    let url = first;
    let ahead: Promise<ListingPage> | undefined;
    for (let number = 1; ; number += 1) {
      const listing = await (ahead ?? readPage(url, number));
      ahead = undefined;
      // What comes after this page, decided before the caller sees it (so that the next page can be
      // on its way meanwhile), acted on after, as if decided then.
      guard.read(listing);
      const next = resolveNextPage(listing.next, url);
      const after = next.kind === 'url' ? guard.follow(next.url) : next;
      if (list.readAhead === true && after.kind === 'url') {
        ahead = readPage(after.url, number + 1);
        // Its failure is the caller's when it asks for that page; until then it is not unhandled.
        ahead.catch(() => undefined);
      }
      // Each organisation checked once the next page is on its way: 500 checks a page were on the
      // chain of pages, which can only be read one after another.
      listing.organisations = listing.organisations.map((o) => checkOrganisation(o, 'getOrganisations', target, secrets));
      // An organisation listed again: the links lead back over pages already read.
      const recorded = guard.record(listing.organisations);
      if ('stop' in recorded) throw badResponse('getOrganisations', target, recorded.stop, secrets);
      listing.organisations = recorded.kept;
      yield listing;
      if (after.kind === 'end') {
        const short = guard.end();
        if (short !== undefined) throw badResponse('getOrganisations', target, short, secrets);
        return;
      }
      if (after.kind === 'refused') throw badResponse('getOrganisations', target, after.reason, secrets);
      url = after.url;
    }
  }

  async function readOrganisation(id: string): Promise<OrganisationRead> {
    const url = orgApi(`/organisations/${org(id)}`);
    const response = await http({ operation: 'getOrganisation', method: 'GET', url, target: orgTarget(id), what: `the read of ${orgTarget(id)}` });
    if (response.body === undefined) throw badResponse('getOrganisation', orgTarget(id), `expected an Organisation object${notJson(response)}`, secrets);
    return { organisation: checkOrganisation(response.body, 'getOrganisation', orgTarget(id), secrets), sentAt: response.sentAt };
  }

  return {
    baseUrl,
    listOrganisationPages,
    async *listOrganisations(list) {
      for await (const page of listOrganisationPages(list)) yield* page.organisations;
    },
    getOrganisation: async (id) => (await readOrganisation(id)).organisation,
    readOrganisation,
    async setActiveOrganisation(id, write = {}) {
      const url = orgApi(`/organisations/${org(id)}/active`);
      const { body } = await http({ operation: 'setActiveOrganisation', method: 'PUT', url, target: orgTarget(id), idempotencyKey: write.idempotencyKey ?? randomUUID(), label: write.label });
      return optionalOrganisation(body, 'setActiveOrganisation', orgTarget(id), secrets);
    },
    async updateBillingDetails(id, details, write = {}) {
      const url = orgApi(`/organisations/${org(id)}/billing`);
      const { body } = await http({ operation: 'updateBillingDetails', method: 'PUT', url, target: orgTarget(id), body: toBillingUpdate(details), idempotencyKey: write.idempotencyKey ?? randomUUID(), label: write.label, notAfter: write.notAfter });
      return optionalOrganisation(body, 'updateBillingDetails', orgTarget(id), secrets);
    },
    async getSlugAvailability(slug) {
      const target = `slug ${JSON.stringify(slug)}`;
      const url = orgApi(`/slug/${encodePathSegment(slug, 'slug')}/availability`);
      const response = await slugHttp({ operation: 'getSlugAvailability', method: 'GET', url, target, timeouts: slugTimeouts, what: `the check of ${target}` });
      const v = response.body as SlugAvailability | undefined;
      if (!v || typeof v.ok !== 'boolean') throw badResponse('getSlugAvailability', target, `expected a SlugAvailability with a boolean "ok"${notJson(response)}`, secrets);
      const messages = Array.isArray(v.messages) ? v.messages.filter((m): m is string => typeof m === 'string') : [];
      return { ok: v.ok, messages };
    },
    async acceptInvitation(id, invitationId, write = {}) {
      const url = orgApi(`/organisations/${org(id)}/invitations/${encodePathSegment(invitationId, 'invitation id')}/accept`);
      await http({ operation: 'acceptInvitation', method: 'PUT', url, target: `invitation ${JSON.stringify(invitationId)} of ${orgTarget(id)}`, idempotencyKey: write.idempotencyKey ?? randomUUID(), label: write.label });
    },
    async deleteInvitation(id, invitationId, request = {}) {
      const url = orgApi(`/organisations/${org(id)}/invitations/${encodePathSegment(invitationId, 'invitation id')}`);
      await http({ operation: 'deleteInvitation', method: 'DELETE', url, target: `invitation ${JSON.stringify(invitationId)} of ${orgTarget(id)}`, label: request.label });
    },
    async deleteNotificationChannel(id, channelId, request = {}) {
      const url = v2Api(`/o/${org(id)}/notification_channels/${encodePathSegment(channelId, 'notification channel id')}`);
      await http({ operation: 'deleteNotificationChannel', method: 'DELETE', url, target: `notification channel ${JSON.stringify(channelId)} of ${orgTarget(id)}`, label: request.label });
    },
    rateStatus: () => limiter.status(),
    close: async () => {
      options.signal?.removeEventListener('abort', onAbort);
      await Promise.all([transport.close(), ...(slugTransport === transport ? [] : [slugTransport.close()])]);
    },
  };
}
