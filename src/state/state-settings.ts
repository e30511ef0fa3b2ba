/**
 * The state's settings, as cli/settings.ts reads them from the environment (their ranges are in
 * cli/settings-table.ts):
 *
 *   ORGFORM_STATE             where the state is, when --state does not say
 *   ORGFORM_STATE_BATCH       entries per write to a remote state, 1–10000 (default 500)
 *   ORGFORM_STATE_FLUSH_MS    longest wait before a recorded entry is written, 10–60000 (default 2000)
 *   ORGFORM_STATE_TIMEOUT_MS  connecting, and each request or statement, 100–600000 (default 30000)
 *   ORGFORM_STATE_USERNAME, _PASSWORD, _LOCK_ADDRESS, _LOCK_METHOD, _UNLOCK_ADDRESS, _UNLOCK_METHOD
 *                             a Terraform HTTP backend's (state/http/http-document-port.ts)
 */
import { DEFAULT_BATCH_POLICY, type BatchPolicy } from './batched-journal.js';
import type { WaitEvent } from '../api/wait-event.js';

/** A Terraform HTTP backend's credentials and lock requests, as set (checked when the state is opened). */
export interface HttpStateSettings {
  username?: string;
  password?: string;
  lockAddress?: string;
  lockMethod?: string;
  unlockAddress?: string;
  unlockMethod?: string;
}

export interface StateSettings {
  /** ORGFORM_STATE: where the state is; --state, where a command takes it, beats it. */
  location?: string;
  batch: BatchPolicy;
  /** Each request or statement to the state, and connecting (ORGFORM_STATE_TIMEOUT_MS). */
  timeoutMs: number;
  http: HttpStateSettings;
  /** PGPASSWORD, and the role pg connects as when the URL names none (PGUSER, else USER): for redaction and hints. */
  postgres: { password?: string; user?: string };
  /** Who a lock names as its holder: the user (USER, USERNAME), and under CI the job's address. */
  owner: { user?: string; jobUrl?: string };
}

export const DEFAULT_STATE_SETTINGS: StateSettings = { batch: DEFAULT_BATCH_POLICY, timeoutMs: 30_000, http: {}, postgres: {}, owner: {} };

/** A step of the state (taking its lock, reading it) as a wait, once it is slow: it gives up at its timeout. */
export function stateWait(what: string, startedAt: number, settings: StateSettings | undefined): Omit<WaitEvent, 'at'> {
  return { reason: 'state', what, until: startedAt + (settings ?? DEFAULT_STATE_SETTINGS).timeoutMs, setting: 'ORGFORM_STATE_TIMEOUT_MS' };
}
