/**
 * Fakes of the two forges' APIs on 127.0.0.1, as much of them as orgform's pipelines use:
 * GitHub's issue comments (list by page, create, update; github-actions[bot] writes them), the pull
 * requests of a commit, the commit a branch points at and the files changed between two commits, and the repository's issues (list open ones by page, create, update, comment,
 * close); GitLab's merge request notes (the token's user, list by page, create, update), the merge
 * requests of a commit, the commit a branch points at and the files changed between two commits, the project's issues (list by page, create, update, note, close) and its
 * managed Terraform state (Terraform's HTTP backend as GitLab serves it: GET, POST ?ID= with a JSON
 * body holding an integer `serial`, POST and DELETE …/lock answering 409 with the holder, basic auth
 * as gitlab-ci-token with the job token). Each records the requests it was sent and checks the
 * token, and can be told to refuse writes (a read-only token).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeComment {
  id: number;
  body: string;
  /** GitHub: 'Bot' (github-actions[bot]), 'User', or another bot's login. GitLab: author.id. */
  author: string | number;
  system?: boolean;
  /** When it was written and last changed (ISO 8601), as both forges answer them: a comment seeded without them was written long ago. */
  createdAt?: string;
  updatedAt?: string;
}

/** When a seeded comment without times was written: before anything a test does. */
const LONG_AGO = '2020-01-01T00:00:00.000Z';
const times = (c: FakeComment) => ({ created_at: c.createdAt ?? LONG_AGO, updated_at: c.updatedAt ?? c.createdAt ?? LONG_AGO });
const stamp = (): Pick<FakeComment, 'createdAt' | 'updatedAt'> => {
  const now = new Date().toISOString();
  return { createdAt: now, updatedAt: now };
};

/** An issue; `author` as a comment's. */
export interface FakeIssue {
  number: number;
  title: string;
  body: string;
  state: 'open' | 'closed';
  author: string | number;
  /** The notes or comments written on it, in order. */
  notes: string[];
}

export interface FakeForge {
  url: string;
  comments: FakeComment[];
  /** The repository's or project's issues. */
  issues: FakeIssue[];
  /**
   * The pull requests (GitHub: `{ number, merged_at, merge_commit_sha, base: { ref } }`) or merge
   * requests (GitLab: `{ iid, state, merge_commit_sha, squash_commit_sha, sha, target_branch }`)
   * of each commit, by its SHA, as the API answers them.
   */
  pullsOf: Map<string, Array<Record<string, unknown>>>;
  /** The commit each branch points at now, by the branch's name; a branch not in it is not found (404). */
  heads: Map<string, string>;
  /** The files changed between two commits, by `FROM...TO` (GitHub's compare, GitLab's); a pair not in it is not found (404). */
  changes: Map<string, string[]>;
  /** GitLab's Terraform states by name: the stored text, and the lock's ID when locked. */
  states: Map<string, { text?: string; lock?: { ID: string } & Record<string, unknown> }>;
  /** `METHOD /path?query` of every request, in order. */
  requests: string[];
  /** When true, writes answer 403 (GitHub's read-only token on a fork's pull request). */
  readOnly: boolean;
  close(): Promise<void>;
}

type Handler = (req: IncomingMessage, url: URL, body: string, reply: (status: number, value: unknown, headers?: Record<string, string>) => void) => void;

async function listen(handler: Handler, state: Omit<FakeForge, 'url' | 'close'>): Promise<FakeForge> {
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      state.requests.push(`${req.method} ${req.url}`);
      const reply = (status: number, value: unknown, headers: Record<string, string> = {}) =>
        status === 204 ? res.writeHead(204).end() : res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(value));
      handler(req, new URL(req.url ?? '/', 'http://fake'), body, reply);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const fake = state as FakeForge;
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  fake.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return fake;
}

/** One page of `items`, with the paging headers both forges send: Link's rel="next" (none on the last page), and GitLab's x-next-page and x-total-pages. */
function page<T>(items: T[], url: URL, base: string): [T[], Record<string, string>] {
  const perPage = Number(url.searchParams.get('per_page') ?? 30);
  const n = Number(url.searchParams.get('page') ?? 1);
  const pages = Math.max(1, Math.ceil(items.length / perPage));
  const next = new URL(url.pathname + url.search, base);
  next.searchParams.set('page', String(n + 1));
  const headers: Record<string, string> = { 'x-next-page': n < pages ? String(n + 1) : '', 'x-total-pages': String(pages) };
  if (n < pages) headers.link = `<${next.href}>; rel="next"`;
  return [items.slice((n - 1) * perPage, n * perPage), headers];
}

/** GitHub's REST API for pull request `number` of `repository`, answering `token` only. */
export async function startFakeGithub(options: { repository: string; number: number; token: string; comments?: FakeComment[] }): Promise<FakeForge> {
  const state = { comments: options.comments ?? [], issues: [] as FakeIssue[], pullsOf: new Map(), heads: new Map(), changes: new Map(), states: new Map(), requests: [] as string[], readOnly: false };
  const list = `/repos/${options.repository}/issues/${options.number}/comments`;
  const one = new RegExp(`^/repos/${options.repository}/issues/comments/(\\d+)$`);
  const pulls = new RegExp(`^/repos/${options.repository}/commits/([^/]+)/pulls$`);
  const ref = new RegExp(`^/repos/${options.repository}/git/ref/heads/(.+)$`);
  const compare = new RegExp(`^/repos/${options.repository}/compare/([^/]+)$`);
  // author 'Bot' is github-actions[bot] (the job's token), 'User' someone; any other string is that bot's login.
  const user = (author: string | number) => ({ login: author === 'Bot' ? 'github-actions[bot]' : author === 'User' ? 'someone' : String(author), type: author === 'User' ? 'User' : 'Bot' });
  const show = (c: FakeComment) => ({ id: c.id, body: c.body, user: user(c.author), ...times(c) });
  const issues = githubIssues(options.repository, state, user);
  return listen((req, url, body, reply) => {
    if (req.headers.authorization !== `Bearer ${options.token}`) return reply(401, { message: 'Bad credentials' });
    const commit = pulls.exec(url.pathname);
    if (req.method === 'GET' && commit) return reply(200, state.pullsOf.get(decodeURIComponent(commit[1]!)) ?? []);
    const branch = ref.exec(url.pathname);
    if (req.method === 'GET' && branch) {
      const name = branch[1]!.split('/').map(decodeURIComponent).join('/');
      const sha = state.heads.get(name);
      return sha === undefined ? reply(404, { message: 'Not Found' }) : reply(200, { ref: `refs/heads/${name}`, object: { sha, type: 'commit' } });
    }
    const range = compare.exec(url.pathname);
    if (req.method === 'GET' && range) {
      const files: string[] | undefined = state.changes.get(decodeURIComponent(range[1]!));
      return files === undefined ? reply(404, { message: 'Not Found' }) : reply(200, { status: files.length === 0 ? 'identical' : 'ahead', files: files.map((filename) => ({ filename, status: 'modified' })) });
    }
    if (issues(req.method ?? 'GET', url, body, reply, `http://${req.headers.host}`)) return;
    if (req.method === 'GET' && url.pathname === list) {
      const [items, headers] = page(state.comments, url, `http://${req.headers.host}`);
      return reply(200, items.map(show), headers);
    }
    if (req.method !== 'GET' && state.readOnly) return reply(403, { message: 'Resource not accessible by integration' });
    if (req.method === 'POST' && url.pathname === list) {
      const comment = { id: 1000 + state.comments.length, body: JSON.parse(body).body as string, author: 'Bot', ...stamp() };
      state.comments.push(comment);
      return reply(201, show(comment));
    }
    const match = one.exec(url.pathname);
    const comment = state.comments.find((c) => match !== null && c.id === Number(match[1]));
    if (req.method === 'PATCH' && comment) {
      comment.body = JSON.parse(body).body;
      comment.updatedAt = new Date().toISOString();
      return reply(200, show(comment));
    }
    return reply(404, { message: 'Not Found' });
  }, state);
}

/**
 * GitLab's REST API (under /api/v4) for merge request `iid` of project `projectId`: notes with the
 * access token `token`, whose user has id `userId`; Terraform states with `jobToken`.
 */
export async function startFakeGitlab(options: { projectId: string; iid: string; token: string; userId: number; jobToken: string; comments?: FakeComment[] }): Promise<FakeForge> {
  const state = { comments: options.comments ?? [], issues: [] as FakeIssue[], pullsOf: new Map(), heads: new Map(), changes: new Map(), states: new Map(), requests: [] as string[], readOnly: false };
  const commitRequests = new RegExp(`^/api/v4/projects/${options.projectId}/repository/commits/([^/]+)/merge_requests$`);
  const branches = new RegExp(`^/api/v4/projects/${options.projectId}/repository/branches/([^/]+)$`);
  const issues = gitlabIssues(options.projectId, options.userId, state);
  const notes = `/api/v4/projects/${options.projectId}/merge_requests/${options.iid}/notes`;
  const terraform = new RegExp(`^/api/v4/projects/${options.projectId}/terraform/state/([^/]+)(/lock)?$`);
  const jobAuth = `Basic ${Buffer.from(`gitlab-ci-token:${options.jobToken}`).toString('base64')}`;
  const show = (c: FakeComment) => ({ id: c.id, body: c.body, system: c.system ?? false, author: { id: c.author, username: c.author === options.userId ? 'project_42_bot' : `user_${c.author}` }, ...times(c) });
  return listen((req, url, body, reply) => {
    const tf = terraform.exec(url.pathname);
    if (tf) {
      if (req.headers.authorization !== jobAuth) return reply(401, { message: '401 Unauthorized' });
      const name = decodeURIComponent(tf[1]!);
      const held = state.states.get(name) ?? {};
      if (tf[2] === '/lock') {
        if (req.method === 'POST') {
          if (held.lock) return reply(409, held.lock);
          state.states.set(name, { ...held, lock: JSON.parse(body) });
          return reply(200, JSON.parse(body));
        }
        if (req.method === 'DELETE') {
          const id = url.searchParams.get('ID') ?? (body === '' ? undefined : JSON.parse(body).ID);
          if (held.lock && id !== undefined && id !== held.lock.ID) return reply(409, held.lock);
          state.states.set(name, { ...held, lock: undefined });
          return reply(200, {});
        }
      }
      if (req.method === 'GET') {
        if (!state.states.has(name)) return reply(404, { message: '404 Not Found' });
        if (held.text === undefined) return reply(204, undefined);
        return reply(200, JSON.parse(held.text));
      }
      if (req.method === 'POST') {
        if (held.lock && url.searchParams.get('ID') !== held.lock.ID) return reply(409, held.lock);
        if (body === '') return reply(204, undefined);
        let parsed: { serial?: unknown };
        try {
          parsed = JSON.parse(body);
        } catch {
          return reply(422, { message: 'invalid JSON' });
        }
        if (!Number.isInteger(parsed.serial)) return reply(422, { message: 'No serial in payload' });
        state.states.set(name, { ...held, text: body });
        return reply(200, {});
      }
      return reply(405, { message: '405 Method Not Allowed' });
    }
    if (req.headers['private-token'] !== options.token) return reply(401, { message: '401 Unauthorized' });
    if (req.method === 'GET' && url.pathname === '/api/v4/user') return reply(200, { id: options.userId, username: 'project_42_bot' });
    const commit = commitRequests.exec(url.pathname);
    if (req.method === 'GET' && commit) return reply(200, state.pullsOf.get(decodeURIComponent(commit[1]!)) ?? []);
    const branch = branches.exec(url.pathname);
    if (req.method === 'GET' && branch) {
      const name = decodeURIComponent(branch[1]!);
      const sha = state.heads.get(name);
      return sha === undefined ? reply(404, { message: '404 Branch Not Found' }) : reply(200, { name, commit: { id: sha } });
    }
    if (req.method === 'GET' && url.pathname === `/api/v4/projects/${options.projectId}/repository/compare`) {
      const files: string[] | undefined = state.changes.get(`${url.searchParams.get('from')}...${url.searchParams.get('to')}`);
      return files === undefined ? reply(404, { message: '404 Not Found' }) : reply(200, { commits: [], diffs: files.map((path) => ({ old_path: path, new_path: path })), compare_timeout: false });
    }
    if (issues(req.method ?? 'GET', url, body, reply, `http://${req.headers.host}`)) return;
    if (req.method === 'GET' && url.pathname === notes) {
      const [items, headers] = page(state.comments, url, `http://${req.headers.host}`);
      return reply(200, items.map(show), headers);
    }
    if (req.method !== 'GET' && state.readOnly) return reply(403, { message: '403 Forbidden' });
    if (req.method === 'POST' && url.pathname === notes) {
      const note = { id: 100 + state.comments.length, body: JSON.parse(body).body as string, author: options.userId, ...stamp() };
      state.comments.push(note);
      return reply(201, show(note));
    }
    const note = state.comments.find((c) => url.pathname === `${notes}/${c.id}`);
    if (req.method === 'PUT' && note) {
      note.body = JSON.parse(body).body;
      note.updatedAt = new Date().toISOString();
      return reply(200, show(note));
    }
    return reply(404, { message: '404 Not Found' });
  }, state);
}

type Reply = (status: number, value: unknown, headers?: Record<string, string>) => void;

/** GitHub's issues of `repository`: open ones listed by page (pull requests none), created, edited, commented on and closed. */
function githubIssues(repository: string, state: { issues: FakeIssue[]; readOnly: boolean }, user: (author: string | number) => unknown) {
  const base = `/repos/${repository}/issues`;
  const one = new RegExp(`^${base}/(\\d+)(/comments)?$`);
  const show = (i: FakeIssue) => ({ id: 5000 + i.number, number: i.number, title: i.title, body: i.body, state: i.state, user: user(i.author) });
  return (method: string, url: URL, body: string, reply: Reply, origin: string): boolean => {
    if (method === 'GET' && url.pathname === base) {
      const open = state.issues.filter((i) => url.searchParams.get('state') !== 'open' || i.state === 'open');
      const [items, headers] = page(open, url, origin);
      reply(200, items.map(show), headers);
      return true;
    }
    const match = one.exec(url.pathname);
    if (method === 'POST' && url.pathname === base) {
      if (state.readOnly) return (reply(403, { message: 'Resource not accessible by integration' }), true);
      const { title, body: text } = JSON.parse(body) as { title: string; body: string };
      const issue: FakeIssue = { number: state.issues.length + 1, title, body: text, state: 'open', author: 'Bot', notes: [] };
      state.issues.push(issue);
      reply(201, show(issue));
      return true;
    }
    const issue = match === null ? undefined : state.issues.find((i) => i.number === Number(match[1]));
    if (issue === undefined || match === null) return false;
    if (method === 'POST' && match[2] === '/comments') {
      issue.notes.push((JSON.parse(body) as { body: string }).body);
      reply(201, { id: 1, body: '' });
      return true;
    }
    if (method === 'PATCH' && match[2] === undefined) {
      const change = JSON.parse(body) as Partial<{ title: string; body: string; state: 'open' | 'closed' }>;
      Object.assign(issue, change);
      reply(200, show(issue));
      return true;
    }
    return false;
  };
}

/** GitLab's issues of project `projectId`: opened ones listed by page (filtered by author_id), created, edited, noted and closed. */
function gitlabIssues(projectId: string, userId: number, state: { issues: FakeIssue[] }) {
  const base = `/api/v4/projects/${projectId}/issues`;
  const one = new RegExp(`^${base}/(\\d+)(/notes)?$`);
  const show = (i: FakeIssue) => ({ id: 7000 + i.number, iid: i.number, title: i.title, description: i.body, state: i.state === 'open' ? 'opened' : 'closed', author: { id: i.author, username: i.author === userId ? 'project_42_bot' : `user_${i.author}` } });
  return (method: string, url: URL, body: string, reply: Reply, origin: string): boolean => {
    if (method === 'GET' && url.pathname === base) {
      const author = url.searchParams.get('author_id');
      const open = state.issues.filter((i) => (url.searchParams.get('state') !== 'opened' || i.state === 'open') && (author === null || String(i.author) === author));
      const [items, headers] = page(open, url, origin);
      reply(200, items.map(show), headers);
      return true;
    }
    if (method === 'POST' && url.pathname === base) {
      const { title, description } = JSON.parse(body) as { title: string; description: string };
      const issue: FakeIssue = { number: state.issues.length + 1, title, body: description, state: 'open', author: userId, notes: [] };
      state.issues.push(issue);
      reply(201, show(issue));
      return true;
    }
    const match = one.exec(url.pathname);
    const issue = match === null ? undefined : state.issues.find((i) => i.number === Number(match[1]));
    if (issue === undefined || match === null) return false;
    if (method === 'POST' && match[2] === '/notes') {
      issue.notes.push((JSON.parse(body) as { body: string }).body);
      reply(201, { id: 1, body: '' });
      return true;
    }
    if (method === 'PUT' && match[2] === undefined) {
      const change = JSON.parse(body) as Partial<{ title: string; description: string; state_event: string }>;
      if (change.title !== undefined) issue.title = change.title;
      if (change.description !== undefined) issue.body = change.description;
      if (change.state_event === 'close') issue.state = 'closed';
      reply(200, show(issue));
      return true;
    }
    return false;
  };
}
