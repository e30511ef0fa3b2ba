import { isOrgformError } from '../errors.js';

/** One short block for the terminal: the message, its detail lines, and no stack unless it is a bug. */
export function formatError(err: unknown): string {
  if (isOrgformError(err)) {
    const lines = [`Error: ${err.message}`, ...err.details.map((d) => `  ${d}`)];
    return lines.join('\n') + '\n';
  }
  const message = err instanceof Error ? err.message : String(err);
  return `Error: ${message}\nThis is a bug in orgform; please report it with the command you ran.\n`;
}
