// @ts-check
/**
 * How the pipeline scripts talk to GitHub's and GitLab's REST APIs: one request at a time through
 * Node's own fetch, with the token checked before it is used, redirects refused (they would carry
 * the token elsewhere) and named without their secrets, a rate limit called a rate limit, and lists
 * read page by page as the API itself links them, within a bound.
 *
 * Plain Node, no dependencies: the GitHub Action runs it from its checkout, and the GitLab
 * component from the release it downloaded (it ships in the package).
 */

/** At most this many pages of a list are read (100 items each: 10,000 comments or notes). */
export const MAX_PAGES = 100;

/** A request that takes longer than this is given up. */
const TIMEOUT_MS = 30_000;

/** An answer from the forge's API that is not a success, with what it said (never the token). */
export class ForgeApiError extends Error {
  /**
   * @param {string} message
   * @param {{ status?: number, rateLimited?: boolean }} [details]
   */
  constructor(message, details = {}) {
    super(message);
    this.name = 'ForgeApiError';
    this.status = details.status;
    this.rateLimited = details.rateLimited === true;
  }
}

/**
 * The token as fetch will send it: surrounding white space dropped (as a header value's is), and
 * refused, naming the variable and never showing the value, when anything else in it is not a
 * visible ASCII character. A CR or LF would otherwise make fetch throw an error that quotes it.
 * @param {string} name   the variable or input it came from, for the message
 * @param {string} value
 * @returns {string}
 */
export function checkToken(name, value) {
  const token = value.replace(/^[\t\n\r ]+|[\t\n\r ]+$/g, '');
  const bad = /[^\x21-\x7e]/.exec(token);
  if (bad !== null) {
    const code = bad[0].codePointAt(0) ?? 0;
    const kind = code < 0x20 || code === 0x7f ? 'a control character' : code === 0x20 ? 'a space' : 'a character outside ASCII';
    throw new ForgeApiError(`${name} holds ${kind} (U+${code.toString(16).toUpperCase().padStart(4, '0')}), so it cannot be sent as a header and was not used. Set it again without it (its value is not shown)`);
  }
  return token;
}

/** `message` ended with a full stop, unless it ends with one already (or a question). @param {string} message */
export function asSentence(message) {
  return /[.?!]$/.test(message) ? message : `${message}.`;
}

/**
 * An address fit to print: no user info, every query value hidden, no fragment. A redirect's
 * target may hold a token in any of these (`?private_token=`, `?X-Amz-Signature=`).
 * @param {string} address
 */
export function redactAddress(address) {
  let url;
  try {
    url = new URL(address);
  } catch {
    return '(an address that is not a URL)';
  }
  const user = url.username !== '' || url.password !== '' ? '***@' : '';
  const query = [...url.searchParams.keys()].map((key) => `${encodeURIComponent(key)}=***`).join('&');
  return `${url.protocol}//${user}${url.host}${url.pathname}${query === '' ? '' : `?${query}`}`;
}

/**
 * One request; the answer's JSON and headers back.
 * @param {string} what  "METHOD thing", for messages
 * @param {string} url
 * @param {RequestInit & { headers: Record<string, string> }} init
 * @returns {Promise<{ body: any, headers: Headers }>}
 */
export async function requestJson(what, url, init) {
  let res;
  try {
    res = await fetch(url, { ...init, redirect: 'manual', signal: AbortSignal.timeout(TIMEOUT_MS) });
  } catch (err) {
    const cause = /** @type {{ cause?: { message?: string } }} */ (err).cause;
    throw new ForgeApiError(`${what}: ${cause?.message ?? /** @type {Error} */ (err).message}`);
  }
  const text = await res.text();
  if (res.status >= 300 && res.status < 400) {
    const location = res.headers.get('location');
    const target = location === null ? 'nowhere' : redactAddress(new URL(location, url).href);
    throw new ForgeApiError(`${what}: HTTP ${res.status}, redirected to ${target}, which is not followed (it would take the token elsewhere): is the API address right?`, { status: res.status });
  }
  if (!res.ok) throw answerError(what, res.status, res.headers, text);
  try {
    return { body: text === '' ? null : JSON.parse(text), headers: res.headers };
  } catch {
    throw new ForgeApiError(`${what}: HTTP ${res.status}, but the answer is not JSON: is the API address right?`, { status: res.status });
  }
}

/**
 * The error for a refusal: its status and the API's message, and for a rate limit (GitHub's 403
 * with no requests left or a "secondary rate limit", any 429) when to try again.
 * @param {string} what
 * @param {number} status
 * @param {Headers} headers
 * @param {string} text
 */
function answerError(what, status, headers, text) {
  let detail = text.slice(0, 300);
  try {
    const message = JSON.parse(text).message;
    if (typeof message === 'string') detail = message;
  } catch {
    // not JSON: the start of the text is the detail
  }
  detail = detail.replace(/\s+/g, ' ').trim();
  const said = `HTTP ${status}${detail === '' ? '' : ` (${detail})`}`;
  const rateLimited = status === 429 || (status === 403 && (headers.get('x-ratelimit-remaining') === '0' || /rate limit/i.test(detail)));
  if (!rateLimited) return new ForgeApiError(`${what}: ${said}`, { status });
  return new ForgeApiError(`${what}: rate limited, ${said}; ${retryWhen(headers)}`, { status, rateLimited: true });
}

/** @param {Headers} headers */
function retryWhen(headers) {
  const after = Number(headers.get('retry-after'));
  if (headers.get('retry-after') !== null && Number.isFinite(after)) return `try again in ${Math.ceil(after)} s`;
  const reset = Number(headers.get('x-ratelimit-reset') ?? headers.get('ratelimit-reset'));
  if (reset > 0) return `the limit resets at ${new Date(reset * 1000).toISOString().replace(/\.\d+Z$/, 'Z')}`;
  return 'try again later';
}

/**
 * The address of the page after this one, as the API says: the Link header's rel="next" (GitHub,
 * GitLab), else GitLab's x-next-page (empty on the last page); undefined when the answer says
 * there is none, null when it says nothing either way (a proxy that drops headers).
 * @param {Headers} headers
 * @param {string} url  this page's address
 * @returns {string | undefined | null}
 */
export function nextPageAddress(headers, url) {
  const link = headers.get('link');
  if (link !== null) {
    const next = /<([^>]+)>\s*;[^,]*\brel="?next"?/.exec(link);
    return next === null ? undefined : new URL(next[1] ?? '', url).href;
  }
  const nextPage = headers.get('x-next-page');
  if (nextPage !== null) {
    if (!/^\d+$/.test(nextPage.trim())) return undefined;
    const following = new URL(url);
    following.searchParams.set('page', nextPage.trim());
    return following.href;
  }
  return null;
}

/**
 * Every item of a list, page after page as the API links them. A page whose items were all seen
 * before ends the list (an API or proxy that ignores `page` serves the first page again); a link
 * to another origin is not followed (the token would go with it); and after
 * MAX_PAGES it gives up with an error rather than act on part of the list.
 *
 * Without any link at all, `unlinked` says what that means: 'last' (GitHub sends no Link header
 * when everything fits on one page) or 'count' (GitLab always sends x-next-page, so headers were
 * dropped on the way: the page number is counted on until an empty page, since a short page may
 * come before the last).
 * @template {{ id: number | string }} T
 * @param {string} what
 * @param {string} firstUrl
 * @param {Record<string, string>} headers
 * @param {'last' | 'count'} unlinked
 * @returns {AsyncGenerator<T>}
 */
export async function* readPages(what, firstUrl, headers, unlinked) {
  const origin = new URL(firstUrl).origin;
  const seen = new Set();
  let url = firstUrl;
  for (let page = 1; page <= MAX_PAGES; page += 1) {
    const { body, headers: answer } = await requestJson(`GET ${what}`, url, { headers });
    if (!Array.isArray(body)) throw new ForgeApiError(`GET ${what}: the answer is not a list: is the API address right?`);
    const fresh = /** @type {T[]} */ (body).filter((item) => !seen.has(item?.id));
    for (const item of fresh) seen.add(item.id);
    yield* fresh;
    const next = nextPageAddress(answer, url);
    if (next === undefined || fresh.length === 0 || (next === null && unlinked === 'last')) return;
    if (next !== null && new URL(next).origin !== origin) throw new ForgeApiError(`GET ${what}: the next page is on another server (${redactAddress(next)}), which is not followed (it would take the token elsewhere)`);
    url = next ?? withPage(url, page + 1);
  }
  throw new ForgeApiError(`GET ${what}: more than ${MAX_PAGES} pages; gave up rather than read part of the list`);
}

/** @param {string} url @param {number} page */
function withPage(url, page) {
  const following = new URL(url);
  following.searchParams.set('page', String(page));
  return following.href;
}
