/**
 * The --max-rps / ORGFORM_MAX_RPS value: a positive decimal number (40, 2.5). Anything else (0, a
 * negative number, `1e3`, `Infinity`, words) is undefined, for the caller to refuse in its own terms.
 * Dependency-free: the command-line grammar imports it before any command is chosen.
 */
export function parseMaxRps(text: string): number | undefined {
  const t = text.trim();
  if (!/^\d+(\.\d+)?$/.test(t)) return undefined;
  const n = Number(t);
  return Number.isFinite(n) && n > 0 ? n : undefined;
}

export const MAX_RPS_FORM = 'a number of requests per second above 0, such as 40 or 2.5';
