/**
 * The Terraform HTTP backend state against a server that plays GitLab's and Gitea's documented
 * behaviour (test/support/terraform-http-backend.mjs) over loopback: the document it writes, its
 * registration and the server's lock around each write, the refusals, and what fails in words.
 */
import { createServer } from 'node:http';
import { describe, expect, it } from 'vitest';
import type { OrgformError } from '../../../src/errors.js';
import type { JournalEntry } from '../../../src/state/journal-entry.js';
import { NO_INTEREST } from '../../../src/state/journal-index.js';
import { lockRequest, openState } from '../../../src/state/open-state.js';
import { readNetworkSettings, readStateSettings } from '../../../src/cli/settings.js';
import { DEFAULT_STATE_SETTINGS, type StateSettings } from '../../../src/state/state-settings.js';
import type { Interest, StateBackend } from '../../../src/state/state-backend.js';
import { rejection } from '../../support/rejection.js';
import { startBackend } from '../../support/terraform-backends.js';

const SERVICE = 'https://orgs.example.test';
const PATH = '/api/v4/projects/42/terraform/state/orgform';
const CREDENTIALS = { ORGFORM_STATE_USERNAME: 'gitlab-ci-token', ORGFORM_STATE_PASSWORD: 'job-token-123' };
const entry = (organisation: string): JournalEntry => ({ kind: 'revoke-invitation', organisation, outcome: 'applied', at: '2025-01-02T03:04:05.678Z' });
const LOCAL = { pid: 4242, host: 'runner-1', now: () => Date.parse('2025-03-04T05:06:07.000Z'), isAlive: () => true };
const REQUEST = lockRequest('orgform apply', { lockEnvironment: LOCAL });
/** Every target the tests record under: a lock's journal answers `has` for these. */
const ALL: Interest = { targets: new Set(['revoke-invitation inv_1', 'revoke-invitation inv_2', 'revoke-invitation inv_3']) };

function open(url: string, env: Record<string, string> = CREDENTIALS, settings: StateSettings = DEFAULT_STATE_SETTINGS): Promise<StateBackend> {
  return openState({ state: url, defaultPath: '/nonexistent/state.json', cwd: '/', settings: { ...settings, http: readStateSettings(env).http }, network: readNetworkSettings(env), lockEnvironment: LOCAL });
}

/** A server in front of `backend`: each request answered as `answer` decides (`pass` sends it on to the backend). */
async function inFront(backend: string, answer: (method: string, url: string, pass: () => Promise<{ status: number; text: string }>) => Promise<{ status: number; text: string }>) {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const body = Buffer.concat(chunks);
      const pass = async () => {
        const passed = await fetch(backend + req.url, { method: req.method, headers: { authorization: req.headers.authorization ?? '', 'content-type': 'application/json' }, ...(body.length > 0 ? { body } : {}) });
        return { status: passed.status, text: await passed.text() };
      };
      const { status, text } = await answer(req.method ?? 'GET', req.url ?? '/', pass);
      res.writeHead(status).end(text);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

/** Every entry of the state, as `SERVICE KEY`. */
async function keysOf(state: StateBackend): Promise<string[]> {
  const keys: string[] = [];
  for await (const { service, key } of state.entries()) keys.push(`${service} ${key}`);
  return keys;
}

describe('the HTTP backend state', () => {
  it('reads a state that does not exist yet (404) as an empty journal', async () => {
    const server = await startBackend();
    expect(await keysOf(await open(server.url + PATH))).toEqual([]);
    expect(server.requests.map((r) => `${r.method} ${r.path} ${r.user}`)).toEqual([`GET ${PATH} gitlab-ci-token`]);
  });

  it('registers, writes a Terraform-shaped document with the journal inside (serial raised each write, one lineage), under the server’s lock for each write only, and lets go', async () => {
    const server = await startBackend();
    const state = await open(server.url + PATH, CREDENTIALS, { ...DEFAULT_STATE_SETTINGS, batch: { maxEntries: 2, maxDelayMs: 60_000 } });
    const held = await state.lock(REQUEST, ALL);
    // Registered in the document; the server's lock let go once that write was made.
    expect(server.lockOf(PATH)).toBeNull();
    expect(JSON.parse(server.versions(PATH)[0]!.body).orgform.runs[held.lock.id]).toMatchObject({ id: held.lock.id, pid: 4242, host: 'runner-1', command: 'orgform apply' });
    const recorded = [1, 2, 3].map((i) => held.journal.record(SERVICE, `revoke-invitation org_${i} inv_${i}`, entry(`org-${i}`)));
    await held.release();
    // Each acknowledged only once the server accepted a document that holds it.
    await Promise.all(recorded);
    expect(server.lockOf(PATH)).toBeNull();
    const versions = server.versions(PATH);
    // The registration, two batches, and the registration taken out.
    expect(versions.map((v) => v.serial)).toEqual([1, 2, 3, 4]);
    const last = JSON.parse(versions[3]!.body);
    expect(last).toMatchObject({ version: 4, serial: 4, lineage: JSON.parse(versions[0]!.body).lineage, outputs: {}, resources: [], terraform_version: expect.stringMatching(/^orgform /) });
    expect(last.orgform.runs).toBeUndefined();
    expect(Object.keys(last.orgform.services[SERVICE])).toHaveLength(3);
    expect(last.orgform.services[SERVICE]['revoke-invitation org_1 inv_1']).toEqual({ ...entry('org-1'), run: held.lock.id });
    // Every write named the lock, each taken and let go around it.
    expect(server.requests.filter((r) => r.method === 'POST' && r.path === PATH).map((r) => r.query)).toEqual(Array(4).fill(`?ID=${held.lock.id}`));
    expect(server.requests.filter((r) => r.path === `${PATH}/lock`).map((r) => r.method)).toEqual(Array(4).fill(['POST', 'DELETE']).flat());

    // The next apply reads it back, and goes on from its serial.
    const again = await (await open(server.url + PATH)).lock(REQUEST, ALL);
    expect(again.journal.has(SERVICE, 'revoke-invitation org_3 inv_3')).toBe(true);
    const fourth = again.journal.record(SERVICE, 'k4', entry('org-4'));
    await again.release();
    await fourth;
    expect(server.versions(PATH).map((v) => v.serial)).toEqual([1, 2, 3, 4, 5, 6, 7]);
  });

  it('writes what it holds at once on an interrupt, rather than after the batch delay', async () => {
    const server = await startBackend();
    const interrupt = new AbortController();
    const state = await openState({ state: server.url + PATH, defaultPath: '/none', cwd: '/', settings: { ...readStateSettings(CREDENTIALS), batch: { maxEntries: 500, maxDelayMs: 60_000 } }, signal: interrupt.signal });
    const held = await state.lock(REQUEST, NO_INTEREST);
    const recorded = held.journal.record(SERVICE, 'k1', entry('org-1'));
    expect(server.versions(PATH).map((v) => v.serial)).toEqual([1]);
    interrupt.abort();
    await recorded;
    expect(server.versions(PATH).map((v) => v.serial)).toEqual([1, 2]);
    await held.release();
  });

  it.each([409, 423] as const)('refuses a second apply while one holds the state (the server answering a held lock with %i), naming the registered holder', async (lockedStatus) => {
    const server = await startBackend({ lockedStatus });
    const first = await (await open(server.url + PATH)).lock(REQUEST, NO_INTEREST);
    const err = await rejection((await open(server.url + PATH)).lock(REQUEST, NO_INTEREST));
    expect(err.code).toBe('STATE_LOCKED');
    expect(err.message).toContain('is locked by pid 4242 on runner-1 as ');
    expect(err.message).toContain(`running "orgform apply" since 2025-03-04T05:06:07.000Z (lock ID ${first.lock.id})`);
    expect(err.message).toContain(`orgform force-unlock ${first.lock.id}`);
    await first.release();
  });

  it('waits for the server’s lock held by another writer, and refuses once ORGFORM_STATE_TIMEOUT_MS has passed, saying Gitea does not say who holds it', async () => {
    const server = await startBackend({ flavour: 'gitea' });
    const path = '/api/packages/ops/terraform/state/orgform';
    server.takeLock(path, 'terraform-run', 'mallory');
    const err = await rejection((await open(server.url + path, CREDENTIALS, { ...DEFAULT_STATE_SETTINGS, timeoutMs: 300 })).lock(REQUEST, NO_INTEREST));
    expect(err.code).toBe('STATE_LOCKED');
    expect(err.message).toContain('stayed locked by someone (the server does not say who) (lock ID (not given)) for ORGFORM_STATE_TIMEOUT_MS (300 ms) while registering a run');
    expect(server.versions(path)).toEqual([]);
    // Let go by its holder: the run registers, writes and lets go.
    await fetch(`${server.url}${path}/lock`, { method: 'DELETE', headers: { authorization: `Basic ${Buffer.from('gitlab-ci-token:job-token-123').toString('base64')}` }, body: JSON.stringify({ ID: 'terraform-run' }) });
    const state = await open(server.url + path);
    const held = await state.lock(REQUEST, NO_INTEREST);
    const recorded = held.journal.record(SERVICE, 'k1', entry('org-1'));
    await held.release();
    await recorded;
    expect(server.lockOf(path)).toBeNull();
    expect(await keysOf(state)).toEqual([`${SERVICE} k1`]);
  });

  it('halts the holder when its lock was broken (force-unlock) and another run went on: its next write is refused before it is made', async () => {
    const server = await startBackend({ flavour: 'gitea', enforceLocks: false });
    const held = await (await open(server.url + PATH)).lock(REQUEST, NO_INTEREST);
    const lost = new Promise<OrgformError>((resolve) => held.onLost(resolve));
    expect((await (await open(server.url + PATH)).forceUnlock(held.lock.id)).id).toBe(held.lock.id);
    const other = await (await open(server.url + PATH)).lock(REQUEST, NO_INTEREST);
    const theirs = other.journal.record(SERVICE, 'k2', entry('org-2'));
    await other.release();
    await theirs;
    const recorded = rejection(held.journal.record(SERVICE, 'k1', entry('org-1')));
    await held.journal.flush();
    const error = await lost;
    expect((await recorded).message).toContain('did not record it (this run is no longer registered in the state: its lock was broken (force-unlock))');
    expect(error.code).toBe('STATE_LOCK_LOST');
    await held.release();
    // The other run's entry stands.
    expect(await keysOf(await open(server.url + PATH))).toEqual([`${SERVICE} k2`]);
  });

  it('halts the holder when a write is refused (413, too large), saying how many entries are not written', async () => {
    const server = await startBackend({ maxBytes: 1_500 });
    const held = await (await open(server.url + PATH)).lock(REQUEST, NO_INTEREST);
    const lost = new Promise<OrgformError>((resolve) => held.onLost(resolve));
    const recorded = Array.from({ length: 10 }, (_, i) => rejection(held.journal.record(SERVICE, `revoke-invitation org_${i + 1} inv_${i + 1}`, entry(`org-${i + 1}`))));
    await held.journal.flush();
    const error = await lost;
    // None is acknowledged; a change in flight when the write failed finishes and is recorded after: refused too.
    expect((await Promise.all(recorded)).map((e) => e.code)).toEqual(Array(10).fill('STATE_LOCK_LOST'));
    await rejection(held.journal.record(SERVICE, 'revoke-invitation org_11 inv_11', entry('org-11')));
    // Only the registration was written.
    expect(server.versions(PATH)).toHaveLength(1);
    expect(error.code).toBe('STATE_LOCK_LOST');
    expect(error.message).toContain('a write failed (the server refused the document as too large (HTTP 413');
    expect(error.message).toContain('10 recorded entries are not written, nor any recorded after (the changes in flight)');
    expect(error.message).not.toContain('Nothing was changed');
    await held.release();
    // Its registration was still its own: taken out all the same, and the server's lock let go.
    expect(server.lockOf(PATH)).toBeNull();
    expect(JSON.parse(server.versions(PATH).at(-1)!.body).orgform.runs).toBeUndefined();
  });

  it('breaks a lock with force-unlock only with the holder’s ID', async () => {
    const server = await startBackend();
    const held = await (await open(server.url + PATH)).lock(REQUEST, NO_INTEREST);
    const wrong = await rejection((await open(server.url + PATH)).forceUnlock('0123456789ab'));
    expect(wrong.message).toContain(`has no lock with ID 0123456789ab; it is held by pid 4242 on runner-1`);
    expect(JSON.parse(server.versions(PATH).at(-1)!.body).orgform.runs[held.lock.id]).toBeDefined();
    expect(await (await open(server.url + PATH)).forceUnlock(held.lock.id)).toMatchObject({ id: held.lock.id, pid: 4242 });
    expect(JSON.parse(server.versions(PATH).at(-1)!.body).orgform.runs).toBeUndefined();
    expect(server.lockOf(PATH)).toBeNull();
  });

  it('says when the credentials are refused, and never shows the password', async () => {
    const server = await startBackend();
    const err = await rejection((await open(server.url + PATH, { ORGFORM_STATE_USERNAME: 'gitlab-ci-token', ORGFORM_STATE_PASSWORD: 'wrong-secret-456' })).readIndex(NO_INTEREST));
    expect(err.code).toBe('STATE_UNAVAILABLE');
    expect(err.message).toContain('HTTP 401');
    expect(err.message).toContain('ORGFORM_STATE_USERNAME and ORGFORM_STATE_PASSWORD');
    expect(err.message).not.toContain('wrong-secret-456');
    expect(err.message).not.toContain(Buffer.from('gitlab-ci-token:wrong-secret-456').toString('base64'));
  });

  it('never overwrites a state that is not orgform’s', async () => {
    const server = await startBackend();
    const held = await (await open(server.url + '/tf')).lock(REQUEST, NO_INTEREST);
    await held.release();
    // A Terraform workspace's state at that address.
    const terraform = await fetch(`${server.url}/tf`, { method: 'POST', headers: { authorization: `Basic ${Buffer.from('gitlab-ci-token:job-token-123').toString('base64')}` }, body: JSON.stringify({ version: 4, serial: 7, lineage: 'l', resources: [{ type: 'aws_s3_bucket' }] }) }).catch(() => undefined);
    expect(terraform).toBeDefined();
    const err = await rejection((await open(server.url + '/tf')).readIndex(NO_INTEREST));
    expect(err.message).toContain("holds something other than orgform's journal (a Terraform state: serial 7, 1 resource, 0 outputs)");
  });

  it('does not follow a redirect (the credentials would go along), and says where it pointed', async () => {
    const redirecting = createServer((_req, res) => res.writeHead(307, { location: 'https://elsewhere.example/state' }).end());
    await new Promise<void>((resolve) => redirecting.listen(0, '127.0.0.1', resolve));
    try {
      const port = (redirecting.address() as { port: number }).port;
      const err = await rejection((await open(`http://127.0.0.1:${port}/state`)).readIndex(NO_INTEREST));
      expect(err.code).toBe('STATE_UNAVAILABLE');
      expect(err.message).toContain('redirect to https://elsewhere.example/state, which orgform never follows');
    } finally {
      redirecting.close();
    }
  });

  it('lets go of a lock the server took although its answer was a failure (a gateway’s 504 after GitLab took it)', async () => {
    const server = await startBackend();
    // A gateway that passes the lock request on, then answers 504 as if the server had timed out.
    const gateway = await inFront(server.url, async (method, url, pass) => {
      const answer = await pass();
      return method === 'POST' && url.endsWith('/lock') ? { status: 504, text: 'Gateway Timeout' } : answer;
    });
    try {
      const err = await rejection((await open(`http://127.0.0.1:${(gateway.address() as { port: number }).port}${PATH}`)).lock(REQUEST, NO_INTEREST));
      expect(err.message).toContain('the server answered locking the state with HTTP 504');
      expect(server.lockOf(PATH)).toBeNull();
    } finally {
      gateway.close();
    }
  });

  it('says when its lock could not be released at the end, and how to break it, for every later apply would be refused', async () => {
    const server = await startBackend();
    // A server that fails every unlock with a 500 (after the retries too).
    const failing = await inFront(server.url, (method, _url, pass) => (method === 'DELETE' ? Promise.resolve({ status: 500, text: 'unavailable' }) : pass()));
    try {
      const settings = { ...DEFAULT_STATE_SETTINGS, batch: { maxEntries: 1, maxDelayMs: 60_000 } };
      const held = await (await open(`http://127.0.0.1:${(failing.address() as { port: number }).port}${PATH}`, CREDENTIALS, settings)).lock(REQUEST, NO_INTEREST);
      // Written all the same: the server's lock, left held by this run, is this run's to take again.
      await held.journal.record(SERVICE, 'revoke-invitation org_1 inv_1', entry('org-1'));
      const err = await rejection(held.release());
      expect(err.code).toBe('STATE_LOCKED');
      expect(err.message).toContain(`Could not release the lock ${held.lock.id} on the state at`);
      expect(err.message).toContain('HTTP 500: unavailable');
      expect(err.message).toContain(`orgform force-unlock ${held.lock.id}`);
      expect(server.lockOf(PATH)?.ID).toBe(held.lock.id);
      // The registration, the entry, the registration taken out: only the server's lock is left behind.
      expect(server.versions(PATH)).toHaveLength(3);
    } finally {
      failing.close();
    }
  });

  it('fails clearly when the server cannot be reached', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as { port: number }).port;
    await new Promise((resolve) => closed.close(resolve));
    const err = await rejection((await open(`http://127.0.0.1:${port}/state`, CREDENTIALS, { ...DEFAULT_STATE_SETTINGS, timeoutMs: 2_000 })).readIndex(NO_INTEREST));
    expect(err.code).toBe('STATE_UNAVAILABLE');
    expect(err.message).toContain('reading the state failed: connection refused');
    expect(err.message).toContain('(3 attempts)');
  });

  it('takes the lock and unlock requests where and how ORGFORM_STATE_LOCK_* say (Terraform’s LOCK and UNLOCK)', async () => {
    const seen: string[] = [];
    const server = createServer((req, res) => {
      seen.push(`${req.method} ${req.url}`);
      res.writeHead(req.method === 'GET' ? 404 : 200).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
      const env = { ...CREDENTIALS, ORGFORM_STATE_LOCK_ADDRESS: `${base}/locks/s1`, ORGFORM_STATE_LOCK_METHOD: 'LOCK', ORGFORM_STATE_UNLOCK_METHOD: 'UNLOCK' };
      await (await (await open(`${base}/states/s1`, env)).lock(REQUEST, NO_INTEREST)).release();
      // Registering (a state this server never keeps), then letting go (nothing registered to take out).
      expect(seen.map((request) => request.replace(/\?ID=[0-9a-f]{12}$/, '?ID=…'))).toEqual(['LOCK /locks/s1', 'GET /states/s1', 'POST /states/s1?ID=…', 'UNLOCK /locks/s1', 'LOCK /locks/s1', 'GET /states/s1', 'UNLOCK /locks/s1']);
      const elsewhere = await rejection(open(`${base}/states/s1`, { ...env, ORGFORM_STATE_LOCK_ADDRESS: 'https://other.example/lock' }));
      expect(elsewhere.message).toContain("must be on the state's own server");
    } finally {
      server.close();
    }
  });
});
