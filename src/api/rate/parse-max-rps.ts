/**
 * The --max-rps / ORGFORM_MAX_RPS value: a decimal number from 0.001 (a request every 1,000 s, a
 * wait a timer can hold) to 100,000 (40, 2.5). Anything else (0, a negative number, `1e3`,
 * `Infinity`, words) is undefined, for the caller to refuse in its own terms.
 * Dependency-free: the command-line grammar imports it before any command is chosen.
 */
export const MIN_MAX_RPS = 0.001;
export const MAX_MAX_RPS = 100_000;

export function parseMaxRps(text: string): number | undefined {
  const t = text.trim();
  if (!/^\d+(\.\d+)?$/.test(t)) return undefined;
  const n = Number(t);
  return Number.isFinite(n) && n >= MIN_MAX_RPS && n <= MAX_MAX_RPS ? n : undefined;
}

export const MAX_RPS_FORM = `a number of requests per second from ${MIN_MAX_RPS} to ${MAX_MAX_RPS}, such as 40 or 2.5`;
