/**
 * The Terraform HTTP protocol's lock, as orgform takes it around each write of the document: where
 * and how the lock and unlock requests go (GitLab's and Gitea's `POST`/`DELETE ADDRESS/lock`, or
 * what ORGFORM_STATE_LOCK_* say), the lock info a request carries, and who holds the lock as a
 * 409 or 423 answer says it. Pure.
 */
import { UsageError } from '../../errors.js';
import type { Redactor } from '../../redact.js';
import { VERSION } from '../../version.js';
import type { LockHolder } from '../state-backend.js';
import type { HttpStateSettings } from '../state-settings.js';

export interface LockRequests {
  lockAddress: URL;
  unlockAddress: URL;
  lockMethod: string;
  unlockMethod: string;
}

/** An address of a lock request: on the state's own server only, since the credentials go to it. */
function lockUrl(name: string, raw: string | undefined, fallback: URL, state: URL): URL {
  if (raw === undefined || raw === '') return fallback;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new UsageError(`${name} is not a URL.`);
  }
  if (parsed.origin !== state.origin) throw new UsageError(`${name} must be on the state's own server (${state.origin}), not ${parsed.origin}.`);
  return parsed;
}

function lockMethod(name: string, raw: string | undefined, fallback: string): string {
  if (raw === undefined || raw === '') return fallback;
  if (!/^[A-Za-z]{1,20}$/.test(raw)) throw new UsageError(`${name} must be an HTTP method such as POST, DELETE, LOCK or UNLOCK (got "${raw}").`);
  return raw.toUpperCase();
}

/** The lock and unlock requests: GitLab's and Gitea's by default, Terraform's LOCK/UNLOCK when set. */
export function lockSettings(address: URL, http: HttpStateSettings): LockRequests {
  const lockAddress = lockUrl('ORGFORM_STATE_LOCK_ADDRESS', http.lockAddress, new URL(`${address.origin}${address.pathname.replace(/\/+$/, '')}/lock${address.search}`), address);
  return {
    lockAddress,
    unlockAddress: lockUrl('ORGFORM_STATE_UNLOCK_ADDRESS', http.unlockAddress, lockAddress, address),
    lockMethod: lockMethod('ORGFORM_STATE_LOCK_METHOD', http.lockMethod, 'POST'),
    unlockMethod: lockMethod('ORGFORM_STATE_UNLOCK_METHOD', http.unlockMethod, 'DELETE'),
  };
}

/** Terraform's lock info for `holder`, doing `what` (`writing a batch of 500`): what the server shows of the lock. */
export function lockInfo(holder: LockHolder, what: string): string {
  const where = holder.where ? `, ${holder.where}` : '';
  const by = holder.pid === undefined ? '' : `: pid ${holder.pid} on ${holder.host ?? 'an unknown host'}${where}`;
  return JSON.stringify({ ID: holder.id, Operation: holder.command ?? what, Info: `${what}${by}`, Who: holder.who ?? '', Version: VERSION, Created: holder.startedAt ?? '', Path: '' });
}

/** What a holder the server does not name is called. */
export const NOT_GIVEN = '(not given)';

/** The holder as a 409/423 body gives it: GitLab's ID, Who and Created; Terraform's whole lock info; or nothing (Gitea). */
export function holderFrom(text: string, redactor: Redactor): LockHolder {
  let info: Record<string, unknown> = {};
  try {
    const value = JSON.parse(text) as unknown;
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) info = value as Record<string, unknown>;
  } catch {
    // Not JSON: the server said nothing usable about the holder.
  }
  // The server's words: shown in an error, so redacted as they are read.
  const field = (key: string) => (typeof info[key] === 'string' && info[key] !== '' ? redactor.short(info[key] as string, 200) : undefined);
  const holder: LockHolder = { id: field('ID') ?? NOT_GIVEN };
  const who = field('Who');
  const created = field('Created');
  if (who !== undefined) holder.who = who;
  else if (holder.id === NOT_GIVEN) holder.who = 'someone (the server does not say who)';
  if (created !== undefined) holder.startedAt = created;
  return holder;
}
