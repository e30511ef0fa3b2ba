import { redactSecrets } from '../redact.js';
import { isOrgformError } from '../errors.js';
import { terminalSafeLines } from './ansi.js';

/**
 * One short block for the terminal: the message, its detail lines, and no stack unless it is a bug.
 * Messages quote values (a slug, a file's text, the service's answer): control, invisible and
 * bidirectional characters in them are shown as escapes, so that none can hide or reorder the line.
 */
export function formatError(err: unknown): string {
  if (isOrgformError(err)) {
    const lines = [`Error: ${terminalSafeLines(err.message)}`, ...err.details.map((d) => `  ${terminalSafeLines(d)}`)];
    return lines.join('\n') + '\n';
  }
  // Not made by orgform, so not redacted where it was made: whatever has a credential's shape goes.
  const message = redactSecrets(err instanceof Error ? err.message : String(err), []);
  return `Error: ${terminalSafeLines(message)}\nThis is a bug in orgform; please report it with the command you ran.\n`;
}
