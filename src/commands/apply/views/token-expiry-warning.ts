/**
 * The warning apply gives at the start when a fixed JWT runs out before the apply is likely to
 * end: a pure function of the expiry, the clock, the size of the apply and the rate it can go at.
 */
import { formatDuration } from '../../../text/format-duration.js';

/** The rate assumed when nothing better is known: what the Organisations service allows (40 a second). */
export const ASSUMED_RPS = 40;
/** Requests per change, with reads and retries: measured apply runs send between 1 and 1.5. */
export const REQUESTS_PER_CHANGE = 1.5;

const duration = (ms: number): string => formatDuration(ms, 'rounded');

function instant(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

const ADVICE = 'Set ORGFORM_TOKEN_COMMAND (or --token-command) to a command that prints a fresh token, and orgform runs it whenever the token runs out.';

export function tokenExpiryWarning(input: { expiresAt: number; now: number; changes: number; rps: number }): string | undefined {
  const { expiresAt, now, changes, rps } = input;
  if (expiresAt <= now) return `Warning: the token (a JWT) expired at ${instant(expiresAt)}: the service will refuse it (HTTP 401). ${ADVICE}`;
  const requests = Math.ceil(changes * REQUESTS_PER_CHANGE);
  const estimateMs = (requests / rps) * 1000;
  if (now + estimateMs <= expiresAt) return undefined;
  return (
    `Warning: the token (a JWT) expires at ${instant(expiresAt)}, in ${duration(expiresAt - now)}, but this apply of ${changes.toLocaleString('en-US')} ` +
    `change${changes === 1 ? '' : 's'} may take about ${duration(estimateMs)} (about ${requests.toLocaleString('en-US')} requests at up to ${Math.round(rps * 10) / 10} a second): ` +
    `what is left then will be refused (HTTP 401) and fail. ${ADVICE}`
  );
}
