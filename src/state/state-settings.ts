/**
 * The state as the commands reach it: where (--state, else ORGFORM_STATE, else the default file)
 * and the numbers a remote state works by, from the environment (their ranges are in ENV_RANGES):
 *
 *   ORGFORM_STATE_BATCH       entries per write to a remote state, 1–10000 (default 500)
 *   ORGFORM_STATE_FLUSH_MS    longest wait before a recorded entry is written, 10–60000 (default 2000)
 *   ORGFORM_STATE_TIMEOUT_MS  connecting, and each request or statement, 100–600000 (default 30000)
 */
import { resolve } from 'node:path';
import { DEFAULT_STATE_SETTINGS, openState, type StateSettings } from './open-state.js';
import type { StateBackend } from './state-backend.js';
import { envInt } from '../api/connect/open-client.js';
import type { CliIO } from '../io.js';

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

/** The state of the commands that take no config files (force-unlock, state …): the default is ./.orgform/state.json. */
export function openCommandState(state: string | undefined, io: CliIO): Promise<StateBackend> {
  return openState({
    ...(state === undefined ? {} : { state }),
    defaultPath: resolve(io.cwd, '.orgform', 'state.json'),
    cwd: io.cwd,
    env: io.env,
    settings: stateSettings(io),
    signal: io.signal,
    now: io.now,
  });
}
