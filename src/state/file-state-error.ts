/**
 * A file system failure at a step of the file state (the lock, the journal's log, its document):
 * the state error, naming the path and what to do for the failure at hand. A full disk, a
 * directory this user may not write or a file system mounted read-only is the user's to fix, not
 * a bug in orgform.
 */
import { dirname } from 'node:path';
import { OrgformError } from '../errors.js';

const ELSEWHERE = 'or keep the state elsewhere (--state PATH or ORGFORM_STATE: another file, or a remote state, see docs/state.md)';

/** What to do about `err` at `path`, by its errno. */
export function fileStateAdvice(path: string, err: unknown): string {
  const dir = dirname(path);
  switch ((err as NodeJS.ErrnoException | undefined)?.code) {
    case 'ENOSPC':
    case 'EDQUOT':
      return `The file system of ${dir} is full: free space on it, ${ELSEWHERE}, then run again.`;
    case 'EACCES':
    case 'EPERM':
      return `This user may not read or write there: give it access to ${dir} and the state files in it, ${ELSEWHERE}, then run again.`;
    case 'EROFS':
      return `The file system of ${dir} is mounted read-only: remount it writable, ${ELSEWHERE}, then run again.`;
    default:
      return `Check that ${dir} can be created and written, ${ELSEWHERE}, then run again.`;
  }
}

/**
 * `failure` says what could not be done (`Cannot create the state lock`), `path` where; the
 * system's message follows, then what to do, then `after` (what the failure left, when it matters).
 */
export function fileStateError(failure: string, path: string, err: unknown, after?: string): OrgformError {
  const detail = err instanceof Error ? err.message : String(err);
  return new OrgformError('STATE_INVALID', `${failure} ${path}: ${detail}. ${fileStateAdvice(path, err)}${after === undefined ? '' : ` ${after}`}`, { cause: err });
}
