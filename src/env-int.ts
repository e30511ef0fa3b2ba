/**
 * The whole numbers orgform reads from the environment, each checked against its range where it is
 * read: a setting out of range is a usage error before anything is done.
 */
import { UsageError } from './errors.js';
import type { CliIO } from './cli-io.js';

/**
 * Every whole-number environment variable orgform reads, with its range (docs/cli.md's table of
 * settings says the same; a test holds them together). The ranges keep every wait they set a
 * wait that ends, and every timer below 2^31 ms, which Node would fire at once instead.
 */
export const ENV_RANGES = {
  ORGFORM_REQUEST_TIMEOUT_MS: { min: 100, max: 86_400_000 },
  ORGFORM_MAX_ATTEMPTS: { min: 1, max: 100 },
  ORGFORM_RETRY_BASE_MS: { min: 1, max: 10_000 },
  ORGFORM_NO_PROGRESS_TIMEOUT_MS: { min: 1, max: 86_400_000 },
  ORGFORM_PROGRESS_INTERVAL_MS: { min: 10, max: 3_600_000 },
  ORGFORM_READ_MAX_AGE_MS: { min: 0, max: 60_000 },
  ORGFORM_TOKEN_COMMAND_TIMEOUT_MS: { min: 100, max: 600_000 },
  ORGFORM_STATE_BATCH: { min: 1, max: 10_000 },
  ORGFORM_STATE_FLUSH_MS: { min: 10, max: 60_000 },
  ORGFORM_STATE_TIMEOUT_MS: { min: 100, max: 600_000 },
} as const;

export type NumericEnv = keyof typeof ENV_RANGES;

/** A whole number from the environment, or undefined when unset; anything else, or out of its range, is a usage error. */
export function envInt(env: CliIO['env'], name: NumericEnv): number | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  const { min, max } = ENV_RANGES[name];
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(n) || n < min || n > max) {
    throw new UsageError(`${name} must be a whole number from ${min} to ${max} (got "${raw}").`);
  }
  return n;
}
