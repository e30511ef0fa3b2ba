/**
 * The state in a Terraform HTTP backend: GitLab-managed Terraform state
 * (`…/api/v4/projects/ID/terraform/state/NAME`) or Gitea's state registry
 * (`…/api/packages/OWNER/terraform/state/NAME`), or any server of that protocol.
 *
 *   read     GET address: 200 the document; 204 (exists, empty) and 404 (none yet) an empty journal
 *   lock     POST address/lock (ORGFORM_STATE_LOCK_ADDRESS, _LOCK_METHOD) with Terraform's lock
 *            info; 409 or 423 when held, with the holder's lock info when the server gives it
 *   write    POST address?ID=<lock id>, the whole document, its serial one higher each time
 *   unlock   DELETE address/lock (ORGFORM_STATE_UNLOCK_ADDRESS, _UNLOCK_METHOD) with the lock info
 *
 * Basic auth from ORGFORM_STATE_USERNAME and ORGFORM_STATE_PASSWORD (in GitLab CI:
 * gitlab-ci-token and $CI_JOB_TOKEN). Each write uploads the whole document and the server keeps it
 * as a version, so entries are batched (batched-journal.ts). A write refused with 409 or 423 means
 * the lock is someone else's now: the apply is told, and halts.
 *
 * Every request goes through the transport, as the service's do (redirects never followed, the
 * proxies, a size cap, one set of words for what fails); what is the protocol's own is here.
 */
import { randomBytes } from 'node:crypto';
import { checkCredential } from '../check-credential.js';
import { OrgformError, UsageError } from '../errors.js';
import { Redactor } from '../redact.js';
import { proxySecrets, type NetworkSettings } from '../transport/proxy-settings.js';
import { ACCEPT_ENCODING } from '../transport/read-answer.js';
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from '../transport/retry-policy.js';
import { TransportError } from '../transport/transport-error.js';
import { Transport, type TransportAnswer } from '../transport/transport.js';
import { VERSION } from '../version.js';
import { BatchedJournal, LockLoss, RemoteHold } from './batched-journal.js';
import { entriesOfData, type JournalData } from './journal-entry.js';
import { KeyIndex } from './journal-index.js';
import type { LegacyHeldState as HeldState, LegacyStateBackend as StateBackend } from './legacy-backend.js';
import type { StateSpec } from './parse-state-spec.js';
import { lockLostError, lockNotReleasedError, stateLockedError, StateUnavailableError, type LockHolder, type LockRequest } from './state-backend.js';
import { forceUnlockHint, journalNotWrittenError, unwrittenAfter } from './state-errors.js';
import type { HttpStateSettings, StateSettings } from './state-settings.js';
import { emptyDocument, mergeEntries, parseStateDocument, serializeStateDocument, type StateDocument } from './terraform-document.js';

type HttpSpec = Extract<StateSpec, { kind: 'http' }>;

export interface HttpStateOptions {
  settings: StateSettings;
  describe(command: string): LockRequest;
  network: NetworkSettings;
  signal?: AbortSignal;
}

/** A whole journal of a million entries is about 150 MB; more than this is not a state orgform wrote. */
const MAX_STATE_BYTES = 512 * 2 ** 20;
/** Attempts of a request that may be sent again (reads, whole-document writes, unlocks). */
const ATTEMPTS = 3;

/**
 * Sent again after a failed connection, a 408, 429 or 5xx: 250 ms, then 500 ms (doubling, at most
 * 10 s), without jitter (one client per state). No rate gate: a 429 is one more failure to wait out.
 */
function statePolicy(timeoutMs: number): RetryPolicy {
  return {
    ...DEFAULT_RETRY_POLICY,
    maxAttempts: ATTEMPTS,
    baseDelayMs: 250,
    maxDelayMs: 10_000,
    budgetMs: stateBudgetMs(timeoutMs),
    retryableStatuses: [408, 429, 500, 502, 503, 504],
    backpressureStatuses: [],
  };
}

/** ORGFORM_STATE_TIMEOUT_MS bounds each attempt; a request has that for each of its attempts, and its waits between them. */
function stateBudgetMs(timeoutMs: number): number {
  return ATTEMPTS * timeoutMs + 10_000;
}

/** The lock and unlock requests: GitLab's and Gitea's by default, Terraform's LOCK/UNLOCK when set. */
export function lockSettings(address: URL, http: HttpStateSettings) {
  const url = (name: string, raw: string | undefined, fallback: URL) => {
    if (raw === undefined || raw === '') return fallback;
    let parsed: URL;
    try {
      parsed = new URL(raw);
    } catch {
      throw new UsageError(`${name} is not a URL.`);
    }
    // The credentials go to it: only to where the state itself is.
    if (parsed.origin !== address.origin) throw new UsageError(`${name} must be on the state's own server (${address.origin}), not ${parsed.origin}.`);
    return parsed;
  };
  const method = (name: string, raw: string | undefined, fallback: string) => {
    if (raw === undefined || raw === '') return fallback;
    if (!/^[A-Za-z]{1,20}$/.test(raw)) throw new UsageError(`${name} must be an HTTP method such as POST, DELETE, LOCK or UNLOCK (got "${raw}").`);
    return raw.toUpperCase();
  };
  const lockAddress = url('ORGFORM_STATE_LOCK_ADDRESS', http.lockAddress, new URL(`${address.origin}${address.pathname.replace(/\/+$/, '')}/lock${address.search}`));
  return {
    lockAddress,
    unlockAddress: url('ORGFORM_STATE_UNLOCK_ADDRESS', http.unlockAddress, lockAddress),
    lockMethod: method('ORGFORM_STATE_LOCK_METHOD', http.lockMethod, 'POST'),
    unlockMethod: method('ORGFORM_STATE_UNLOCK_METHOD', http.unlockMethod, 'DELETE'),
  };
}

/** One request to the backend: what it is, in words (`reading the state`), and whether it may be sent again. */
export interface StateRequest {
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

const NOT_GIVEN = '(not given)';

/** The holder as a 409/423 body gives it: GitLab's ID, Who and Created; Terraform's whole lock info; or nothing (Gitea). */
function holderFrom(text: string, redactor: Redactor): LockHolder {
  let info: Record<string, unknown> = {};
  try {
    const value = JSON.parse(text) as unknown;
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) info = value as Record<string, unknown>;
  } catch {
    // Not JSON: the server said nothing usable about the holder.
  }
  // The server's words: shown in the error, so redacted as it is made.
  const field = (key: string) => (typeof info[key] === 'string' && info[key] !== '' ? redactor.short(info[key] as string, 200) : undefined);
  const holder: LockHolder = { id: field('ID') ?? NOT_GIVEN };
  const who = field('Who');
  const created = field('Created');
  if (who !== undefined) holder.who = who;
  else if (holder.id === NOT_GIVEN) holder.who = 'someone (the server does not say who)';
  if (created !== undefined) holder.startedAt = created;
  return holder;
}

export class TerraformHttpState implements StateBackend {
  readonly kind = 'http';
  readonly location: string;
  protected readonly spec: HttpSpec;
  protected readonly options: HttpStateOptions;
  protected readonly redactor: Redactor;
  protected readonly requests: ReturnType<typeof lockSettings>;
  readonly #authorization: string | undefined;
  /** Opened at the first request, and again after a close (state migrate reads its source, then locks it). */
  #transport: Transport | undefined;

  constructor(spec: HttpSpec, options: HttpStateOptions) {
    const { username, password } = options.settings.http;
    if (username !== undefined) checkCredential(username, 'ORGFORM_STATE_USERNAME');
    if (password !== undefined) checkCredential(password, 'ORGFORM_STATE_PASSWORD');
    if (password !== undefined && username === undefined) {
      throw new UsageError('ORGFORM_STATE_PASSWORD is set without ORGFORM_STATE_USERNAME: set both (in GitLab CI: gitlab-ci-token and $CI_JOB_TOKEN).');
    }
    this.spec = spec;
    this.options = options;
    this.location = spec.location;
    this.requests = lockSettings(spec.address, options.settings.http);
    // The backend is reached as the service is: through HTTP(S)_PROXY unless NO_PROXY exempts it.
    const { proxy, extraCaCerts } = options.network;
    this.redactor = new Redactor().add(...proxySecrets(proxy));
    if (username !== undefined) {
      const basic = Buffer.from(`${username}:${password ?? ''}`).toString('base64');
      this.#authorization = `Basic ${basic}`;
      this.redactor.add(basic, password ?? '');
    }
  }

  get #opened(): Transport {
    const t = this.options.settings.timeoutMs;
    const { proxy, extraCaCerts } = this.options.network;
    this.#transport ??= new Transport({
      retry: statePolicy(t),
      timeouts: { connectMs: t, headersMs: t, bodyMs: t, totalMs: stateBudgetMs(t) },
      maxResponseBytes: MAX_STATE_BYTES,
      redactor: this.redactor,
      peer: { name: 'the server', address: 'the address', timeoutSetting: 'ORGFORM_STATE_TIMEOUT_MS' },
      proxy,
      extraCaCerts,
      random: () => 1,
    });
    return this.#transport;
  }

  async read(): Promise<JournalData> {
    try {
      return (await this.readDocument()).data;
    } finally {
      await this.close();
    }
  }

  async lock(command: string): Promise<HeldState> {
    const request = this.options.describe(command);
    const holder: LockHolder = { id: randomBytes(6).toString('hex'), ...request };
    const lockInfo = this.lockInfo(holder, command, request);
    await this.take(lockInfo);
    let doc: StateDocument;
    try {
      doc = await this.readDocument();
    } catch (err) {
      await this.letGo(lockInfo);
      throw err;
    }
    return this.hold(holder, lockInfo, doc);
  }

  async forceUnlock(id: string): Promise<LockHolder> {
    try {
      const answer = await this.unlock(JSON.stringify({ ID: id }));
      if (answer.status === 409 || answer.status === 423) {
        throw new OrgformError('STATE_LOCKED', `The state at ${this.location} is not locked with ID ${id} (HTTP ${answer.status}${this.said(answer)}); nothing was changed.`);
      }
      if (!ok(answer)) throw this.refused(answer, 'unlocking the state');
      return { id };
    } finally {
      await this.close();
    }
  }

  /** Terraform's lock info, which the lock request carries and the unlock names. */
  protected lockInfo(holder: LockHolder, command: string, request: LockRequest): string {
    const where = request.where ? `, ${request.where}` : '';
    return JSON.stringify({ ID: holder.id, Operation: command, Info: `pid ${request.pid} on ${request.host}${where}`, Who: request.who, Version: VERSION, Created: request.startedAt, Path: '' });
  }

  /** Takes the lock, or fails naming who holds it. Sent once: a lock taken whose answer was lost would look like someone else's on a second try. */
  protected async take(lockInfo: string): Promise<void> {
    let answer: TransportAnswer;
    try {
      answer = await this.send({ method: this.requests.lockMethod, url: this.requests.lockAddress, body: lockInfo, retry: false, doing: 'locking the state' });
    } catch (err) {
      // Perhaps taken all the same: let go of it, if it is ours (the server checks the ID).
      await this.letGo(lockInfo);
      throw err;
    }
    if (answer.status === 409 || answer.status === 423) {
      await this.close();
      const other = holderFrom(answer.text, this.redactor);
      const id = other.id === NOT_GIVEN ? 'ID (the server does not say it)' : other.id;
      throw stateLockedError(this.location, other, forceUnlockHint(id));
    }
    if (!ok(answer)) {
      // A gateway's 502 or 504 may come after the server took the lock: let go of it, if it is ours.
      await this.letGo(lockInfo);
      throw this.refused(answer, 'locking the state');
    }
  }

  /** The state held: its journal writes the whole document under the lock, the lock let go at release. */
  protected hold(holder: LockHolder, lockInfo: string, doc: StateDocument): HeldState {
    const loss = new LockLoss();
    const index = new KeyIndex();
    for (const { service, key } of entriesOfData(doc.data)) index.add(service, key);
    const journal = new BatchedJournal({
      index,
      run: holder.id,
      policy: this.options.settings.batch,
      write: (batch) => {
        mergeEntries(doc.data, batch);
        return this.writeDocument(doc, holder.id);
      },
      rejection: (err) => journalNotWrittenError(this.location, whyOf(err)),
      onFailure: (err, unwritten) => loss.report(this.lostBy(err, unwritten)),
    });
    const hold = new RemoteHold({
      lock: holder,
      journal,
      loss,
      ...(this.options.signal === undefined ? {} : { signal: this.options.signal }),
      unlock: () => this.release(holder, lockInfo),
      close: () => this.close(),
    });
    return { lock: holder, data: doc.data, journal, onLost: (listener) => hold.onLost(listener), release: () => hold.release() };
  }

  protected async readDocument(): Promise<StateDocument> {
    const answer = await this.send({ method: 'GET', url: this.spec.address, retry: true, doing: 'reading the state' });
    if (answer.status === 404 || answer.status === 204) return emptyDocument();
    if (answer.status !== 200) throw this.refused(answer, 'reading the state');
    return parseStateDocument(answer.text, this.location);
  }

  /** The whole document, its serial one higher, under the lock `id` (`?ID=`). */
  protected async writeDocument(doc: StateDocument, id: string): Promise<void> {
    doc.serial += 1;
    const url = new URL(this.spec.address);
    url.searchParams.set('ID', id);
    const written = await this.send({ method: 'POST', url, body: serializeStateDocument(doc, VERSION), retry: true, doing: 'writing the state' });
    if (written.status === 409 || written.status === 423) {
      throw new OrgformError('STATE_LOCK_LOST', `the server refused a write with HTTP ${written.status}: the lock was broken, or someone else holds it now`);
    }
    if (!ok(written)) throw this.refused(written, 'writing the state');
  }

  /** Why the journal can no longer be written, as the apply is told. */
  protected lostBy(err: unknown, unwritten: number): OrgformError {
    const what = err instanceof OrgformError && err.code === 'STATE_LOCK_LOST' ? whyOf(err) : `a write failed (${whyOf(err)})`;
    return lockLostError(this.location, unwrittenAfter(what, unwritten));
  }

  /** Lets go of the lock at the end: throws only when it is still ours and left behind. */
  protected async release(holder: LockHolder, lockInfo: string): Promise<void> {
    let answer: TransportAnswer;
    try {
      answer = await this.unlock(lockInfo);
    } catch (err) {
      throw lockNotReleasedError(this.location, holder.id, err instanceof StateUnavailableError ? err.why : String(err));
    }
    // 409 or 423: the lock is not ours any more (broken, taken): nothing of ours is left behind.
    if (answer.status === 409 || answer.status === 423 || ok(answer)) return;
    throw lockNotReleasedError(this.location, holder.id, `the server answered unlocking the state with HTTP ${answer.status}${this.said(answer)}`);
  }

  protected unlock(body: string): Promise<TransportAnswer> {
    return this.send({ method: this.requests.unlockMethod, url: this.requests.unlockAddress, body, retry: true, doing: 'unlocking the state' });
  }

  /** After a failure with the lock perhaps ours: let go of it (the server checks the ID), and close. */
  protected async letGo(lockInfo: string): Promise<void> {
    await this.unlock(lockInfo).catch(() => undefined);
    await this.close();
  }

  /** One request, with the credentials; no usable answer is the state unavailable, saying what failed. */
  protected async send(request: StateRequest): Promise<TransportAnswer> {
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
  protected said(answer: TransportAnswer): string {
    const text = this.redactor.short(answer.text, 200);
    return text === '' ? '' : `: ${text}`;
  }

  /** A refusal, in words: what to check. */
  protected refused(answer: TransportAnswer, doing: string): OrgformError {
    const why = (text: string) => new HttpStateError({ location: this.location, why: text, redactor: this.redactor });
    if (answer.status === 401 || answer.status === 403) {
      const may = doing === 'reading the state' ? 'read' : 'write';
      return why(`the server refused ${doing} (HTTP ${answer.status}${this.said(answer)}); set ORGFORM_STATE_USERNAME and ORGFORM_STATE_PASSWORD to a user allowed to ${may} it (in GitLab CI: gitlab-ci-token and $CI_JOB_TOKEN)`);
    }
    if (answer.status === 404) return why(`the server has no such state endpoint (HTTP 404 on ${doing}${this.said(answer)}); check the address`);
    if (answer.status === 413) return why(`the server refused the document as too large (HTTP 413${this.said(answer)}); raise its limit on state size`);
    return why(`the server answered ${doing} with HTTP ${answer.status}${this.said(answer)}`);
  }

  protected async close(): Promise<void> {
    const closing = this.#transport;
    this.#transport = undefined;
    await closing?.close();
  }
}

/** What went wrong, alone: a state error's own words, or the error's message. */
function whyOf(err: unknown): string {
  return err instanceof StateUnavailableError ? err.why : err instanceof Error ? err.message : String(err);
}

function ok(answer: TransportAnswer): boolean {
  return answer.status >= 200 && answer.status < 300;
}
