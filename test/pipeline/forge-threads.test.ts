/**
 * The comment and the note are only ever ours: pipeline/sticky-comment.mjs's threads against
 * GitHub's and GitLab's APIs played by nock (which intercepts the global fetch these scripts use),
 * including the answers a real API or a proxy in front of it may give: another bot's comment with
 * the marker, pages linked or not, a page that ignores `page`, a short page before the last, a
 * link to another server, rate limits and redirects.
 */
import nock from 'nock';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { MAX_PAGES } from '../../pipeline/forge-api.mjs';
import { commentMarker, githubThread, gitlabThread, upsertComment } from '../../pipeline/sticky-comment.mjs';

const GITHUB = 'https://api.github.test';
const GITLAB = 'https://gitlab.test';
const LIST = '/repos/acme/config/issues/7/comments';
const NOTES = '/api/v4/projects/42/merge_requests/7/notes';
const MARKER = commentMarker('');
const BODY = `${MARKER}\nthe plan`;

beforeAll(() => nock.disableNetConnect());
afterEach(() => nock.cleanAll());
afterAll(() => {
  nock.enableNetConnect();
  nock.restore();
});

type Account = { id: number; login: string; type: string };
const ACTIONS: Account = { id: 41898282, login: 'github-actions[bot]', type: 'Bot' };
const RENOVATE: Account = { id: 29139614, login: 'renovate[bot]', type: 'Bot' };
const comment = (id: number, user: Account, body = `comment ${id}`) => ({ id, user, body });

function github(options: { jobToken?: boolean; login?: string } = {}) {
  return githubThread({ apiUrl: GITHUB, repository: 'acme/config', number: 7, token: 'ghs_token', jobToken: options.jobToken ?? true, ...(options.login ? { login: options.login } : {}) });
}

/** Records the PATCHes and POSTs the fake GitHub is sent. */
function githubWrites(scope: nock.Scope): string[] {
  const writes: string[] = [];
  scope
    .patch(/\/repos\/acme\/config\/issues\/comments\/\d+$/)
    .optionally()
    .times(5)
    .reply(200, (uri, body) => {
      writes.push(`PATCH ${uri.split('/').at(-1)}`);
      return { id: Number(uri.split('/').at(-1)), body: (body as { body: string }).body };
    })
    .post(LIST)
    .optionally()
    .times(5)
    .reply(201, () => {
      writes.push('POST');
      return { id: 999, body: BODY };
    });
  return writes;
}

describe('the GitHub comment', () => {
  it('with the job’s token, is found among github-actions[bot]’s comments only: renovate[bot]’s comment with the marker is never edited', async () => {
    const scope = nock(GITHUB, { reqheaders: { authorization: 'Bearer ghs_token' } })
      .get(LIST)
      .query({ per_page: '100' })
      .reply(200, [comment(1, RENOVATE, `${MARKER}\nrenovate's text`), comment(2, ACTIONS, `${MARKER}\nold plan`)]);
    const writes = githubWrites(scope);
    expect(await upsertComment(github(), MARKER, BODY)).toEqual({ action: 'updated', id: 2 });
    expect(writes).toEqual(['PATCH 2']);
  });

  it('when only another bot carries the marker, writes a new comment and leaves that one alone', async () => {
    const scope = nock(GITHUB).get(LIST).query(true).reply(200, [comment(1, RENOVATE, `${MARKER}\nrenovate's text`)]);
    const writes = githubWrites(scope);
    expect(await upsertComment(github(), MARKER, BODY)).toEqual({ action: 'created', id: 999 });
    expect(writes).toEqual(['POST']);
  });

  it('with a personal token, is found among its user’s comments (GET /user), by id', async () => {
    const me = { id: 5, login: 'ops-bot', type: 'User' };
    const scope = nock(GITHUB)
      .get('/user')
      .reply(200, me)
      .get(LIST)
      .query(true)
      .reply(200, [comment(1, ACTIONS, `${MARKER}\nthe job token's`), comment(2, { ...me, login: 'renamed' }, `${MARKER}\nmine`)]);
    const writes = githubWrites(scope);
    expect(await upsertComment(github({ jobToken: false }), MARKER, BODY)).toEqual({ action: 'updated', id: 2 });
    expect(writes).toEqual(['PATCH 2']);
  });

  it('with a GitHub App’s installation token, which /user refuses, is found among its bot’s comments (GraphQL viewer)', async () => {
    const app = { id: 77, login: 'orgform-app[bot]', type: 'Bot' };
    const scope = nock(GITHUB)
      .get('/user')
      .reply(403, { message: 'Resource not accessible by integration' })
      .post('/graphql', (body: { query: string }) => body.query.includes('viewer'))
      .reply(200, { data: { viewer: { login: app.login, databaseId: app.id } } })
      .get(LIST)
      .query(true)
      .reply(200, [comment(1, RENOVATE, `${MARKER}\nx`), comment(2, ACTIONS, `${MARKER}\ny`), comment(3, app, `${MARKER}\nz`)]);
    const writes = githubWrites(scope);
    expect(await upsertComment(github({ jobToken: false }), MARKER, BODY)).toEqual({ action: 'updated', id: 3 });
    expect(writes).toEqual(['PATCH 3']);
  });

  it('when the token cannot tell whose it is, takes the login given; without one, writes a new comment and edits none', async () => {
    const refusing = () =>
      nock(GITHUB).get('/user').reply(403, { message: 'Resource not accessible by integration' }).post('/graphql').reply(403, { message: 'Forbidden' });
    const app = { id: 77, login: 'orgform-app[bot]', type: 'Bot' };
    const listed = [comment(1, RENOVATE, `${MARKER}\nx`), comment(3, app, `${MARKER}\nz`)];

    const named = refusing().get(LIST).query(true).reply(200, listed);
    const namedWrites = githubWrites(named);
    expect(await upsertComment(github({ jobToken: false, login: 'Orgform-App[bot]' }), MARKER, BODY)).toEqual({ action: 'updated', id: 3 });
    expect(namedWrites).toEqual(['PATCH 3']);

    nock.cleanAll();
    const unnamed = refusing();
    const unnamedWrites = githubWrites(unnamed);
    expect(await upsertComment(github({ jobToken: false }), MARKER, BODY)).toEqual({ action: 'created', id: 999, unowned: true });
    expect(unnamedWrites).toEqual(['POST']);
  });

  it('follows the Link header’s next page, past a short page, to find its comment', async () => {
    const pages = [
      [comment(1, RENOVATE)],
      Array.from({ length: 100 }, (_, i) => comment(100 + i, RENOVATE)),
      [comment(300, ACTIONS, `${MARKER}\nold`)],
    ];
    const scope = nock(GITHUB);
    pages.forEach((items, i) => {
      const link: Record<string, string> = i < pages.length - 1 ? { link: `<${GITHUB}${LIST}?per_page=100&page=${i + 2}>; rel="next", <${GITHUB}${LIST}?per_page=100&page=3>; rel="last"` } : {};
      scope.get(LIST).query(i === 0 ? { per_page: '100' } : { per_page: '100', page: String(i + 1) }).reply(200, items, link);
    });
    const writes = githubWrites(scope);
    expect(await upsertComment(github(), MARKER, BODY)).toEqual({ action: 'updated', id: 300 });
    expect(writes).toEqual(['PATCH 300']);
    expect(scope.pendingMocks().filter((m) => m.startsWith('GET'))).toEqual([]);
  });

  /** A list that always links a next page, each read answered by `page(n)`: the reads counted. */
  function endlessList(page: (n: number) => unknown[]) {
    const reads = { count: 0 };
    const scope = nock(GITHUB)
      .get(LIST)
      .query(true)
      .times(MAX_PAGES + 1)
      .optionally()
      .reply(() => {
        reads.count += 1;
        return [200, page(reads.count), { link: `<${GITHUB}${LIST}?per_page=100&page=${reads.count + 1}>; rel="next"` }];
      });
    return { reads, writes: githubWrites(scope) };
  }

  it('stops when the API ignores `page` and serves the first page again: two reads, one new comment', async () => {
    const first = Array.from({ length: 100 }, (_, i) => comment(i + 1, RENOVATE));
    const { reads, writes } = endlessList(() => first);
    expect(await upsertComment(github(), MARKER, BODY)).toEqual({ action: 'created', id: 999 });
    expect(reads.count).toBe(2);
    expect(writes).toEqual(['POST']);
  });

  it('gives up after MAX_PAGES pages that keep coming, and writes nothing', async () => {
    const { reads, writes } = endlessList((n) => [comment(n, RENOVATE)]);
    await expect(upsertComment(github(), MARKER, BODY)).rejects.toThrow(`more than ${MAX_PAGES} pages; gave up rather than read part of the list`);
    expect(reads.count).toBe(MAX_PAGES);
    expect(writes).toEqual([]);
  });

  it('never follows a next page on another server, where the token would go along', async () => {
    let stolen = 0;
    nock('https://elsewhere.test').get(/.*/).optionally().reply(() => (stolen += 1, [200, []]));
    nock(GITHUB).get(LIST).query(true).reply(200, [comment(1, RENOVATE)], { link: '<https://elsewhere.test/steal?token=x>; rel="next"' });
    await expect(upsertComment(github(), MARKER, BODY)).rejects.toThrow('the next page is on another server (https://elsewhere.test/steal?token=***), which is not followed');
    expect(stolen).toBe(0);
  });

  it('calls a 403 with no requests left, or a secondary rate limit, a rate limit, with when to try again; a 403 of rights is not one', async () => {
    nock(GITHUB).get(LIST).query(true).reply(403, { message: 'API rate limit exceeded for installation ID 1.' }, { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '1767225600' });
    await expect(upsertComment(github(), MARKER, BODY)).rejects.toMatchObject({
      rateLimited: true,
      message: expect.stringContaining("GET pull request #7's comments: rate limited, HTTP 403 (API rate limit exceeded for installation ID 1.); the limit resets at 2026-01-01T00:00:00Z"),
    });
    nock(GITHUB).get(LIST).query(true).reply(403, { message: 'You have exceeded a secondary rate limit. Please wait a few minutes before you try again.' }, { 'retry-after': '60' });
    await expect(upsertComment(github(), MARKER, BODY)).rejects.toMatchObject({ rateLimited: true, message: expect.stringContaining('try again in 60 s') });
    nock(GITHUB).get(LIST).query(true).reply(200, []).post(LIST).reply(403, { message: 'Resource not accessible by integration' }, { 'x-ratelimit-remaining': '4999' });
    await expect(upsertComment(github(), MARKER, BODY)).rejects.toMatchObject({ rateLimited: false, status: 403 });
  });

  it('does not follow a redirect, and names its target without user info or query values', async () => {
    nock(GITHUB).get(LIST).query(true).reply(301, '', { location: 'https://user:hunter2@proxy.test/login?private_token=glpat-SECRET&next=%2Fx' });
    const failure = await upsertComment(github(), MARKER, BODY).catch((err: Error) => err.message);
    expect(failure).toContain('HTTP 301, redirected to https://***@proxy.test/login?private_token=***&next=***, which is not followed');
    expect(failure).not.toMatch(/hunter2|glpat-SECRET|user:/);
  });
});

describe('the GitLab note', () => {
  const me = { id: 9, username: 'project_42_bot_1' };
  const note = (id: number, author: { id: number; username: string }, body = `note ${id}`, system = false) => ({ id, author, body, system });
  const other = { id: 3, username: 'mallory' };

  function gitlab(username?: string) {
    return gitlabThread({ apiUrl: `${GITLAB}/api/v4`, projectId: '42', mergeRequestIid: '7', token: 'glpat-note', ...(username ? { username } : {}) });
  }

  function gitlabWrites(scope: nock.Scope): string[] {
    const writes: string[] = [];
    scope
      .put(new RegExp(`^${NOTES}/\\d+$`))
      .optionally()
      .reply(200, (uri) => (writes.push(`PUT ${uri.split('/').at(-1)}`), { id: Number(uri.split('/').at(-1)) }))
      .post(NOTES)
      .optionally()
      .reply(201, () => (writes.push('POST'), { id: 500 }));
    return writes;
  }

  it('is found among the token’s user’s notes: another user’s note and a system note with the marker are left alone', async () => {
    const scope = nock(GITLAB, { reqheaders: { 'private-token': 'glpat-note' } })
      .get('/api/v4/user')
      .reply(200, me)
      .get(NOTES)
      .query(true)
      .reply(200, [note(1, other, `${MARKER}\nplanted`), note(2, me, `${MARKER}\nsystem`, true), note(3, me, `${MARKER}\nold`)], { 'x-next-page': '', 'x-total-pages': '1' });
    const writes = gitlabWrites(scope);
    expect(await upsertComment(gitlab(), MARKER, BODY)).toEqual({ action: 'updated', id: 3 });
    expect(writes).toEqual(['PUT 3']);
  });

  it('follows x-next-page, and stops when a proxy ignores `page` and keeps saying there is a next one', async () => {
    let reads = 0;
    const scope = nock(GITLAB)
      .get('/api/v4/user')
      .reply(200, me)
      .get(NOTES)
      .query(true)
      .times(MAX_PAGES)
      .optionally()
      .reply(() => {
        reads += 1;
        return [200, Array.from({ length: 100 }, (_, i) => note(i + 1, other)), { 'x-next-page': '2', 'x-total-pages': '2' }];
      });
    const writes = gitlabWrites(scope);
    expect(await upsertComment(gitlab(), MARKER, BODY)).toEqual({ action: 'created', id: 500 });
    expect(reads).toBe(2);
    expect(writes).toEqual(['POST']);
  });

  it('with its paging headers dropped on the way, counts pages past a short one until an empty page, and finds its note', async () => {
    const scope = nock(GITLAB)
      .get('/api/v4/user')
      .reply(200, me)
      .get(NOTES)
      .query((q) => q.page === undefined)
      .reply(200, [note(1, other)])
      .get(NOTES)
      .query({ per_page: '100', sort: 'asc', order_by: 'created_at', page: '2' })
      .reply(200, [note(2, me, `${MARKER}\nold`)]);
    const writes = gitlabWrites(scope);
    expect(await upsertComment(gitlab(), MARKER, BODY)).toEqual({ action: 'updated', id: 2 });
    expect(writes).toEqual(['PUT 2']);
  });

  it('when GET /user is refused, takes ORGFORM_NOTE_AUTHOR’s username; without it writes a new note and edits none', async () => {
    const listed = [note(1, other, `${MARKER}\nplanted`), note(2, me, `${MARKER}\nold`)];
    const named = nock(GITLAB).get('/api/v4/user').reply(403, { message: '403 Forbidden' }).get(NOTES).query(true).reply(200, listed, { 'x-next-page': '' });
    const namedWrites = gitlabWrites(named);
    expect(await upsertComment(gitlab(me.username), MARKER, BODY)).toEqual({ action: 'updated', id: 2 });
    expect(namedWrites).toEqual(['PUT 2']);

    nock.cleanAll();
    const unnamed = nock(GITLAB).get('/api/v4/user').reply(403, { message: '403 Forbidden' });
    const unnamedWrites = gitlabWrites(unnamed);
    expect(await upsertComment(gitlab(), MARKER, BODY)).toEqual({ action: 'created', id: 500, unowned: true });
    expect(unnamedWrites).toEqual(['POST']);
  });

  it('calls a 429 a rate limit, with when it resets', async () => {
    nock(GITLAB).get('/api/v4/user').reply(429, { message: 'Retry later' }, { 'ratelimit-reset': '1767225600' });
    await expect(upsertComment(gitlab(), MARKER, BODY)).rejects.toMatchObject({ rateLimited: true, message: expect.stringContaining('rate limited, HTTP 429 (Retry later); the limit resets at 2026-01-01T00:00:00Z') });
  });
});
