// A Terraform HTTP state backend on loopback, as small as the protocol, written from what GitLab's
// and Gitea's documentation and source say they do (see /work/shared/state-backends.md), for the
// tests and the bench:
//
//   GET    {state}        200 the stored bytes; 204 stored but empty; 404 no such state (Gitea: 204)
//   POST   {state}?ID=…   stores the body: 422 without an integer `serial` (GitLab) or unparsable;
//                         409 when locked by another ID (or locked and no ID given); Gitea also
//                         refuses a write without ?ID= (400). An empty body answers 204.
//                         With `enforceLocks: false`, any write is stored, whoever holds the lock
//                         (a server that trusts its clients to hold it, as some Gitea versions do).
//   POST   {state}/lock   Terraform's lock info (ID, Operation, Info, Who, Version, Created, Path,
//                         all strings): 200 taken; 409 (or 423) held, with the holder's ID, Who
//                         (the user name) and Created (GitLab), or a bare error (Gitea)
//   DELETE {state}/lock   ID from the query or the JSON body (GitLab; none means force) or the body
//                         only (Gitea): 200, or 409 when the ID is not the holder's
//   DELETE {state}        removes it
//
// Basic auth: every request needs one of `users` (name → password), else 401; with `anonymous`,
// none is needed (a server behind a job's own network, for the tests whose runs carry no credentials).
import { createServer } from 'node:http';

const LOCK_FIELDS = ['ID', 'Operation', 'Info', 'Who', 'Version', 'Created', 'Path'];

/**
 * @param {{ users?: Record<string, string>, anonymous?: boolean, flavour?: 'gitlab' | 'gitea', lockedStatus?: 409 | 423, maxBytes?: number, holdLocks?: boolean, enforceLocks?: boolean }} options
 */
export async function startTerraformBackend(options = {}) {
  const users = options.users ?? { 'gitlab-ci-token': 'job-token-123' };
  const flavour = options.flavour ?? 'gitlab';
  const lockedStatus = options.lockedStatus ?? 409;
  const enforceLocks = options.enforceLocks ?? true;
  /** @type {Map<string, { versions: Array<{ serial: number, body: string }>, lock: null | { ID: string, Who: string, Created: string } }>} */
  const states = new Map();
  const requests = [];
  /** With holdLocks: lock requests not answered yet, until releaseLocks(). */
  let heldLocks = options.holdLocks === true ? [] : undefined;

  const json = (res, status, value) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(value));
  };
  const error = (res, status, message) => (flavour === 'gitea' ? json(res, status, { errors: [{ status, message }] }) : json(res, status, { message }));

  /** POST {state}/lock: taken, or refused naming the holder. */
  const takeOrRefuse = (res, name, state, body, user) => {
    let info;
    try {
      info = JSON.parse(body);
    } catch {
      return error(res, 400, 'invalid lock info');
    }
    if (LOCK_FIELDS.some((f) => typeof info?.[f] !== 'string') || info.ID === '') return error(res, 400, `lock info must hold ${LOCK_FIELDS.join(', ')} as strings`);
    const target = state ?? { versions: [], lock: null };
    states.set(name, target);
    if (target.lock) {
      if (flavour === 'gitea') return error(res, lockedStatus, `State ${name} is already locked`);
      // GitLab: the holder's ID, Who and Created, the rest as the request gave it.
      return json(res, lockedStatus, { ...info, ID: target.lock.ID, Who: target.lock.Who, Created: target.lock.Created });
    }
    target.lock = { ID: info.ID, Who: user ?? 'anonymous', Created: new Date().toISOString() };
    return json(res, 200, { ...info, Who: user ?? 'anonymous' });
  };

  const server = createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const url = new URL(req.url ?? '/', 'http://localhost');
      const auth = /^Basic (.+)$/.exec(req.headers.authorization ?? '');
      const [user, password] = auth ? Buffer.from(auth[1], 'base64').toString('utf8').split(/:(.*)/s) : [];
      requests.push({ method: req.method, path: url.pathname, query: url.search, user, bytes: body.length });
      if (options.anonymous !== true && (user === undefined || users[user] !== password)) return error(res, 401, '401 Unauthorized');
      if (options.maxBytes !== undefined && body.length > options.maxBytes) return error(res, 413, 'Request Entity Too Large');

      const isLock = url.pathname.endsWith('/lock');
      const name = isLock ? url.pathname.slice(0, -'/lock'.length) : url.pathname;
      const state = states.get(name);

      if (!isLock && req.method === 'GET') {
        if (!state) return flavour === 'gitea' ? res.writeHead(204).end() : error(res, 404, '404 Not Found');
        const latest = state.versions.at(-1);
        if (!latest) return res.writeHead(204).end();
        res.writeHead(200, { 'content-type': 'application/json' });
        return res.end(latest.body);
      }
      if (!isLock && req.method === 'POST') {
        const id = url.searchParams.get('ID');
        if (flavour === 'gitea' && !id) return error(res, 400, 'Missing ID query parameter');
        if (body === '') return res.writeHead(204).end();
        const held = state?.lock ?? null;
        if (enforceLocks && (held ? held.ID !== id : id !== null && flavour === 'gitlab')) return error(res, lockedStatus, 'state is locked');
        let doc;
        try {
          doc = JSON.parse(body);
        } catch {
          return error(res, 422, 'invalid JSON');
        }
        if (!Number.isInteger(doc?.serial)) return error(res, 422, 'No serial in payload');
        const target = state ?? { versions: [], lock: null };
        target.versions.push({ serial: doc.serial, body });
        states.set(name, target);
        return res.writeHead(200).end();
      }
      if (!isLock && req.method === 'DELETE') {
        if (!state) return error(res, 404, '404 Not Found');
        states.delete(name);
        return res.writeHead(200).end();
      }
      if (isLock && req.method === 'POST' && heldLocks !== undefined) {
        // A backend slow to answer a lock (a busy GitLab): answered once the test lets it.
        heldLocks.push(() => takeOrRefuse(res, name, states.get(name), body, user));
        return undefined;
      }
      if (isLock && req.method === 'POST') return takeOrRefuse(res, name, state, body, user);
      if (isLock && req.method === 'DELETE') {
        let fromBody;
        try {
          fromBody = body === '' ? undefined : JSON.parse(body)?.ID;
        } catch {
          fromBody = undefined;
        }
        const id = flavour === 'gitea' ? fromBody : (url.searchParams.get('ID') ?? fromBody);
        if (flavour === 'gitea' && !id) return error(res, 400, 'Missing lock ID');
        const held = state?.lock ?? null;
        if (id !== undefined && id !== null ? held?.ID !== id : flavour === 'gitea') return error(res, 409, 'lock ID mismatch');
        if (state) state.lock = null;
        return res.writeHead(200).end();
      }
      return error(res, 405, 'Method Not Allowed');
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = server.address().port;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    /** The stored versions of a state (its path), oldest first. */
    versions: (path) => states.get(path)?.versions ?? [],
    /** Who holds a state's lock now. */
    lockOf: (path) => states.get(path)?.lock ?? null,
    /** Someone writes a document of their own (Terraform, another tool), as a new version. */
    store(path, body) {
      const target = states.get(path) ?? { versions: [], lock: null };
      target.versions.push({ serial: JSON.parse(body).serial, body });
      states.set(path, target);
    },
    /** Someone else breaks the lock and takes it (what a force-unlock and a new apply elsewhere do). */
    takeLock(path, id = 'someone-else', who = 'mallory') {
      const target = states.get(path) ?? { versions: [], lock: null };
      target.lock = { ID: id, Who: who, Created: new Date().toISOString() };
      states.set(path, target);
    },
    /** With holdLocks: whether a lock request waits for its answer. */
    lockWaiting: () => (heldLocks?.length ?? 0) > 0,
    /** With holdLocks: answers the lock requests held, and every later one at once. */
    releaseLocks() {
      const held = heldLocks ?? [];
      heldLocks = undefined;
      for (const answer of held) answer();
    },
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve(undefined));
        server.closeAllConnections();
      }),
  };
}
