// @ts-check
/**
 * One plan comment per pull request (GitHub) or merge request note (GitLab), updated on every push
 * instead of piling up: found again by a hidden marker at the start of its body, among the comments
 * written by the same identity as the token's (so a comment that someone else wrote, marker and all,
 * is never taken over).
 *
 * Plain Node (its own fetch), no dependencies: the GitHub Action runs it from its checkout, and the
 * GitLab component from the installed orgform package (it ships in the tarball).
 */

import { readFileSync } from 'node:fs';

/** GitHub refuses a comment body longer than this; GitLab allows 1,000,000. */
export const MAX_COMMENT_LENGTH = 65_536;

/** What the failure text keeps of orgform's stderr, at most. */
const MAX_ERROR_TEXT = 60_000;

/**
 * The hidden first line that finds the comment again. `key` tells apart several plans on one pull
 * request (another directory, another job); it is reduced to characters that cannot end the HTML
 * comment early.
 * @param {string} key
 */
export function commentMarker(key) {
  const safe = key.replace(/[^A-Za-z0-9._/:=@+ -]/g, '_').replace(/-{2,}/g, '-').trim();
  return safe === '' ? '<!-- orgform-plan -->' : `<!-- orgform-plan ${safe} -->`;
}

/**
 * @typedef {object} PlanCommentInput
 * @property {string} marker       from commentMarker
 * @property {string} markdown     what `orgform plan --format markdown` wrote to stdout (may be empty)
 * @property {string} stderr       what it wrote to stderr
 * @property {number} exitCode
 * @property {string} commit       the commit planned (shown shortened)
 */

/**
 * The comment: the Markdown plan, or, when plan failed before making one, its error text (without
 * the workflow-command lines, which the runner has already turned into annotations); then a footer
 * naming the commit. Never longer than MAX_COMMENT_LENGTH.
 * @param {PlanCommentInput} input
 */
export function composePlanComment(input) {
  const footer = `\n<sub>orgform plan for ${input.commit.slice(0, 7) || 'this commit'}; updated on every push.</sub>\n`;
  let text;
  if (input.markdown.trim() !== '') {
    text = input.markdown.endsWith('\n') ? input.markdown : `${input.markdown}\n`;
  } else {
    const lines = stripAnsi(input.stderr)
      .split('\n')
      .filter((line) => !line.trimStart().startsWith('::'))
      .join('\n')
      .trim();
    const shown = lines.length > MAX_ERROR_TEXT ? `${lines.slice(0, MAX_ERROR_TEXT)}\n…` : lines;
    text = `**orgform plan failed** (exit code ${input.exitCode})\n\n${fenced(shown || 'orgform printed nothing.')}`;
  }
  const body = `${input.marker}\n${text}${footer}`;
  if (body.length <= MAX_COMMENT_LENGTH) return body;
  return `${input.marker}\n**orgform plan:** the plan is too long for a comment (${text.length.toLocaleString('en')} characters): see the job's summary and log.\n${footer}`;
}

/**
 * One of orgform's output files, or '' when there is none: plan writes no Markdown when it fails
 * before making a plan.
 * @param {string | undefined} path
 */
export function readIfWritten(path) {
  if (!path) return '';
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    if (/** @type {NodeJS.ErrnoException} */ (err).code === 'ENOENT') return '';
    throw err;
  }
}

// eslint-disable-next-line no-control-regex
const ANSI = /\x1b\[[0-9;]*[A-Za-z]/g;

/** @param {string} text */
function stripAnsi(text) {
  return text.replace(ANSI, '');
}

/** A code block whose fence is longer than any run of backticks in the text, so nothing ends it early. @param {string} text */
function fenced(text) {
  const longest = Math.max(2, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = '`'.repeat(longest + 1);
  return `${fence}text\n${text}\n${fence}\n`;
}

/**
 * @typedef {{ id: number | string, body: string }} Comment
 * @typedef {object} CommentThread  one conversation's comments, as one forge serves them
 * @property {string} name                                  for messages: "pull request #7 comments"
 * @property {() => AsyncGenerator<Comment>} mine          the comments written by the token's identity, oldest first
 * @property {(body: string) => Promise<Comment>} create
 * @property {(id: Comment['id'], body: string) => Promise<Comment>} update
 */

/**
 * Creates the comment, or updates the oldest one of ours that starts with the marker (left alone
 * when its text is already `body`).
 * @param {CommentThread} thread
 * @param {string} marker
 * @param {string} body
 * @returns {Promise<{ action: 'created' | 'updated' | 'unchanged', id: Comment['id'] }>}
 */
export async function upsertComment(thread, marker, body) {
  for await (const comment of thread.mine()) {
    if (typeof comment.body !== 'string' || !comment.body.startsWith(`${marker}\n`)) continue;
    if (comment.body === body) return { action: 'unchanged', id: comment.id };
    const updated = await thread.update(comment.id, body);
    return { action: 'updated', id: updated.id };
  }
  const created = await thread.create(body);
  return { action: 'created', id: created.id };
}

/**
 * @typedef {object} GithubThreadOptions
 * @property {string} apiUrl       GITHUB_API_URL (https://api.github.com, or a GitHub Enterprise Server's)
 * @property {string} repository   GITHUB_REPOSITORY, owner/name
 * @property {number} number       the pull request's number
 * @property {string} token        a token allowed to write pull requests (the job's GITHUB_TOKEN)
 */

/**
 * A pull request's conversation, through GitHub's REST API (issue comments). Ours are the bots'
 * comments: the job's GITHUB_TOKEN writes as github-actions[bot], and a user cannot post as a bot.
 * @param {GithubThreadOptions} options
 * @returns {CommentThread}
 */
export function githubThread(options) {
  const headers = {
    authorization: `Bearer ${options.token}`,
    accept: 'application/vnd.github+json',
    'x-github-api-version': '2022-11-28',
    'content-type': 'application/json',
    'user-agent': 'orgform',
  };
  const base = `${options.apiUrl.replace(/\/+$/, '')}/repos/${options.repository}/issues`;
  const name = `pull request #${options.number}'s comments`;
  return {
    name,
    async *mine() {
      for (let page = 1; ; page += 1) {
        const batch = /** @type {Array<Comment & { user?: { type?: string } }>} */ (await callJson(`GET ${name}`, `${base}/${options.number}/comments?per_page=100&page=${page}`, { headers }));
        for (const comment of batch) if (comment.user?.type === 'Bot') yield comment;
        if (batch.length < 100) return;
      }
    },
    create: (body) => callJson(`POST ${name}`, `${base}/${options.number}/comments`, { method: 'POST', headers, body: JSON.stringify({ body }) }),
    update: (id, body) => callJson(`PATCH ${name}`, `${base}/comments/${id}`, { method: 'PATCH', headers, body: JSON.stringify({ body }) }),
  };
}

/**
 * @typedef {object} GitlabThreadOptions
 * @property {string} apiUrl           CI_API_V4_URL
 * @property {string} projectId        CI_PROJECT_ID
 * @property {string} mergeRequestIid  CI_MERGE_REQUEST_IID
 * @property {string} token            a project or personal access token with the api scope
 */

/**
 * A merge request's notes, through GitLab's REST API. Ours are the notes whose author is the token's
 * user (GET /user), never system notes.
 * @param {GitlabThreadOptions} options
 * @returns {CommentThread}
 */
export function gitlabThread(options) {
  const headers = { 'private-token': options.token, 'content-type': 'application/json', 'user-agent': 'orgform' };
  const api = options.apiUrl.replace(/\/+$/, '');
  const notes = `${api}/projects/${encodeURIComponent(options.projectId)}/merge_requests/${encodeURIComponent(options.mergeRequestIid)}/notes`;
  const name = `merge request !${options.mergeRequestIid}'s notes`;
  return {
    name,
    async *mine() {
      const me = /** @type {{ id: number }} */ (await callJson('GET the token\'s user', `${api}/user`, { headers }));
      for (let page = 1; ; page += 1) {
        const batch = /** @type {Array<Comment & { system?: boolean, author?: { id?: number } }>} */ (
          await callJson(`GET ${name}`, `${notes}?per_page=100&page=${page}&sort=asc&order_by=created_at`, { headers })
        );
        for (const note of batch) if (note.system !== true && note.author?.id === me.id) yield note;
        if (batch.length < 100) return;
      }
    },
    create: (body) => callJson(`POST ${name}`, notes, { method: 'POST', headers, body: JSON.stringify({ body }) }),
    update: (id, body) => callJson(`PUT ${name}`, `${notes}/${id}`, { method: 'PUT', headers, body: JSON.stringify({ body }) }),
  };
}

/** An HTTP error from the forge's API, with what the answer said (never the token). */
export class ForgeApiError extends Error {
  /**
   * @param {string} what
   * @param {number} status
   * @param {string} detail
   */
  constructor(what, status, detail) {
    super(`${what}: HTTP ${status}${detail === '' ? '' : ` (${detail})`}`);
    this.name = 'ForgeApiError';
    this.status = status;
  }
}

/**
 * One request, JSON back. Redirects are refused (they would carry the token elsewhere), and a
 * request that takes over 30 s is given up.
 * @param {string} what  "METHOD thing", for the error message
 * @param {string} url
 * @param {RequestInit & { headers: Record<string, string> }} init
 * @returns {Promise<any>}
 */
async function callJson(what, url, init) {
  let res;
  try {
    res = await fetch(url, { ...init, redirect: 'error', signal: AbortSignal.timeout(30_000) });
  } catch (err) {
    const cause = /** @type {{ cause?: { message?: string } }} */ (err).cause;
    throw new Error(`${what}: ${cause?.message ?? /** @type {Error} */ (err).message}`);
  }
  const text = await res.text();
  if (!res.ok) {
    let detail = text.slice(0, 300);
    try {
      const message = JSON.parse(text).message;
      if (typeof message === 'string') detail = message;
    } catch {
      // not JSON: the start of the text is the detail
    }
    throw new ForgeApiError(what, res.status, detail.replace(/\s+/g, ' ').trim());
  }
  return JSON.parse(text);
}
