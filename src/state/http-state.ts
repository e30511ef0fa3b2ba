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
 */
import { randomBytes } from 'node:crypto';
import { checkCredential } from '../check-credential.js';
import { OrgformError, UsageError } from '../errors.js';
import { BatchedJournal, LockLoss, RemoteHold } from './batched-journal.js';
import { entriesOfData } from './journal-entry.js';
import { KeyIndex } from './journal-index.js';
import { forceUnlockHint, journalNotWrittenError, unwrittenAfter } from './state-errors.js';
import type { HttpStateSettings, StateSettings } from './state-settings.js';
import type { StateSpec } from './parse-state-spec.js';
import { lockLostError, lockNotReleasedError, stateLockedError, stateUnavailableError, StateUnavailableError, type LockHolder, type LockRequest } from './state-backend.js';
import type { LegacyHeldState as HeldState, LegacyStateBackend as StateBackend } from './legacy-backend.js';
import type { NetworkSettings } from '../api/proxy-settings.js';
import { VERSION } from '../version.js';
import { createStateHttp, type StateAnswer } from './state-http.js';
import { emptyDocument, mergeEntries, parseStateDocument, serializeStateDocument, type StateDocument } from './terraform-document.js';

type HttpSpec = Extract<StateSpec, { kind: 'http' }>;

export interface HttpStateOptions {
  settings: StateSettings;
  describe(command: string): LockRequest;
  network: NetworkSettings;
  signal?: AbortSignal;
  sleep?(ms: number): Promise<void>;
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

export function openHttpState(spec: HttpSpec, options: HttpStateOptions): StateBackend {
  const { username, password } = options.settings.http;
  if (username !== undefined) checkCredential(username, 'ORGFORM_STATE_USERNAME');
  if (password !== undefined) checkCredential(password, 'ORGFORM_STATE_PASSWORD');
  if (password !== undefined && username === undefined) {
    throw new UsageError('ORGFORM_STATE_PASSWORD is set without ORGFORM_STATE_USERNAME: set both (in GitLab CI: gitlab-ci-token and $CI_JOB_TOKEN).');
  }
  const location = spec.location;
  const { lockAddress, unlockAddress, lockMethod, unlockMethod } = lockSettings(spec.address, options.settings.http);
  // The backend is reached as the service is: through HTTP(S)_PROXY unless NO_PROXY exempts it.
  const { proxy, extraCaCerts } = options.network;
  const http = createStateHttp({
    location,
    ...(proxy === undefined ? {} : { proxy }),
    ...(extraCaCerts === undefined ? {} : { extraCaCerts }),
    ...(username === undefined ? {} : { username }),
    ...(password === undefined ? {} : { password }),
    timeoutMs: options.settings.timeoutMs,
    ...(options.sleep === undefined ? {} : { sleep: options.sleep }),
  });

  /** What the server said, shortened and without the credentials. */
  const said = (answer: StateAnswer) => {
    const text = http.redact(answer.text.replace(/\s+/g, ' ').trim());
    return text === '' ? '' : `: ${text.length > 200 ? `${text.slice(0, 200)}…` : text}`;
  };
  const refused = (answer: StateAnswer, doing: string): OrgformError => {
    if (answer.status === 401 || answer.status === 403) {
      return stateUnavailableError(
        location,
        `the server refused ${doing} (HTTP ${answer.status}${said(answer)}); set ORGFORM_STATE_USERNAME and ORGFORM_STATE_PASSWORD to a user allowed to ${doing === 'reading the state' ? 'read' : 'write'} it (in GitLab CI: gitlab-ci-token and $CI_JOB_TOKEN)`,
      );
    }
    if (answer.status === 404) return stateUnavailableError(location, `the server has no such state endpoint (HTTP 404 on ${doing}${said(answer)}); check the address`);
    if (answer.status === 413) return stateUnavailableError(location, `the server refused the document as too large (HTTP 413${said(answer)}); raise its limit on state size`);
    return stateUnavailableError(location, `the server answered ${doing} with HTTP ${answer.status}${said(answer)}`);
  };

  async function readDocument(): Promise<StateDocument> {
    const answer = await http.send({ method: 'GET', url: spec.address, retry: true, doing: 'reading the state' });
    if (answer.status === 404 || answer.status === 204) return emptyDocument();
    if (answer.status !== 200) throw refused(answer, 'reading the state');
    return parseStateDocument(answer.text, location);
  }

  const withId = (id: string) => {
    const url = new URL(spec.address);
    url.searchParams.set('ID', id);
    return url;
  };

  async function unlock(body: string): Promise<StateAnswer> {
    return http.send({ method: unlockMethod, url: unlockAddress, body, retry: true, doing: 'unlocking the state' });
  }

  return {
    kind: 'http',
    location,

    async read() {
      try {
        return (await readDocument()).data;
      } finally {
        await http.close();
      }
    },

    async lock(command: string): Promise<HeldState> {
      const request = options.describe(command);
      const holder: LockHolder = { id: randomBytes(6).toString('hex'), ...request };
      const lockInfo = JSON.stringify({
        ID: holder.id,
        Operation: command,
        Info: `pid ${request.pid} on ${request.host}${request.where ? `, ${request.where}` : ''}`,
        Who: request.who,
        Version: VERSION,
        Created: request.startedAt,
        Path: '',
      });
      let answer: StateAnswer;
      try {
        // Sent once: a lock taken whose answer was lost would look like someone else's on a second try.
        answer = await http.send({ method: lockMethod, url: lockAddress, body: lockInfo, retry: false, doing: 'locking the state' });
      } catch (err) {
        // Perhaps taken all the same: let go of it, if it is ours (the server checks the ID).
        await unlock(lockInfo).catch(() => undefined);
        await http.close();
        throw err;
      }
      if (answer.status === 409 || answer.status === 423) {
        await http.close();
        const other = holderFrom(answer.text);
        const id = other.id === NOT_GIVEN ? 'ID (the server does not say it)' : other.id;
        throw stateLockedError(location, other, forceUnlockHint(id));
      }
      if (answer.status < 200 || answer.status >= 300) {
        // A gateway's 502 or 504 may come after the server took the lock: let go of it, if it is ours.
        await unlock(lockInfo).catch(() => undefined);
        await http.close();
        throw refused(answer, 'locking the state');
      }

      let doc: StateDocument;
      try {
        doc = await readDocument();
      } catch (err) {
        await unlock(lockInfo).catch(() => undefined);
        await http.close();
        throw err;
      }
      const loss = new LockLoss();
      const journal = documentJournal(doc, holder.id, options.settings, loss, location, async (body) => {
        const written = await http.send({ method: 'POST', url: withId(holder.id), body, retry: true, doing: 'writing the state' });
        if (written.status === 409 || written.status === 423) {
          throw new OrgformError('STATE_LOCK_LOST', `the server refused a write with HTTP ${written.status}: the lock was broken, or someone else holds it now`);
        }
        if (written.status < 200 || written.status >= 300) throw refused(written, 'writing the state');
      });
      const hold = new RemoteHold({
        lock: holder,
        journal,
        loss,
        ...(options.signal === undefined ? {} : { signal: options.signal }),
        async unlock() {
          let answer: StateAnswer;
          try {
            answer = await unlock(lockInfo);
          } catch (err) {
            throw lockNotReleasedError(location, holder.id, err instanceof StateUnavailableError ? err.why : String(err));
          }
          // 409 or 423: the lock is not ours any more (broken, taken): nothing of ours is left behind.
          if (answer.status === 409 || answer.status === 423 || (answer.status >= 200 && answer.status < 300)) return;
          throw lockNotReleasedError(location, holder.id, `the server answered unlocking the state with HTTP ${answer.status}${said(answer)}`);
        },
        close: () => http.close(),
      });
      return { lock: holder, data: doc.data, journal, onLost: (listener) => hold.onLost(listener), release: () => hold.release() };
    },

    async forceUnlock(id: string): Promise<LockHolder> {
      try {
        const answer = await unlock(JSON.stringify({ ID: id }));
        if (answer.status === 409 || answer.status === 423) {
          throw new OrgformError('STATE_LOCKED', `The state at ${location} is not locked with ID ${id} (HTTP ${answer.status}${said(answer)}); nothing was changed.`);
        }
        if (answer.status < 200 || answer.status >= 300) throw refused(answer, 'unlocking the state');
        return { id };
      } finally {
        await http.close();
      }
    },
  };
}

const NOT_GIVEN = '(not given)';

/** The journal of a held document: each batch merged into it, and the whole document posted with its serial one higher. */
function documentJournal(doc: StateDocument, run: string, settings: StateSettings, loss: LockLoss, location: string, post: (body: string) => Promise<void>): BatchedJournal {
  const index = new KeyIndex();
  for (const { service, key } of entriesOfData(doc.data)) index.add(service, key);
  const why = (err: unknown) => (err instanceof StateUnavailableError ? err.why : err instanceof Error ? err.message : String(err));
  return new BatchedJournal({
    index,
    run,
    policy: settings.batch,
    async write(batch) {
      mergeEntries(doc.data, batch);
      doc.serial += 1;
      await post(serializeStateDocument(doc, VERSION));
    },
    rejection: (err) => journalNotWrittenError(location, why(err)),
    onFailure(err, unwritten) {
      const what = err instanceof OrgformError && err.code === 'STATE_LOCK_LOST' ? why(err) : `a write failed (${why(err)})`;
      loss.report(lockLostError(location, unwrittenAfter(what, unwritten)));
    },
  });
}

/** The holder as a 409/423 body gives it: GitLab's ID, Who and Created; Terraform's whole lock info; or nothing (Gitea). */
function holderFrom(text: string): LockHolder {
  let info: Record<string, unknown> = {};
  try {
    const value = JSON.parse(text) as unknown;
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) info = value as Record<string, unknown>;
  } catch {
    // Not JSON: the server said nothing usable about the holder.
  }
  const text_ = (key: string) => (typeof info[key] === 'string' && info[key] !== '' ? (info[key] as string) : undefined);
  const holder: LockHolder = { id: text_('ID') ?? NOT_GIVEN };
  const who = text_('Who');
  const created = text_('Created');
  if (who !== undefined) holder.who = who;
  else if (holder.id === NOT_GIVEN) holder.who = 'someone (the server does not say who)';
  if (created !== undefined) holder.startedAt = created;
  return holder;
}
