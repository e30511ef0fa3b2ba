// @ts-check
/**
 * Whether the apply job's commit may still be applied: it is the branch's head, or every commit
 * merged since left orgform's configuration as it is here (another file changed, for which the
 * pipeline's `paths:` or `changes:` filter runs no apply). Otherwise a newer configuration is on the
 * branch, and applying this older one, even a plan exactly as reviewed then (after a revert, it can
 * be that again), would undo what was merged since: a re-run of an old job, a manual job of an old
 * pipeline, a job that waited while more was merged.
 *
 * Plain Node, no dependencies: the Action runs it from its checkout, the component from the release.
 */
import { existsSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { ForgeApiError, requestJson } from './forge-api.mjs';

/** GitHub's compare lists at most this many files: a list this long may be cut, so it cannot tell. */
const GITHUB_COMPARE_FILES = 300;

/** A job for a commit that a newer configuration on its branch has superseded. */
export class SupersededError extends Error {
  /** @param {string} sha @param {string} head @param {string} branch @param {string[] | undefined} changed  the configuration's files changed since (undefined: cannot be told) */
  constructor(sha, head, branch, changed) {
    const since = changed === undefined ? 'and which files changed since cannot be told' : `and the configuration changed since (${shortList(changed)})`;
    super(
      `this commit, ${sha.slice(0, 7)}, is no longer the head of ${branch}, which is now ${head.slice(0, 7)}, ${since}: applying this older configuration would undo what was merged since. ` +
        `Nothing was applied: the newest commit's apply applies it (re-run that one, or run the workflow on ${branch} by hand; never an older job).`,
    );
    this.name = 'SupersededError';
  }
}

/** @param {string[]} paths */
function shortList(paths) {
  return paths.length <= 3 ? paths.join(', ') : `${paths.slice(0, 3).join(', ')} and ${paths.length - 3} more`;
}

/**
 * The configuration's paths, relative to the repository's root and with `/`: each `-f`/`--file`
 * value among orgform's arguments (a file, or a directory whose every file counts), else orgs.yaml,
 * in the directory orgform runs in. A path outside the repository counts as all of it.
 * @param {string[]} args
 * @param {string} runDir
 * @param {string} repoRoot
 * @returns {string[]}
 */
export function configPaths(args, runDir, repoRoot) {
  /** @type {string[]} */
  const given = [];
  for (let i = 0; i < args.length; i += 1) {
    const arg = args[i] ?? '';
    if ((arg === '-f' || arg === '--file') && i + 1 < args.length) given.push(args[++i] ?? '');
    else if (arg.startsWith('--file=')) given.push(arg.slice('--file='.length));
    else if (arg.startsWith('-f') && arg.length > 2) given.push(arg.slice(2));
  }
  return (given.length === 0 ? ['orgs.yaml'] : given).map((path) => {
    const inRepo = relative(repoRoot, resolve(runDir, path));
    return inRepo.startsWith('..') || isAbsolute(inRepo) ? '' : inRepo.split(sep).join('/');
  });
}

/**
 * The root of the git working tree `dir` is in (where `.git` is, a directory or a worktree's file),
 * else `fallback`: a checkout into a subdirectory (actions/checkout's `path:`) has its own root.
 * @param {string} dir
 * @param {string} fallback
 */
export function gitRootOf(dir, fallback) {
  for (let at = resolve(dir); ; at = dirname(at)) {
    if (existsSync(join(at, '.git'))) return at;
    if (dirname(at) === at) return fallback;
  }
}

/**
 * The configuration's files among `changed` (paths relative to the repository's root).
 * @param {string[]} changed
 * @param {string[]} config  from configPaths ('' is the whole repository)
 */
export function configChanges(changed, config) {
  return [...new Set(changed)].filter((path) => config.some((root) => root === '' || path === root || path.startsWith(`${root}/`)));
}

/**
 * @typedef {object} NewestCheck
 * @property {string} sha      the commit this job runs for
 * @property {string} branch
 * @property {() => Promise<string>} head  the commit the branch points at now
 * @property {(head: string) => Promise<string[] | undefined>} changedSince  the files changed from `sha` to `head` (undefined: cannot be told)
 * @property {string[]} config  the configuration's paths (configPaths)
 */

/**
 * Resolves when this commit's configuration is still the branch's; otherwise throws SupersededError.
 * @param {NewestCheck} check
 */
export async function checkNewest(check) {
  const head = await check.head();
  if (head === check.sha) return;
  const changed = await check.changedSince(head);
  const config = changed === undefined ? undefined : configChanges(changed, check.config);
  if (config === undefined || config.length > 0) throw new SupersededError(check.sha, head, check.branch, config);
}

/**
 * The branch's head and the files changed since a commit, on GitHub (`contents: read`).
 * @param {{ apiUrl: string, repository: string, token: string, branch: string, sha: string }} options
 * @returns {Pick<NewestCheck, 'head' | 'changedSince'>}
 */
export function githubBranch(options) {
  const api = `${options.apiUrl.replace(/\/+$/, '')}/repos/${options.repository}`;
  const headers = { authorization: `Bearer ${options.token}`, accept: 'application/vnd.github+json', 'x-github-api-version': '2022-11-28', 'user-agent': 'orgform' };
  return {
    async head() {
      const ref = options.branch.split('/').map(encodeURIComponent).join('/');
      const { body } = await requestJson(`GET the head of ${options.branch}`, `${api}/git/ref/heads/${ref}`, { headers });
      return headSha(body?.object?.sha, options.branch);
    },
    async changedSince(head) {
      const { body } = await requestJson(`GET the changes since ${options.sha.slice(0, 7)}`, `${api}/compare/${encodeURIComponent(options.sha)}...${encodeURIComponent(head)}`, { headers });
      // 'behind' or 'diverged': this commit is not in the branch's history any more (it was rewritten).
      if (body?.status === 'identical') return [];
      if (body?.status !== 'ahead' || !Array.isArray(body.files) || body.files.length >= GITHUB_COMPARE_FILES) return undefined;
      return body.files.flatMap((/** @type {any} */ f) => [f?.filename, f?.previous_filename].filter((p) => typeof p === 'string'));
    },
  };
}

/**
 * The branch's head and the files changed since a commit, on GitLab.
 * @param {{ apiUrl: string, projectId: string, token: string, branch: string, sha: string }} options
 * @returns {Pick<NewestCheck, 'head' | 'changedSince'>}
 */
export function gitlabBranch(options) {
  const api = `${options.apiUrl.replace(/\/+$/, '')}/projects/${encodeURIComponent(options.projectId)}/repository`;
  const headers = { 'private-token': options.token, 'user-agent': 'orgform' };
  return {
    async head() {
      const { body } = await requestJson(`GET the head of ${options.branch}`, `${api}/branches/${encodeURIComponent(options.branch)}`, { headers });
      return headSha(body?.commit?.id, options.branch);
    },
    async changedSince(head) {
      const url = `${api}/compare?from=${encodeURIComponent(options.sha)}&to=${encodeURIComponent(head)}`;
      const { body } = await requestJson(`GET the changes since ${options.sha.slice(0, 7)}`, url, { headers });
      if (body?.compare_timeout === true || !Array.isArray(body?.diffs)) return undefined;
      return body.diffs.flatMap((/** @type {any} */ d) => [d?.new_path, d?.old_path].filter((p) => typeof p === 'string'));
    },
  };
}

/** @param {unknown} sha @param {string} branch */
function headSha(sha, branch) {
  if (typeof sha !== 'string' || sha === '') throw new ForgeApiError(`GET the head of ${branch}: the answer names no commit: is the API address right?`);
  return sha;
}
