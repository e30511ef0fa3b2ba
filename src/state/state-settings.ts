/**
 * The state as the commands reach it: where (--state, else ORGFORM_STATE, else the default file)
 * and the numbers a remote state works by, from the environment (their ranges are in ENV_RANGES):
 *
 *   ORGFORM_STATE_BATCH       entries per write to a remote state, 1–10000 (default 500)
 *   ORGFORM_STATE_FLUSH_MS    longest wait before a recorded entry is written, 10–60000 (default 2000)
 *   ORGFORM_STATE_TIMEOUT_MS  connecting, and each request or statement, 100–600000 (default 30000)
 */
import { DEFAULT_BATCH_POLICY, type BatchPolicy } from './batched-journal.js';
import { envInt } from '../env-int.js';
import type { WaitEvent } from '../api/wait-event.js';
import type { CliIO } from '../cli-io.js';

/** The numbers a remote state works by; the CLI reads them from the environment (stateSettings, below). */
export interface StateSettings {
  batch: BatchPolicy;
  /** Each request or statement to the state, and connecting (ORGFORM_STATE_TIMEOUT_MS). */
  timeoutMs: number;
}

export const DEFAULT_STATE_SETTINGS: StateSettings = { batch: DEFAULT_BATCH_POLICY, timeoutMs: 30_000 };

export function stateSettings(io: Pick<CliIO, 'env'>): StateSettings {
  const defaults = DEFAULT_STATE_SETTINGS;
  return {
    batch: {
      maxEntries: envInt(io.env, 'ORGFORM_STATE_BATCH') ?? defaults.batch.maxEntries,
      maxDelayMs: envInt(io.env, 'ORGFORM_STATE_FLUSH_MS') ?? defaults.batch.maxDelayMs,
    },
    timeoutMs: envInt(io.env, 'ORGFORM_STATE_TIMEOUT_MS') ?? defaults.timeoutMs,
  };
}

/** A step of the state (taking its lock, reading it) as a wait, once it is slow: it gives up at its timeout. */
export function stateWait(what: string, startedAt: number, settings: StateSettings | undefined): Omit<WaitEvent, 'at'> {
  return { reason: 'state', what, until: startedAt + (settings ?? DEFAULT_STATE_SETTINGS).timeoutMs, setting: 'ORGFORM_STATE_TIMEOUT_MS' };
}
