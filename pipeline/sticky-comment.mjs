// @ts-check
/**
 * One plan comment per pull request (GitHub) or merge request note (GitLab), updated on every push
 * instead of piling up: found again by a hidden marker at the start of its body, among the comments
 * written by the token's own identity (so a comment that someone else wrote, another bot included,
 * marker and all, is never taken over).
 *
 * Plain Node (its own fetch), no dependencies: the GitHub Action runs it from its checkout, and the
 * GitLab component from the release it downloaded (it ships in the package).
 */

import { readFileSync } from 'node:fs';
import { ForgeApiError, readPages, requestJson } from './forge-api.mjs';
import { splitDigestMarker } from './reviewed-plan.mjs';

export { ForgeApiError } from './forge-api.mjs';

/** GitHub refuses a comment body longer than this; GitLab a note longer than GITLAB_NOTE_LENGTH. */
export const MAX_COMMENT_LENGTH = 65_536;
export const GITLAB_NOTE_LENGTH = 1_000_000;

/**
 * Where the Markdown plan's links to the plan page point until its address is known (orgform's
 * text/plan/render-grouped-markdown.ts writes them so). The Markdown escapes `[` and `]` in every
 * value and writes no code block, so `](` + this is only ever one of its own links.
 */
export const PLAN_PAGE_PLACEHOLDER = '#orgform-plan-page';
/**
 * The longest address linkPlanPage puts in its place: the Markdown keeps this much room for each
 * link (render-grouped-markdown.ts's PLAN_PAGE_URL_MAX_LENGTH), so a linked plan still fits.
 */
export const PLAN_PAGE_URL_MAX_LENGTH = 300;

/** What the failure text keeps of orgform's stderr, at most. */
const MAX_ERROR_TEXT = 60_000;

/**
 * The hidden first line that finds the comment again. `key` tells apart several plans on one pull
 * request (another directory, another job); it is reduced to characters that cannot end the HTML
 * comment early. `kind`: the plan's comment, the one an apply after the merge writes, or the drift issue.
 * @param {string} key
 * @param {'plan' | 'apply' | 'drift'} [kind]
 */
export function commentMarker(key, kind = 'plan') {
  const safe = key.replace(/[^A-Za-z0-9._/:=@+ -]/g, '_').replace(/-{2,}/g, '-').trim();
  return safe === '' ? `<!-- orgform-${kind} -->` : `<!-- orgform-${kind} ${safe} -->`;
}

/**
 * @typedef {object} PlanCommentInput
 * @property {string} marker       from commentMarker
 * @property {string} markdown     what `orgform plan --format markdown` wrote to stdout (may be empty)
 * @property {string} stderr       what it wrote to stderr
 * @property {number} exitCode
 * @property {string} commit       the commit planned (shown shortened)
 * @property {number} [maxLength]  the forge's limit: MAX_COMMENT_LENGTH (GitHub, the default) or GITLAB_NOTE_LENGTH
 */

/**
 * The comment: the Markdown plan, or, when plan failed before making one, its error text (without
 * the workflow-command lines, which the runner has already turned into annotations); then a footer
 * naming the commit. The plan's digest marker (the last line orgform wrote) goes right after the
 * comment's own marker, the one place the merge's apply reads it from (reviewed-plan.mjs): a
 * marker quoted anywhere else in the plan is text. Never longer than `maxLength`
 * (MAX_COMMENT_LENGTH unless given).
 * @param {PlanCommentInput} input
 */
export function composePlanComment(input) {
  const max = input.maxLength ?? MAX_COMMENT_LENGTH;
  const footer = `\n<sub>orgform plan for ${input.commit.slice(0, 7) || 'this commit'}; updated on every push.</sub>\n`;
  const { text: markdown, marker: digest } = splitDigestMarker(input.markdown);
  const head = `${input.marker}\n${digest === undefined ? '' : `${digest}\n`}`;
  let text;
  if (markdown.trim() !== '') {
    text = markdown.endsWith('\n') ? markdown : `${markdown}\n`;
  } else {
    const lines = errorLines(input.stderr);
    const shown = lines.length > MAX_ERROR_TEXT ? `${lines.slice(0, MAX_ERROR_TEXT)}\n…` : lines;
    text = `**orgform plan failed** (exit code ${input.exitCode})\n\n${fenced(shown || 'orgform printed nothing.')}`;
  }
  const body = `${head}${text}${footer}`;
  if (body.length <= max) return body;
  return `${head}**orgform plan:** the plan is too long for a comment (${text.length.toLocaleString('en')} characters): see the job's summary and log.\n${footer}`;
}

/**
 * What orgform wrote to stderr as text to show: without colours, and without the workflow-command
 * lines (which the runner has already turned into annotations).
 * @param {string} stderr
 */
export function errorLines(stderr) {
  return stripAnsi(stderr)
    .split('\n')
    .filter((line) => !line.trimStart().startsWith('::'))
    .join('\n')
    .trim();
}

/**
 * The Markdown plan with its links to the plan page pointing at `url`, once the page's address is
 * known (an artifact's URL comes after the plan). `url` must be an http or https URL of printable
 * ASCII (what would end a link target is percent-encoded), at most PLAN_PAGE_URL_MAX_LENGTH long;
 * anything else throws, and nothing is linked.
 * @param {string} markdown
 * @param {string} url
 */
export function linkPlanPage(markdown, url) {
  if (!/^[\x21-\x7e]+$/.test(url) || !/^https?:\/\/[^/?#]+/i.test(url)) throw new Error(`the plan page's address must be an http or https URL of printable ASCII, not ${JSON.stringify(url)}`);
  const target = url.replace(/[()<>"'`\\]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  if (target.length > PLAN_PAGE_URL_MAX_LENGTH) throw new Error(`the plan page's address must be at most ${PLAN_PAGE_URL_MAX_LENGTH} characters (the room the plan keeps for it), not ${target.length}`);
  return markdown.replaceAll(`](${PLAN_PAGE_PLACEHOLDER})`, `](${target})`);
}

/**
 * linkPlanPage, or the Markdown as it is when `url` is not an address it takes (none, say): links
 * that lead nowhere are no reason to lose the plan.
 * @param {string} markdown
 * @param {string | undefined} url
 */
export function linkPlanPageIfAble(markdown, url) {
  try {
    return url ? linkPlanPage(markdown, url) : markdown;
  } catch {
    return markdown;
  }
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
export function fenced(text) {
  const longest = Math.max(2, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = '`'.repeat(longest + 1);
  return `${fence}text\n${text}\n${fence}\n`;
}

/**
 * @typedef {{ id: number | string, body: string, created_at?: string, updated_at?: string }} Comment  as the forge answers it (both give the times)
 * @typedef {{ login: string, id?: number | string }} Author  who writes the comments: a login, and the account's id when known
 * @typedef {object} CommentThread  one conversation's comments, as one forge serves them
 * @property {string} name                                  for messages: "pull request #7 comments"
 * @property {() => Promise<Author | undefined>} author      the token's identity; undefined when it cannot be told
 * @property {(author: Author) => AsyncGenerator<Comment>} writtenBy  the comments written by `author`, oldest first
 * @property {(body: string) => Promise<Comment>} create
 * @property {(id: Comment['id'], body: string) => Promise<Comment>} update
 */

/**
 * Creates the comment, or updates the oldest one written by the token's own identity that starts
 * with the marker (left alone when its text is already `body`). Nobody else's comment is ever
 * edited: when the identity cannot be told, a new comment is written (`unowned`), and the caller
 * says how to name the identity.
 * @param {CommentThread} thread
 * @param {string} marker
 * @param {string} body
 * @returns {Promise<{ action: 'created' | 'updated' | 'unchanged', id: Comment['id'], unowned?: true }>}
 */
export async function upsertComment(thread, marker, body) {
  const author = await thread.author();
  if (author === undefined) {
    const created = await thread.create(body);
    return { action: 'created', id: created.id, unowned: true };
  }
  for await (const comment of thread.writtenBy(author)) {
    if (typeof comment.body !== 'string' || !comment.body.startsWith(`${marker}\n`)) continue;
    if (comment.body === body) return { action: 'unchanged', id: comment.id };
    const updated = await thread.update(comment.id, body);
    return { action: 'updated', id: updated.id };
  }
  const created = await thread.create(body);
  return { action: 'created', id: created.id };
}

/**
 * Whether an account (a comment's `user`, a note's `author`) is `author`: by id when both have one,
 * else by login (GitHub's are case-insensitive).
 * @param {{ id?: unknown, login?: unknown, username?: unknown } | undefined} account
 * @param {Author} author
 */
export function isAuthor(account, author) {
  if (account === undefined || account === null) return false;
  if (author.id !== undefined && account.id !== undefined) return account.id === author.id;
  const login = account.login ?? account.username;
  return typeof login === 'string' && login.toLowerCase() === author.login.toLowerCase();
}

/** The login that the job's own GITHUB_TOKEN writes as. */
export const GITHUB_ACTIONS_LOGIN = 'github-actions[bot]';

/**
 * @typedef {object} GithubThreadOptions
 * @property {string} apiUrl       GITHUB_API_URL (https://api.github.com, or a GitHub Enterprise Server's)
 * @property {string} [graphqlUrl] GITHUB_GRAPHQL_URL; else derived from apiUrl
 * @property {string} repository   GITHUB_REPOSITORY, owner/name
 * @property {number} number       the pull request's number
 * @property {string} token        a token allowed to write pull requests, already checked (checkToken)
 * @property {boolean} jobToken    whether it is the job's own GITHUB_TOKEN, which writes as github-actions[bot]
 * @property {string} [login]      the login it writes as, when the API cannot tell (the action's comment-author)
 */

/**
 * A pull request's conversation, through GitHub's REST API (issue comments). Ours are those whose
 * author is the token's identity: github-actions[bot] for the job's token; otherwise the user
 * (GET /user) or, for a GitHub App's installation token, which /user refuses, the app's bot
 * (GraphQL `viewer`); otherwise the login given.
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
  const api = options.apiUrl.replace(/\/+$/, '');
  const base = `${api}/repos/${options.repository}/issues`;
  const name = `pull request #${options.number}'s comments`;
  return {
    name,
    author: () => githubAuthor(options, api, headers),
    async *writtenBy(author) {
      const all = readPages(name, `${base}/${options.number}/comments?per_page=100`, headers, 'last');
      for await (const comment of /** @type {AsyncGenerator<Comment & { user?: { id?: number, login?: string } }>} */ (all)) if (isAuthor(comment.user, author)) yield comment;
    },
    create: async (body) => (await requestJson(`POST ${name}`, `${base}/${options.number}/comments`, { method: 'POST', headers, body: JSON.stringify({ body }) })).body,
    update: async (id, body) => (await requestJson(`PATCH ${name}`, `${base}/comments/${id}`, { method: 'PATCH', headers, body: JSON.stringify({ body }) })).body,
  };
}

/**
 * @param {GithubThreadOptions} options
 * @param {string} api
 * @param {Record<string, string>} headers
 * @returns {Promise<Author | undefined>}
 */
export async function githubAuthor(options, api, headers) {
  if (options.jobToken) return { login: GITHUB_ACTIONS_LOGIN };
  try {
    const user = (await requestJson("GET the token's user", `${api}/user`, { headers })).body;
    if (typeof user?.login === 'string') return { login: user.login, id: user.id };
  } catch (err) {
    if (!(err instanceof ForgeApiError) || err.status !== 403 || err.rateLimited) throw err;
  }
  // An installation token: /user is "not accessible by integration", GraphQL's viewer is its bot.
  const graphql = options.graphqlUrl || (api.endsWith('/api/v3') ? `${api.slice(0, -3)}graphql` : `${api}/graphql`);
  try {
    const answer = (await requestJson("GET the token's app", graphql, { method: 'POST', headers, body: JSON.stringify({ query: 'query { viewer { login databaseId } }' }) })).body;
    const viewer = answer?.data?.viewer;
    if (typeof viewer?.login === 'string') return { login: viewer.login, id: viewer.databaseId };
  } catch (err) {
    if (!(err instanceof ForgeApiError) || err.rateLimited || err.status === undefined) throw err;
  }
  return options.login ? { login: options.login } : undefined;
}

/**
 * @typedef {object} GitlabThreadOptions
 * @property {string} apiUrl           CI_API_V4_URL
 * @property {string} projectId        CI_PROJECT_ID
 * @property {string} mergeRequestIid  CI_MERGE_REQUEST_IID
 * @property {string} token            a project or personal access token with the api scope, already checked (checkToken)
 * @property {string} [username]       the user it writes as, when GET /user is refused (ORGFORM_NOTE_AUTHOR)
 */

/**
 * A merge request's notes, through GitLab's REST API. Ours are the notes whose author is the
 * token's user (GET /user; else the username given), never system notes.
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
    author: () => gitlabAuthor(api, headers, options.username),
    async *writtenBy(author) {
      const all = readPages(name, `${notes}?per_page=100&sort=asc&order_by=created_at`, headers, 'count');
      for await (const note of /** @type {AsyncGenerator<Comment & { system?: boolean, author?: { id?: number, username?: string } }>} */ (all)) {
        if (note.system !== true && isAuthor(note.author, author)) yield note;
      }
    },
    create: async (body) => (await requestJson(`POST ${name}`, notes, { method: 'POST', headers, body: JSON.stringify({ body }) })).body,
    update: async (id, body) => (await requestJson(`PUT ${name}`, `${notes}/${id}`, { method: 'PUT', headers, body: JSON.stringify({ body }) })).body,
  };
}

/**
 * The GitLab token's user (GET /user), else the username given (ORGFORM_NOTE_AUTHOR); undefined when neither.
 * @param {string} api
 * @param {Record<string, string>} headers
 * @param {string | undefined} username
 * @returns {Promise<Author | undefined>}
 */
export async function gitlabAuthor(api, headers, username) {
  try {
    const me = (await requestJson("GET the token's user", `${api}/user`, { headers })).body;
    if (typeof me?.username === 'string') return { login: me.username, id: me.id };
  } catch (err) {
    if (!(err instanceof ForgeApiError) || err.status !== 403 || err.rateLimited) throw err;
  }
  return username ? { login: username } : undefined;
}
