// @ts-check
/**
 * Which plan the merge may apply: the pull request (GitHub) or merge request (GitLab) that the
 * commit on the default branch merged, and the digest of the plan orgform's own plan comment on it
 * shows, as its second line holds it (`<!-- orgform-digest sha256:… RECORD -->`, the marker that
 * `orgform plan --format markdown` ends with and composePlanComment moves up). The comment is found
 * as the plan step finds it to update it: by the token's own identity and the plan marker, never
 * among others' comments; when the identity cannot be told, no comment counts as the review.
 *
 * Then the arguments orgform runs with: `apply --expect-digest` for a reviewed plan, `apply
 * --auto-approve` when a person set apply-unreviewed, and otherwise `plan`, which shows what would
 * be applied (and its digest) and applies nothing.
 *
 * Plain Node, no dependencies: the Action runs it from its checkout, the component from the release.
 */
import { requestJson } from './forge-api.mjs';

/** The marker's form, as orgform writes it (src/plan/review-record.ts): the digest, and the plan's record when it fits. */
const DIGEST_MARKER = /^<!-- orgform-digest (sha256:[0-9a-f]{64})(?: [A-Za-z0-9_-]+)? -->$/;

/**
 * The Markdown plan without its digest marker, and the marker: the last line of what orgform wrote,
 * when it is one.
 * @param {string} markdown
 * @returns {{ text: string, marker?: string }}
 */
export function splitDigestMarker(markdown) {
  const trimmed = markdown.replace(/\s+$/, '');
  const at = trimmed.lastIndexOf('\n');
  const last = trimmed.slice(at + 1);
  if (!DIGEST_MARKER.test(last)) return { text: markdown };
  return { text: `${trimmed.slice(0, Math.max(0, at)).replace(/\s+$/, '')}\n`, marker: last };
}

/** The digest a Markdown plan ends with, or undefined (a plan that failed wrote none). @param {string} markdown */
export function markdownDigest(markdown) {
  const marker = splitDigestMarker(markdown).marker;
  return marker === undefined ? undefined : DIGEST_MARKER.exec(marker)?.[1];
}

/**
 * The digest and marker of a plan comment, read only where composePlanComment puts them: the line
 * right after the comment's own marker. A marker anywhere else (a value in the plan, quoted) is text.
 * @param {string} body
 * @param {string} commentMarker
 * @returns {{ digest: string, marker: string } | undefined}
 */
export function reviewedDigestOf(body, commentMarker) {
  if (typeof body !== 'string' || !body.startsWith(`${commentMarker}\n`)) return undefined;
  const second = body.slice(commentMarker.length + 1).split('\n', 1)[0] ?? '';
  const match = DIGEST_MARKER.exec(second);
  return match === null ? undefined : { digest: match[1] ?? '', marker: second };
}

/**
 * @typedef {import('./sticky-comment.mjs').CommentThread} CommentThread
 * @typedef {{ commentId: number | string, digest: string, marker: string }} Review
 * @typedef {'unknown-identity' | 'no-plan-comment' | 'no-digest' | 'changed-after-merge'} NoReview
 */

/**
 * orgform's plan comment on the thread and its digest: the one the plan job keeps up to date, so the
 * same one upsertComment updates (the oldest of the token's own identity's with the marker). A later
 * one, written while the identity could not be told, is no longer updated: its plan may be old.
 * With `mergedAt`, a comment changed after that moment is not the review: nobody reviewed it before
 * the merge (a plan job re-run on the merged pull request, against the service as it is now, or an edit).
 * @param {CommentThread} thread
 * @param {string} commentMarker  the plan comment's marker (the same directory and files as the plan job)
 * @param {string} [mergedAt]     when the pull request was merged (ISO 8601)
 * @returns {Promise<{ review: Review } | { missing: NoReview }>}
 */
export async function findReview(thread, commentMarker, mergedAt) {
  const author = await thread.author();
  if (author === undefined) return { missing: 'unknown-identity' };
  for await (const comment of thread.writtenBy(author)) {
    if (typeof comment.body !== 'string' || !comment.body.startsWith(`${commentMarker}\n`)) continue;
    if (mergedAt !== undefined && !changedBy(comment, mergedAt)) return { missing: 'changed-after-merge' };
    const found = reviewedDigestOf(comment.body, commentMarker);
    return found === undefined ? { missing: 'no-digest' } : { review: { commentId: comment.id, ...found } };
  }
  return { missing: 'no-plan-comment' };
}

/**
 * Whether the comment was last changed by `time`, as the forge says (both forges give `updated_at`;
 * one that says nothing cannot be told to have been).
 * @param {{ updated_at?: unknown, created_at?: unknown }} comment
 * @param {string} time
 */
function changedBy(comment, time) {
  const changed = Date.parse(String(comment.updated_at ?? comment.created_at ?? ''));
  const by = Date.parse(time);
  return Number.isFinite(changed) && Number.isFinite(by) && changed <= by;
}

/**
 * Why no reviewed plan was found, in a sentence's middle, in the forge's own words for what is
 * reviewed (`review`: GitHub's "pull request", GitLab's "merge request").
 * @param {NoReview | 'no-pull-request'} why
 * @param {string} [review]
 */
export function noReviewReason(why, review = 'pull request') {
  switch (why) {
    case 'no-pull-request':
      return `this commit was pushed directly: no merged ${review} has it as its merge commit`;
    case 'unknown-identity':
      return "the token cannot tell whose the comments are, so none of them can be taken for orgform's plan";
    case 'no-plan-comment':
      return `the ${review} has no plan comment of orgform's (for this directory and these files)`;
    case 'changed-after-merge':
      return `orgform's plan comment on the ${review} was changed after it was merged (a plan job run again, or an edit), so what it shows is not what was reviewed before the merge`;
    default:
      return `orgform's plan comment on the ${review} holds no plan (the last plan failed, or was made by an orgform without digests)`;
  }
}

/**
 * @typedef {{ number: number, url: string, mergedAt?: string }} PullRequest  `mergedAt`: when it was merged (ISO 8601), when the forge says
 */

/**
 * The pull request that `sha` merged into `branch`: merged, with `sha` as its merge commit (a merge,
 * a squash, or the last commit of a rebase). Undefined for a direct push.
 * @param {{ apiUrl: string, repository: string, token: string, sha: string, branch: string }} options
 * @returns {Promise<PullRequest | undefined>}
 */
export async function githubMergedPullRequest(options) {
  const api = options.apiUrl.replace(/\/+$/, '');
  const headers = { authorization: `Bearer ${options.token}`, accept: 'application/vnd.github+json', 'x-github-api-version': '2022-11-28', 'user-agent': 'orgform' };
  const { body } = await requestJson("GET the commit's pull requests", `${api}/repos/${options.repository}/commits/${encodeURIComponent(options.sha)}/pulls?per_page=100`, { headers });
  const pulls = Array.isArray(body) ? body : [];
  const merged = pulls.find((p) => typeof p?.number === 'number' && p.merged_at && p.merge_commit_sha === options.sha && p.base?.ref === options.branch);
  return merged === undefined ? undefined : { number: merged.number, url: String(merged.html_url ?? ''), ...mergedAtOf(merged) };
}

/**
 * The merge request that `sha` merged into `branch`: merged, with `sha` as its merge commit, its
 * squash commit, or (a fast-forward merge) its last commit. Undefined for a direct push.
 * @param {{ apiUrl: string, projectId: string, token: string, sha: string, branch: string }} options
 * @returns {Promise<PullRequest | undefined>}
 */
export async function gitlabMergedRequest(options) {
  const api = options.apiUrl.replace(/\/+$/, '');
  const headers = { 'private-token': options.token, 'user-agent': 'orgform' };
  const url = `${api}/projects/${encodeURIComponent(options.projectId)}/repository/commits/${encodeURIComponent(options.sha)}/merge_requests`;
  const { body } = await requestJson("GET the commit's merge requests", url, { headers });
  const requests = Array.isArray(body) ? body : [];
  const merged = requests.find(
    (m) =>
      typeof m?.iid === 'number' &&
      m.state === 'merged' &&
      m.target_branch === options.branch &&
      (m.merge_commit_sha === options.sha || m.squash_commit_sha === options.sha || (!m.merge_commit_sha && !m.squash_commit_sha && m.sha === options.sha)),
  );
  return merged === undefined ? undefined : { number: merged.iid, url: String(merged.web_url ?? ''), ...mergedAtOf(merged) };
}

/** @param {{ merged_at?: unknown }} request */
function mergedAtOf(request) {
  return typeof request.merged_at === 'string' && request.merged_at !== '' ? { mergedAt: request.merged_at } : {};
}

/**
 * @typedef {{ mode: 'reviewed', digest: string, reviewedFile?: string } | { mode: 'unreviewed' } | { mode: 'no-review' }} ApplyMode
 */

/**
 * What orgform runs on the default branch, `common` being the files, limits and the user's own
 * arguments: the reviewed plan applied by its digest, with the events as data (`--format json`,
 * last, so that no argument of the user's turns it off); or, asked for by name, a fresh plan
 * applied without a review; or, without a reviewed plan, only a plan in Markdown: what would be
 * applied, and its digest.
 * @param {ApplyMode} mode
 * @param {string[]} common
 * @returns {string[]}
 */
export function applyArguments(mode, common) {
  switch (mode.mode) {
    case 'reviewed':
      return ['apply', '--expect-digest', mode.digest, ...(mode.reviewedFile === undefined ? [] : ['--reviewed', mode.reviewedFile]), ...common, '--format', 'json'];
    case 'unreviewed':
      return ['apply', '--auto-approve', ...common, '--format', 'json'];
    default:
      return ['plan', '--format', 'markdown', '--detailed-exitcode', ...common];
  }
}

/**
 * @typedef {object} DecideOptions
 * @property {string} expectDigest      a digest a person gave for this run ('' = none): that plan is the one to apply
 * @property {boolean} applyUnreviewed  a person asked for a plan applied without a review
 * @property {() => Promise<PullRequest | undefined>} mergedPullRequest
 * @property {(pullRequest: PullRequest) => CommentThread} threadOf
 * @property {string} commentMarker     the plan comment's marker
 * @property {string} [review]          what the forge calls what is reviewed ('pull request' by default, GitLab's 'merge request')
 * @property {(marker: string) => string} saveMarker  writes the reviewed plan's marker where orgform reads it (--reviewed), and says where
 * @property {(() => Promise<void>) | undefined} checkNewest  throws when a newer configuration is on the branch (newer-config.mjs); undefined when it cannot be asked
 */

/**
 * What the apply after a merge does, and on which pull request it reports: the digest a person gave;
 * else, asked for by name, a plan without review; else the merged pull request's reviewed plan; else
 * (a direct push, no plan comment, no digest in it) nothing but a plan, with the reason. Whichever,
 * only while this commit's configuration is the branch's newest: otherwise checkNewest throws.
 * @param {DecideOptions} options
 * @returns {Promise<{ mode: ApplyMode, pullRequest?: PullRequest, reason?: string }>}
 */
export async function decideApply(options) {
  await options.checkNewest?.();
  const pullRequest = await options.mergedPullRequest();
  const on = pullRequest === undefined ? {} : { pullRequest };
  if (options.expectDigest !== '') return { mode: { mode: 'reviewed', digest: options.expectDigest }, ...on };
  if (options.applyUnreviewed) return { mode: { mode: 'unreviewed' }, ...on };
  if (pullRequest === undefined) return { mode: { mode: 'no-review' }, reason: noReviewReason('no-pull-request', options.review) };
  const found = await findReview(options.threadOf(pullRequest), options.commentMarker, pullRequest.mergedAt);
  if ('missing' in found) return { mode: { mode: 'no-review' }, pullRequest, reason: noReviewReason(found.missing, options.review) };
  return { mode: { mode: 'reviewed', digest: found.review.digest, reviewedFile: options.saveMarker(found.review.marker) }, pullRequest };
}
