// @ts-check
/**
 * Drift, found on a schedule: one issue kept open while the service differs from the default
 * branch (a plan of the default branch has changes), with the plan in it, updated in place on
 * every run; closed with a note once the plan has none; and an error (the plan failed, or could not
 * read everything) written into it, not lost in a log. The issue is found again as the plan comment
 * is: among the open issues written by the token's own identity, by a hidden marker at the start of
 * its body; never someone else's.
 *
 * Plain Node, no dependencies: the Action runs it from its checkout, the component from the release.
 */
import { readPages, requestJson } from './forge-api.mjs';
import { errorLines, fenced, githubAuthor, gitlabAuthor, isAuthor, linkPlanPageIfAble, MAX_COMMENT_LENGTH } from './sticky-comment.mjs';
import { splitDigestMarker } from './reviewed-plan.mjs';

/**
 * @typedef {import('./sticky-comment.mjs').Author} Author
 * @typedef {{ id: number, body: string }} Issue  `id`: the number (GitHub) or iid (GitLab) the issue is addressed by
 * @typedef {object} IssueTracker  a repository's or project's issues, as one forge serves them
 * @property {string} name
 * @property {() => Promise<Author | undefined>} author
 * @property {(author: Author) => AsyncGenerator<Issue>} openWrittenBy  the open issues `author` opened, oldest first
 * @property {(title: string, body: string) => Promise<Issue>} create
 * @property {(id: number, title: string, body: string) => Promise<void>} update
 * @property {(id: number, note: string) => Promise<void>} close  a note, then closed
 */

/** GitHub's issue bodies and GitLab's descriptions: GitHub's limit is the lower. */
const MAX_BODY = MAX_COMMENT_LENGTH;

/**
 * @typedef {object} DriftCheck
 * @property {number} exitCode   orgform plan --detailed-exitcode's: 0 no drift, 2 drift, else an error
 * @property {string} markdown   its Markdown (may be empty)
 * @property {string} stderr
 * @property {string} branch     the default branch, which the plan was made from
 * @property {string} runUrl     this run's page
 * @property {string} [pageUrl]  the plan page's address, where the plan's links to it lead; else to the run
 * @property {string} commit
 */

/**
 * Opens, updates or closes the drift issue for this check; says what it did.
 * @param {IssueTracker} tracker
 * @param {string} marker  commentMarker(key, 'drift')
 * @param {DriftCheck} check
 * @returns {Promise<{ action: 'opened' | 'updated' | 'closed' | 'none', id?: number, unowned?: true }>}
 */
export async function syncDriftIssue(tracker, marker, check) {
  const author = await tracker.author();
  let open;
  if (author !== undefined) {
    for await (const issue of tracker.openWrittenBy(author)) {
      if (typeof issue.body === 'string' && issue.body.startsWith(`${marker}\n`)) {
        open = issue;
        break;
      }
    }
  }
  if (check.exitCode === 0) {
    if (open === undefined) return { action: 'none' };
    await tracker.close(open.id, `No drift any more: the plan of \`${check.branch}\` at ${check.commit.slice(0, 7)} has no changes, so the service matches the configuration again ([the run](${check.runUrl})). Closed by orgform.`);
    return { action: 'closed', id: open.id };
  }
  const { title, body } = driftIssue(marker, check);
  if (open !== undefined) {
    await tracker.update(open.id, title, body);
    return { action: 'updated', id: open.id };
  }
  const created = await tracker.create(title, body);
  return { action: 'opened', id: created.id, ...(author === undefined ? { unowned: /** @type {const} */ (true) } : {}) };
}

/**
 * The issue's title and body for a check that found drift or failed.
 * @param {string} marker
 * @param {DriftCheck} check
 */
export function driftIssue(marker, check) {
  const plan = linkPlanPageIfAble(splitDigestMarker(check.markdown).text, check.pageUrl || check.runUrl).trim();
  const checked = `\n\n<sub>Checked at ${check.commit.slice(0, 7)} of \`${check.branch}\` by [this run](${check.runUrl}); updated in place on every scheduled check, and closed once there is no drift.</sub>\n`;
  if (check.exitCode === 2) {
    const intro =
      `The Organisations service differs from the configuration on \`${check.branch}\`: applying it now would make the changes below. ` +
      'Someone changed the service by hand, or a merge was not applied. Either declare the change in a pull request (then this plan has no changes), or let the next apply put the service back.\n\n';
    return { title: `orgform: the service differs from ${check.branch}`, body: fit(`${marker}\n${intro}`, plan, checked) };
  }
  const intro = `The scheduled drift check failed (exit code ${check.exitCode}), so whether the service differs from \`${check.branch}\` is not known. Fix the cause; the next check updates this issue.\n\n`;
  const error = errorLines(check.stderr);
  const shown = `${plan === '' ? '' : `${plan}\n\n`}${error === '' ? '' : `orgform said:\n\n${fenced(error)}`}`;
  return { title: 'orgform: the drift check failed', body: fit(`${marker}\n${intro}`, shown, checked) };
}

/** `head`, as much of `text` as fits, and `foot`, within MAX_BODY. @param {string} head @param {string} text @param {string} foot */
function fit(head, text, foot) {
  const room = MAX_BODY - head.length - foot.length;
  return `${head}${text.length <= room ? text : `${text.slice(0, Math.max(0, room - 80))}\n\n_…cut to fit: the whole plan is in the run's log._`}${foot}`;
}

const GITHUB_HEADERS = { accept: 'application/vnd.github+json', 'x-github-api-version': '2022-11-28', 'content-type': 'application/json', 'user-agent': 'orgform' };

/**
 * A repository's issues through GitHub's REST API (`issues: write`).
 * @param {Omit<import('./sticky-comment.mjs').GithubThreadOptions, 'number'>} options
 * @returns {IssueTracker}
 */
export function githubIssues(options) {
  const headers = { ...GITHUB_HEADERS, authorization: `Bearer ${options.token}` };
  const api = options.apiUrl.replace(/\/+$/, '');
  const issues = `${api}/repos/${options.repository}/issues`;
  const name = `${options.repository}'s issues`;
  const send = async (/** @type {string} */ what, /** @type {string} */ url, /** @type {string} */ method, /** @type {unknown} */ value) =>
    (await requestJson(`${method} ${what}`, url, { method, headers, body: JSON.stringify(value) })).body;
  return {
    name,
    author: () => githubAuthor({ ...options, number: 0 }, api, headers),
    async *openWrittenBy(author) {
      const all = readPages(name, `${issues}?state=open&sort=created&direction=asc&per_page=100`, headers, 'last');
      // The issues API lists pull requests too: those have `pull_request`.
      for await (const issue of /** @type {AsyncGenerator<any>} */ (all)) {
        if (issue.pull_request === undefined && isAuthor(issue.user, author)) yield { id: issue.number, body: issue.body ?? '' };
      }
    },
    create: async (title, body) => {
      const issue = await send(name, issues, 'POST', { title, body, labels: ['orgform-drift'] });
      return { id: issue.number, body };
    },
    update: async (id, title, body) => void (await send(`issue #${id}`, `${issues}/${id}`, 'PATCH', { title, body })),
    close: async (id, note) => {
      await send(`issue #${id}'s comments`, `${issues}/${id}/comments`, 'POST', { body: note });
      await send(`issue #${id}`, `${issues}/${id}`, 'PATCH', { state: 'closed', state_reason: 'completed' });
    },
  };
}

/**
 * A project's issues through GitLab's REST API (a token with the api scope, Reporter or above).
 * @param {{ apiUrl: string, projectId: string, token: string, username?: string }} options
 * @returns {IssueTracker}
 */
export function gitlabIssues(options) {
  const headers = { 'private-token': options.token, 'content-type': 'application/json', 'user-agent': 'orgform' };
  const api = options.apiUrl.replace(/\/+$/, '');
  const issues = `${api}/projects/${encodeURIComponent(options.projectId)}/issues`;
  const name = `project ${options.projectId}'s issues`;
  const send = async (/** @type {string} */ what, /** @type {string} */ url, /** @type {string} */ method, /** @type {unknown} */ value) =>
    (await requestJson(`${method} ${what}`, url, { method, headers, body: JSON.stringify(value) })).body;
  return {
    name,
    author: () => gitlabAuthor(api, headers, options.username),
    async *openWrittenBy(author) {
      const mine = author.id === undefined ? '' : `&author_id=${encodeURIComponent(String(author.id))}`;
      const all = readPages(name, `${issues}?state=opened&sort=asc&order_by=created_at&per_page=100${mine}`, headers, 'count');
      for await (const issue of /** @type {AsyncGenerator<any>} */ (all)) {
        if (isAuthor(issue.author, author)) yield { id: issue.iid, body: issue.description ?? '' };
      }
    },
    create: async (title, body) => {
      const issue = await send(name, issues, 'POST', { title, description: body, labels: 'orgform-drift' });
      return { id: issue.iid, body };
    },
    update: async (id, title, body) => void (await send(`issue #${id}`, `${issues}/${id}`, 'PUT', { title, description: body })),
    close: async (id, note) => {
      await send(`issue #${id}'s notes`, `${issues}/${id}/notes`, 'POST', { body: note });
      await send(`issue #${id}`, `${issues}/${id}`, 'PUT', { state_event: 'close' });
    },
  };
}
