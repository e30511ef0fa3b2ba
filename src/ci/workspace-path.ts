/**
 * Where a config file is, as a CI service wants to be told: relative to the checked-out repository
 * (GITHUB_WORKSPACE, GitLab's CI_PROJECT_DIR) with forward slashes and no leading `./`, since that
 * is how GitHub places an annotation on a pull request's diff and GitLab a finding on a merge
 * request's. Pure: path arithmetic only, no file system.
 */
import { isAbsolute, relative, resolve, sep } from 'node:path';

export interface WorkspaceRoots {
  /** Where relative paths given on the command line start from. */
  cwd: string;
  /** The repository's root in the CI job; the cwd when the job does not say. */
  root: string;
}

/**
 * `file` (as given with -f, or as the loader recorded it) relative to the root. A file outside the
 * root keeps the path as given: no diff can show it, and a path climbing out with `../` would only
 * mislead.
 */
export function workspacePath(file: string, roots: WorkspaceRoots): string {
  const absolute = resolve(roots.cwd, file);
  const inside = relative(resolve(roots.cwd, roots.root), absolute);
  const outside = inside === '' || inside === '..' || inside.startsWith(`..${sep}`) || isAbsolute(inside);
  if (outside) return file;
  return inside.split(sep).join('/');
}
