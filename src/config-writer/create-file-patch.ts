/**
 * One file's change as `git diff` writes it (`diff --git a/PATH b/PATH`, `---`/`+++`, three lines
 * of context), so that the output of `export --diff` goes straight to `git apply`, `patch -p1` or a
 * pull request. Pure.
 */
import { formatPatch, structuredPatch } from 'diff';

/**
 * `path` is relative to where the patch will be applied, with `/` separators; names that git
 * would quote (non-ASCII, quotes, control characters) are quoted the way git does.
 * Nothing at all when the texts are the same.
 */
export function createFilePatch(path: string, before: string, after: string): string {
  if (before === after) return '';
  const patch = structuredPatch(`a/${path}`, `b/${path}`, before, after, undefined, undefined, { context: 3 });
  return formatPatch({ ...patch, isGit: true });
}
