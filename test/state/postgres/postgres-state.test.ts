/**
 * The PostgreSQL state against a real server (test/support/postgres-global-setup.ts starts one per
 * run; each test gets a database of its own). No mock of the database anywhere.
 */
import { connect, createServer, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import type { OrgformError } from '../../../src/errors.js';
import type { LoggedEntry } from '../../../src/state/journal-entry.js';
import { FETCH_ROWS } from '../../../src/state/postgres/journal-rows.js';
import { DEFAULT_STATE_SETTINGS } from '../../../src/state/state-settings.js';
import { createTestDatabase, query } from '../../support/postgres.js';
import { rejection } from '../../support/rejection.js';
import { entry, interest, keyOf, openPostgres, QUICK_SETTINGS, request, SERVICE, settled, targetOf, withState } from './postgres-fixtures.js';

async function collect(entries: AsyncIterable<LoggedEntry>): Promise<LoggedEntry[]> {
  const all: LoggedEntry[] = [];
  for await (const one of entries) all.push(one);
  return all;
}

/** A TCP link to the server that can be made to stop passing anything on, both ways (a network partition). */
async function freezableLink(port: string): Promise<{ port: number; freeze(): void; cutOff(): void; close(): void }> {
  const sockets: Socket[] = [];
  const pairs: Array<{ upstream: Socket; cut: boolean }> = [];
  let frozen = false;
  const server = createServer((client) => {
    const upstream = connect(Number(port), '127.0.0.1');
    const pair = { upstream, cut: false };
    sockets.push(client, upstream);
    pairs.push(pair);
    client.on('data', (chunk) => frozen || pair.cut || upstream.write(chunk));
    upstream.on('data', (chunk) => frozen || pair.cut || client.write(chunk));
    for (const socket of [client, upstream]) socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    freeze: () => (frozen = true),
    // The connections made so far: closed on the server's side, silent on the client's (new ones pass).
    cutOff: () => {
      for (const pair of pairs) {
        pair.cut = true;
        pair.upstream.destroy();
      }
    },
    close: () => {
      for (const socket of sockets) socket.destroy();
      server.close();
    },
  };
}

const count = async (url: string) => (await query<{ n: number }>(url, 'SELECT count(*)::int AS n FROM orgform.journal'))[0]!.n;

describe('the PostgreSQL state', () => {
  it('reads a database without orgform’s schema as an empty journal, and creates nothing', async () => {
    const url = await createTestDatabase('pg_empty');
    const state = openPostgres(withState(url, 'prod'));
    expect((await state.readIndex(interest(targetOf(1)))).has(SERVICE, keyOf(1))).toBe(false);
    expect(await collect(state.entries())).toEqual([]);
    expect(await query(url, "SELECT 1 FROM pg_namespace WHERE nspname = 'orgform'")).toEqual([]);
  });

  it('creates the schema once when two first applies start at the same moment, at the current version', async () => {
    const url = await createTestDatabase('pg_schema');
    const held = await Promise.all(['one', 'two'].map((name) => openPostgres(withState(url, name)).lock(request('orgform apply'), interest())));
    expect(await query(url, 'SELECT version, applied_by FROM orgform.migrations ORDER BY version')).toEqual([
      { version: 1, applied_by: 'orgform' },
      { version: 2, applied_by: 'orgform' },
    ]);
    expect((await query(url, 'SELECT name FROM orgform.states ORDER BY name')).map((r) => r.name)).toEqual(['one', 'two']);
    await Promise.all(held.map((h) => h.release()));
  });

  it('acknowledges an entry only once its batch is committed: a full batch at once, the rest on flush, each entry once', async () => {
    const url = await createTestDatabase('pg_batch');
    const state = openPostgres(withState(url, 'prod'), { ...DEFAULT_STATE_SETTINGS, batch: { maxEntries: 3, maxDelayMs: 60_000 } });
    const held = await state.lock(request('orgform apply'), interest());
    const recorded = [1, 2, 3, 4, 5, 6, 7].map((n) => held.journal.record(SERVICE, keyOf(n), entry(`org-${n}`)));
    await Promise.all(recorded.slice(0, 6));
    // Six are acknowledged, and committed; the seventh waits for its batch to fill, its delay or the end.
    expect(await count(url)).toBe(6);
    expect(await settled(recorded[6]!)).toBe(false);
    expect(held.journal.has(SERVICE, keyOf(7))).toBe(true);
    await held.journal.flush();
    await recorded[6];
    expect(await count(url)).toBe(7);
    // Recorded again (a retried run): nothing changes, the first recorded stays.
    const again = held.journal.record(SERVICE, keyOf(1), { ...entry('org-1'), outcome: 'already-done' });
    await held.release();
    await again;
    const rows = await query(url, `SELECT key, kind, organisation, outcome, run, target FROM orgform.journal WHERE key = '${keyOf(1)}'`);
    expect(rows).toEqual([{ key: keyOf(1), kind: 'remove-channel', organisation: 'org-1', outcome: 'applied', run: held.lock.id, target: targetOf(1) }]);
  });

  it('writes a batch that has not filled once its delay has passed', async () => {
    const url = await createTestDatabase('pg_delay');
    const state = openPostgres(withState(url, 'prod'), { ...DEFAULT_STATE_SETTINGS, batch: { maxEntries: 500, maxDelayMs: 20 } });
    const held = await state.lock(request('orgform apply'), interest());
    await held.journal.record(SERVICE, keyOf(1), entry('org-1'));
    expect(await count(url)).toBe(1);
    await held.release();
  });

  it('reads only the entries whose targets the configuration names, whichever run wrote them', async () => {
    const url = await createTestDatabase('pg_interest');
    const writer = await openPostgres(withState(url, 'prod')).lock(request('orgform apply'), interest());
    await Promise.all([1, 2, 3].map((n) => writer.journal.record(SERVICE, keyOf(n), entry(`org-${n}`))));
    await writer.release();
    const state = openPostgres(withState(url, 'prod'));
    const index = await state.readIndex(interest(targetOf(1), targetOf(3), targetOf(9)));
    expect([1, 2, 3].map((n) => index.has(SERVICE, keyOf(n)))).toEqual([true, false, true]);
    // Under the lock, the same: the entries named, and those recorded since.
    const held = await state.lock(request('orgform apply'), interest(targetOf(2)));
    expect([1, 2, 3].map((n) => held.journal.has(SERVICE, keyOf(n)))).toEqual([false, true, false]);
    await held.release();
  });

  it('streams every entry, sorted by service and key, past a fetch of its cursor', async () => {
    const url = await createTestDatabase('pg_stream');
    await (await openPostgres(withState(url, 'prod')).lock(request('orgform apply'), interest())).release();
    await query(
      url,
      `INSERT INTO orgform.journal (state, service, key, kind, organisation, outcome, at, run, target)
       SELECT 'prod', 'https://b.example', 'remove-channel org_' || lpad(i::text, 6, '0') || ' chn_' || i, 'remove-channel', 'org-' || i, 'applied', '2025-01-02T03:04:05Z', NULL, 'remove-channel chn_' || i
         FROM generate_series(1, $1) i`,
      [FETCH_ROWS + 1],
    );
    await query(url, `INSERT INTO orgform.journal (state, service, key, kind, organisation, outcome, at, target) VALUES ('prod', 'https://a.example', 'k', 'remove-channel', 'o', 'applied', now(), 'x'), ('other', 'https://a.example', 'k2', 'remove-channel', 'o', 'applied', now(), 'x')`);
    const all = await collect(openPostgres(withState(url, 'prod')).entries());
    expect(all).toHaveLength(FETCH_ROWS + 2);
    expect(all[0]).toMatchObject({ service: 'https://a.example', key: 'k' });
    expect(all[1]).toEqual({ service: 'https://b.example', key: 'remove-channel org_000001 chn_1', entry: { kind: 'remove-channel', organisation: 'org-1', outcome: 'applied', at: '2025-01-02T03:04:05.000Z' } });
    expect(all.at(-1)!.key).toBe(`remove-channel org_${String(FETCH_ROWS + 1).padStart(6, '0')} chn_${FETCH_ROWS + 1}`);
  });

  it('stops at a dropped connection: the run is told, what was not committed is not acknowledged, and nothing is written after', async () => {
    const url = await createTestDatabase('pg_lost');
    const state = openPostgres(withState(url, 'prod'), { ...DEFAULT_STATE_SETTINGS, batch: { maxEntries: 500, maxDelayMs: 60_000 } });
    const held = await state.lock(request('orgform apply'), interest());
    const lost = new Promise<OrgformError>((resolve) => held.onLost(resolve));
    // Handled from the start: it rejects as soon as the connection drops.
    const first = rejection(held.journal.record(SERVICE, keyOf(1), entry('org-1')));
    const [{ backend_pid }] = (await query<{ backend_pid: number }>(url, 'SELECT backend_pid FROM orgform.holders')) as [{ backend_pid: number }];
    await query(url, 'SELECT pg_terminate_backend($1, 5000)', [backend_pid]);
    const error = await lost;
    expect(error.code).toBe('STATE_LOCK_LOST');
    expect(error.message).toContain('Lost the lock on the state at');
    expect(error.message).toContain('1 recorded entry is not written');
    const notRecorded = await first;
    expect(notRecorded.message).toContain('did not record it');
    const later = await rejection(held.journal.record(SERVICE, keyOf(2), entry('org-2')));
    expect(later.code).toBe('STATE_LOCK_LOST');
    await held.release();
    expect(await count(url)).toBe(0);
    // The lock went with the session: the next apply takes it, and drops the dead run's registration.
    const next = await state.lock(request('orgform apply'), interest());
    expect(next.replaced.map((h) => h.id)).toEqual([held.lock.id]);
    await next.release();
  });

  it('stops when the connection goes silent while the run is quiet (the server may have ended the session): its check gets no answer', async () => {
    const url = await createTestDatabase('pg_silent');
    const link = await freezableLink(new URL(url).port);
    const through = new URL(url);
    through.port = String(link.port);
    const held = await openPostgres(withState(through.toString(), 'prod'), QUICK_SETTINGS, 50).lock(request('orgform apply'), interest());
    const lost = new Promise<OrgformError>((resolve) => held.onLost(resolve));
    link.freeze();
    const error = await lost;
    expect(error.code).toBe('STATE_LOCK_LOST');
    expect(error.message).toContain('the database stopped answering (no answer in time');
    expect((await rejection(held.journal.record(SERVICE, keyOf(1), entry('org-1')))).code).toBe('STATE_LOCK_LOST');
    await held.release();
    link.close();
  });

  it.each([
    ['goes silent', 'freeze', 'the database stopped answering (no answer in time'],
    ['is ended by the server, unheard of by the client (the server may let another run take the lock)', 'cutOff', 'the database ended its session, and the lock went with it, while a write waited for an answer'],
  ] as const)('stops when the connection %s while a write waits for its answer: its check asks through a connection of its own', async (_name, fault, why) => {
    const url = await createTestDatabase('pg_cut');
    const link = await freezableLink(new URL(url).port);
    const through = new URL(url);
    through.port = String(link.port);
    const held = await openPostgres(withState(through.toString(), 'prod'), QUICK_SETTINGS, 50).lock(request('orgform apply'), interest());
    const lost = new Promise<OrgformError>((resolve) => held.onLost(resolve));
    link[fault]();
    // Its write waits for an answer that never comes (ORGFORM_STATE_TIMEOUT_MS is 30 s): it used to be told only then.
    const unanswered = rejection(held.journal.record(SERVICE, keyOf(1), entry('org-1')));
    const error = await lost;
    expect(error.code).toBe('STATE_LOCK_LOST');
    expect(error.message).toContain(why);
    expect((await unanswered).message).toContain('did not record it');
    await held.release();
    link.close();
    expect(await count(url)).toBe(0);
  });

  it('refuses a schema that a newer orgform made', async () => {
    const url = await createTestDatabase('pg_newer');
    await (await openPostgres(url).lock(request('orgform apply'), interest())).release();
    await query(url, "INSERT INTO orgform.migrations (version, applied_by) VALUES (3, 'orgform 9')");
    const err = await rejection(openPostgres(url).readIndex(interest('x')));
    expect(err.code).toBe('STATE_INVALID');
    expect(err.message).toContain('schema version 3; this orgform knows version 2');
  });

  it('keeps states of other schemas apart, locks included', async () => {
    const url = await createTestDatabase('pg_schemas');
    const a = await openPostgres(`${url}?state=prod&schema=team_a`).lock(request('orgform apply'), interest());
    const b = await openPostgres(`${url}?state=prod&schema=team_b`).lock(request('orgform apply'), interest());
    await a.journal.record(SERVICE, keyOf(1), entry('org-1'));
    await Promise.all([a.release(), b.release()]);
    expect(await collect(openPostgres(`${url}?state=prod&schema=team_b`).entries())).toEqual([]);
    expect((await collect(openPostgres(`${url}?state=prod&schema=team_a`).entries())).map((e) => e.key)).toEqual([keyOf(1)]);
  });

  it('fails clearly, as the state being unusable, when a TLS file the URL names is missing', async () => {
    const err = await rejection(openPostgres('postgres://ada:s3cret-pass@127.0.0.1:5432/ops?sslmode=verify-full&sslrootcert=/nonexistent/ca.pem').readIndex(interest('x')));
    expect(err.code).toBe('STATE_UNAVAILABLE');
    expect(err.message).toContain('/nonexistent/ca.pem');
    expect(err.message).not.toContain('s3cret-pass');
  });

  it('fails clearly when the database cannot be reached, without the password', async () => {
    const state = openPostgres('postgres://ada:s3cret-pass@127.0.0.1:1/ops?state=prod', { ...DEFAULT_STATE_SETTINGS, timeoutMs: 2_000 });
    expect(state.location).toBe('postgres://[REDACTED]@127.0.0.1:1/ops?state=prod');
    for (const attempt of [() => state.readIndex(interest('x')), () => state.lock(request('orgform apply'), interest()), () => collect(state.entries())]) {
      const err = await rejection(attempt());
      expect(err.code).toBe('STATE_UNAVAILABLE');
      expect(err.message).toContain('Cannot use the state at postgres://[REDACTED]@127.0.0.1:1/ops?state=prod');
      expect(err.message).toContain('connection refused');
      expect(err.message).not.toContain('s3cret-pass');
    }
  });

  it('says that a server which takes the connection but never answers gave no answer in time (ORGFORM_STATE_TIMEOUT_MS)', async () => {
    const silent = createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const port = (silent.address() as { port: number }).port;
      const state = openPostgres(`postgres://ada:s3cret-pass@127.0.0.1:${port}/ops?state=prod`, { ...DEFAULT_STATE_SETTINGS, timeoutMs: 300 });
      for (const attempt of [() => state.readIndex(interest('x')), () => state.lock(request('orgform apply'), interest()), () => state.forceUnlock('0123456789ab')]) {
        const err = await rejection(attempt());
        expect(err.code).toBe('STATE_UNAVAILABLE');
        expect(err.message).toContain('no answer in time (ORGFORM_STATE_TIMEOUT_MS is 300 ms)');
      }
    } finally {
      silent.close();
    }
  });
});

describe('writing while the lock is held', () => {
  it('acknowledges a record once it is committed, so that another connection sees it at once; release drops the registration', async () => {
    const url = await createTestDatabase('pg_ack');
    const held = await openPostgres(withState(url, 'prod'), { ...DEFAULT_STATE_SETTINGS, batch: { maxEntries: 1, maxDelayMs: 60_000 } }).lock(request('orgform apply'), interest());
    for (let n = 1; n <= 3; n++) {
      await held.journal.record(SERVICE, keyOf(n), entry(`org-${n}`));
      // Acknowledged means committed: another connection sees it at once.
      expect(await count(url)).toBe(n);
    }
    expect(await query(url, 'SELECT count(*)::int AS n FROM orgform.holders')).toEqual([{ n: 1 }]);
    await held.release();
    expect(await query(url, 'SELECT count(*)::int AS n FROM orgform.holders')).toEqual([{ n: 0 }]);
  });
});
