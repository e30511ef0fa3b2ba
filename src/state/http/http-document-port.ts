/**
 * The Terraform HTTP protocol's four requests (a DocumentPort), sent through the transport as the
 * service's are (redirects never followed, the proxies, a size cap, one set of words for what
 * fails), with what is the protocol's own: Basic auth from ORGFORM_STATE_USERNAME and _PASSWORD,
 * the lock requests ORGFORM_STATE_LOCK_* name, `?ID=` on a write, and a 409 or 423 for a lock
 * someone holds.
 *
 *   read     GET address: 200 the document; 204 (exists, empty) and 404 (none yet) an empty one
 *   lock     POST address/lock with Terraform's lock info; 409 or 423 when held, with the holder's
 *            lock info when the server gives it
 *   write    POST address?ID=<lock id>, the whole document
 *   unlock   DELETE address/lock with the lock info; 409 when it is not locked with that ID
 */
import { checkCredential } from '../../check-credential.js';
import { OrgformError, UsageError } from '../../errors.js';
import { Redactor } from '../../redact.js';
import { proxySecrets, type NetworkSettings } from '../../transport/proxy-settings.js';
import { ACCEPT_ENCODING } from '../../transport/read-answer.js';
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from '../../transport/retry-policy.js';
import { TransportError } from '../../transport/transport-error.js';
import { Transport, type TransportAnswer } from '../../transport/transport.js';
import { VERSION } from '../../version.js';
import type { StateSpec } from '../parse-state-spec.js';
import { StateUnavailableError, type LockHolder } from '../state-backend.js';
import type { StateSettings } from '../state-settings.js';
import { emptyDocument, parseStateDocument, serializeStateDocument, type StateDocument } from '../terraform-document.js';
import type { DocumentPort } from './document-writer.js';
import { holderFrom, lockInfo, lockSettings, type LockRequests } from './terraform-lock.js';

export type HttpSpec = Extract<StateSpec, { kind: 'http' }>;

/** A whole journal of a million entries is about 150 MB; more than this is not a state orgform wrote. */
const MAX_STATE_BYTES = 512 * 2 ** 20;
/** Attempts of a request that may be sent again (reads, whole-document writes, unlocks). */
const ATTEMPTS = 3;

/**
 * Sent again after a failed connection, a 408, 429 or 5xx: 250 ms, then 500 ms (doubling, at most
 * 10 s), without jitter (one client per state). No rate gate: a 429 is one more failure to wait out.
 * ORGFORM_STATE_TIMEOUT_MS bounds each attempt; a request has that for each of its attempts, and
 * its waits between them.
 */
function statePolicy(timeoutMs: number): RetryPolicy {
  const budgetMs = ATTEMPTS * timeoutMs + 10_000;
  return { ...DEFAULT_RETRY_POLICY, maxAttempts: ATTEMPTS, baseDelayMs: 250, maxDelayMs: 10_000, budgetMs, retryableStatuses: [408, 429, 500, 502, 503, 504], backpressureStatuses: [] };
}

/** One request to the backend: what it is, in words (`reading the state`), and whether it may be sent again. */
interface StateRequest {
  method: string;
  url: URL;
  body?: string;
  /** Safe to send again after a failure or a 5xx (reads, whole-document writes, unlocks); a lock is sent once. */
  retry: boolean;
  doing: string;
}

/**
 * The state's server could not be used: what it said (or why it said nothing), redacted here with
 * the state's redactor (its password, the Basic credential, the proxies').
 */
export class HttpStateError extends StateUnavailableError {
  constructor(init: { location: string; why: string; redactor: Redactor; cause?: unknown }) {
    super(init.location, init.redactor.text(init.why), init.cause);
  }
}

export class HttpDocumentPort implements DocumentPort {
  readonly location: string;
  readonly redactor: Redactor;
  readonly #address: URL;
  readonly #settings: StateSettings;
  readonly #network: NetworkSettings;
  readonly #requests: LockRequests;
  readonly #authorization: string | undefined;
  /** The lock info of each lock this port took, sent again with its unlock. */
  readonly #infos = new Map<string, string>();
  /** Opened at the first request, and again after a close (state migrate reads a state, then locks it). */
  #transport: Transport | undefined;

  constructor(spec: HttpSpec, settings: StateSettings, network: NetworkSettings) {
    const { username, password } = settings.http;
    if (username !== undefined) checkCredential(username, 'ORGFORM_STATE_USERNAME');
    if (password !== undefined) checkCredential(password, 'ORGFORM_STATE_PASSWORD');
    if (password !== undefined && username === undefined) {
      throw new UsageError('ORGFORM_STATE_PASSWORD is set without ORGFORM_STATE_USERNAME: set both (in GitLab CI: gitlab-ci-token and $CI_JOB_TOKEN).');
    }
    this.location = spec.location;
    this.#address = spec.address;
    this.#settings = settings;
    this.#network = network;
    this.#requests = lockSettings(spec.address, settings.http);
    this.redactor = new Redactor().add(...proxySecrets(network.proxy));
    if (username !== undefined) {
      const basic = Buffer.from(`${username}:${password ?? ''}`).toString('base64');
      this.#authorization = `Basic ${basic}`;
      this.redactor.add(basic, password ?? '');
    }
  }

  async read(): Promise<StateDocument> {
    const answer = await this.#send({ method: 'GET', url: this.#address, retry: true, doing: 'reading the state' });
    if (answer.status === 404 || answer.status === 204) return emptyDocument();
    if (answer.status !== 200) throw this.#refused(answer, 'reading the state');
    return parseStateDocument(answer.text, this.location);
  }

  /** Sent once: a lock taken whose answer was lost would look like someone else's on a second try. */
  async lock(holder: LockHolder, what: string): Promise<LockHolder | undefined> {
    const info = lockInfo(holder, what);
    this.#infos.set(holder.id, info);
    let answer: TransportAnswer;
    try {
      answer = await this.#send({ method: this.#requests.lockMethod, url: this.#requests.lockAddress, body: info, retry: false, doing: 'locking the state' });
    } catch (err) {
      // Perhaps taken all the same: let go of it, if it is ours (the server checks the ID).
      await this.unlock(holder.id).catch(() => undefined);
      throw err;
    }
    if (answer.status === 409 || answer.status === 423) return holderFrom(answer.text, this.redactor);
    if (ok(answer)) return undefined;
    // A gateway's 502 or 504 may come after the server took the lock: let go of it, if it is ours.
    await this.unlock(holder.id).catch(() => undefined);
    throw this.#refused(answer, 'locking the state');
  }

  async unlock(id: string): Promise<boolean> {
    const body = this.#infos.get(id) ?? JSON.stringify({ ID: id });
    const answer = await this.#send({ method: this.#requests.unlockMethod, url: this.#requests.unlockAddress, body, retry: true, doing: 'unlocking the state' });
    // 409 or 423: not locked with that ID (broken, or never taken).
    if (answer.status === 409 || answer.status === 423) return false;
    if (!ok(answer)) throw this.#refused(answer, 'unlocking the state');
    this.#infos.delete(id);
    return true;
  }

  async post(doc: StateDocument, id: string): Promise<void> {
    const url = new URL(this.#address);
    url.searchParams.set('ID', id);
    const written = await this.#send({ method: 'POST', url, body: serializeStateDocument(doc, VERSION), retry: true, doing: 'writing the state' });
    if (written.status === 409 || written.status === 423) {
      throw new OrgformError('STATE_LOCK_LOST', `the server refused a write with HTTP ${written.status}: the lock was broken, or someone else holds it now`);
    }
    if (!ok(written)) throw this.#refused(written, 'writing the state');
  }

  async close(): Promise<void> {
    const closing = this.#transport;
    this.#transport = undefined;
    await closing?.close();
  }

  get #opened(): Transport {
    const t = this.#settings.timeoutMs;
    const { proxy, extraCaCerts } = this.#network;
    this.#transport ??= new Transport({
      retry: statePolicy(t),
      timeouts: { connectMs: t, headersMs: t, bodyMs: t, totalMs: statePolicy(t).budgetMs },
      maxResponseBytes: MAX_STATE_BYTES,
      redactor: this.redactor,
      peer: { name: 'the server', address: 'the address', timeoutSetting: 'ORGFORM_STATE_TIMEOUT_MS' },
      proxy,
      extraCaCerts,
      random: () => 1,
    });
    return this.#transport;
  }

  /** One request, with the credentials; no usable answer is the state unavailable, saying what failed. */
  async #send(request: StateRequest): Promise<TransportAnswer> {
    const headers: Record<string, string> = { accept: 'application/json', 'accept-encoding': ACCEPT_ENCODING, 'user-agent': 'orgform' };
    if (this.#authorization !== undefined) headers.authorization = this.#authorization;
    if (request.body !== undefined) headers['content-type'] = 'application/json';
    const { method, url, body, retry, doing } = request;
    try {
      return await this.#opened.send({ method, url, headers, body, operation: doing, what: doing, retry });
    } catch (err) {
      if (!(err instanceof TransportError)) throw err;
      throw new HttpStateError({ location: this.location, why: `${doing} failed: ${err.detail}${err.attempts > 1 ? ` (${err.attempts} attempts)` : ''}`, redactor: this.redactor });
    }
  }

  /** What the server said, for a message: its words, redacted and cut. */
  #said(answer: TransportAnswer): string {
    const text = this.redactor.short(answer.text, 200);
    return text === '' ? '' : `: ${text}`;
  }

  /** A refusal, in words: what to check. */
  #refused(answer: TransportAnswer, doing: string): OrgformError {
    const why = (text: string) => new HttpStateError({ location: this.location, why: text, redactor: this.redactor });
    if (answer.status === 401 || answer.status === 403) {
      const may = doing === 'reading the state' ? 'read' : 'write';
      return why(`the server refused ${doing} (HTTP ${answer.status}${this.#said(answer)}); set ORGFORM_STATE_USERNAME and ORGFORM_STATE_PASSWORD to a user allowed to ${may} it (in GitLab CI: gitlab-ci-token and $CI_JOB_TOKEN)`);
    }
    if (answer.status === 404) return why(`the server has no such state endpoint (HTTP 404 on ${doing}${this.#said(answer)}); check the address`);
    if (answer.status === 413) return why(`the server refused the document as too large (HTTP 413${this.#said(answer)}); raise its limit on state size`);
    return why(`the server answered ${doing} with HTTP ${answer.status}${this.#said(answer)}`);
  }
}

function ok(answer: TransportAnswer): boolean {
  return answer.status >= 200 && answer.status < 300;
}
