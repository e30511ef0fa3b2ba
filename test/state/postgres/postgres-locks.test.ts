/**
 * Who may hold a PostgreSQL state at once (src/state/lock-matrix.ts, enforced by
 * src/state/postgres/postgres-locks.ts): shards of one count side by side, nothing else over a live
 * run, each refusal naming the holder, and force-unlock of one run by its lock ID.
 */
import { describe, expect, it } from 'vitest';
import type { OrgformError } from '../../../src/errors.js';
import type { HeldState } from '../../../src/state/state-backend.js';
import { createTestDatabase, query } from '../../support/postgres.js';
import { rejection } from '../../support/rejection.js';
import { entry, interest, keyOf, openPostgres, request, SERVICE, shard, withState } from './postgres-fixtures.js';

/** The advisory locks held in the database now, by mode (the state's two-key lock, and the shards' one-key locks). */
async function advisoryLocks(url: string): Promise<Array<{ mode: string; objsubid: number }>> {
  return query(url, "SELECT mode, objsubid FROM pg_locks WHERE locktype = 'advisory' AND granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database()) ORDER BY objsubid, mode");
}

async function backendOf(url: string, held: HeldState): Promise<number> {
  return (await query<{ backend_pid: number }>(url, 'SELECT backend_pid FROM orgform.holders WHERE lock_id = $1', [held.lock.id]))[0]!.backend_pid;
}

describe('the PostgreSQL state’s locks', () => {
  it.each([2, 4])('lets %i shards of one count hold one state at once, each recording its own entries', async (count) => {
    const url = await createTestDatabase(`pg_shards_${count}`);
    const state = openPostgres(withState(url, 'prod'));
    const held = await Promise.all(Array.from({ length: count }, (_, i) => state.lock(request(`orgform apply --shard ${i + 1}/${count}`, shard(i + 1, count), 100 + i), interest())));
    expect(new Set(held.map((h) => h.lock.id)).size).toBe(count);
    await Promise.all(held.map((h, i) => h.journal.record(SERVICE, keyOf(i), entry(`org-${i}`))));
    await Promise.all(held.map((h) => h.release()));
    expect((await query(url, "SELECT key FROM orgform.journal WHERE state = 'prod' ORDER BY key")).map((r) => r.key)).toEqual(Array.from({ length: count }, (_, i) => keyOf(i)));
    expect(await advisoryLocks(url)).toEqual([]);
  });

  it('refuses a second run of the same shard, naming the holder and how to break its lock', async () => {
    const url = await createTestDatabase('pg_same_shard');
    const state = openPostgres(withState(url, 'prod'));
    const first = await state.lock(request('orgform apply --shard 1/2', shard(1, 2)), interest());
    const err = await rejection(state.lock(request('orgform apply --shard 1/2', shard(1, 2), 777), interest()));
    expect(err.code).toBe('STATE_LOCKED');
    expect(err.message).toContain('is locked by pid 4242 on runner-1 as ci@runner-1, running "orgform apply --shard 1/2" since 2025-03-04T05:06:07.000Z');
    expect(err.message).toContain(`(lock ID ${first.lock.id}): shard 1/2 runs already`);
    expect(err.message).toContain(`orgform force-unlock ${first.lock.id}`);
    await first.release();
    await (await state.lock(request('orgform apply --shard 1/2', shard(1, 2)), interest())).release();
  });

  it('refuses an unsharded apply while shards run, and a shard while an unsharded apply runs', async () => {
    const url = await createTestDatabase('pg_whole');
    const state = openPostgres(withState(url, 'prod'));
    const sharded = await state.lock(request('orgform apply --shard 2/3', shard(2, 3)), interest());
    const whole = await rejection(state.lock(request('orgform apply', undefined, 555), interest()));
    expect(whole.message).toContain(`(lock ID ${sharded.lock.id}): shard 2/3 runs, and an apply without --shard would overlap every shard`);
    await sharded.release();

    const unsharded = await state.lock(request('orgform apply'), interest());
    const part = await rejection(state.lock(request('orgform apply --shard 1/2', shard(1, 2), 556), interest()));
    expect(part.message).toContain(`running "orgform apply" since 2025-03-04T05:06:07.000Z (lock ID ${unsharded.lock.id})`);
    await unsharded.release();
  });

  it('refuses a shard of another count (1/3 while 1/2 runs), and registers nothing for the refused run', async () => {
    const url = await createTestDatabase('pg_other_count');
    const state = openPostgres(withState(url, 'prod'));
    const half = await state.lock(request('orgform apply --shard 1/2', shard(1, 2)), interest());
    const err = await rejection(state.lock(request('orgform apply --shard 1/3', shard(1, 3), 900), interest()));
    expect(err.message).toContain(`(lock ID ${half.lock.id}): shard 1/2 runs, and shard 1/3 of another count would overlap it`);
    expect(await query(url, 'SELECT count(*)::int AS n FROM orgform.holders')).toEqual([{ n: 1 }]);
    await half.release();
    await (await state.lock(request('orgform apply --shard 1/3', shard(1, 3)), interest())).release();
  });

  it('gives the shard to exactly one of two runs that ask for it at the same moment', async () => {
    const url = await createTestDatabase('pg_race');
    const state = openPostgres(withState(url, 'prod'));
    const results = await Promise.allSettled([1, 2, 3].map((pid) => state.lock(request('orgform apply --shard 1/2', shard(1, 2), pid), interest())));
    const taken = results.filter((r): r is PromiseFulfilledResult<HeldState> => r.status === 'fulfilled');
    expect(taken).toHaveLength(1);
    for (const r of results) if (r.status === 'rejected') expect((r.reason as OrgformError).message).toContain(`(lock ID ${taken[0]!.value.lock.id}): shard 1/2 runs already`);
    await taken[0]!.value.release();
  });

  it('frees the shard of a run whose session ended (a killed process), and tells the next run whose registration it dropped', async () => {
    const url = await createTestDatabase('pg_killed');
    const state = openPostgres(withState(url, 'prod'));
    const [one, two] = await Promise.all([1, 2].map((i) => state.lock(request(`orgform apply --shard ${i}/2`, shard(i, 2), i), interest())));
    const lost = new Promise<OrgformError>((resolve) => one!.onLost(resolve));
    await query(url, 'SELECT pg_terminate_backend($1, 5000)', [await backendOf(url, one!)]);
    expect((await lost).code).toBe('STATE_LOCK_LOST');
    const again = await state.lock(request('orgform apply --shard 1/2', shard(1, 2), 11), interest());
    expect(again.replaced.map((h) => h.id)).toEqual([one!.lock.id]);
    // The other shard never noticed: it still records.
    await two!.journal.record(SERVICE, keyOf(2), entry('org-2'));
    await Promise.all([one!.release(), two!.release(), again.release()]);
    expect((await query(url, 'SELECT key FROM orgform.journal')).map((r) => r.key)).toEqual([keyOf(2)]);
  });
});

describe('force-unlock on a PostgreSQL state', () => {
  it('never ends a session that only reuses the backend pid of a dead run’s registration', async () => {
    const url = await createTestDatabase('pg_pid_reuse');
    const state = openPostgres(withState(url, 'prod'));
    const live = await state.lock(request('orgform apply --shard 2/2', shard(2, 2)), interest());
    let lost = false;
    live.onLost(() => (lost = true));
    // A run of shard 1/2 that died, whose backend pid the live run's session happens to have now.
    const ghost = { id: 'aaaaaaaaaaaa', pid: 1, host: 'runner-9', partition: { index: 1, count: 2 } };
    await query(url, "INSERT INTO orgform.holders (lock_id, state, shard_index, shard_count, info, backend_pid) VALUES ($1, 'prod', 1, 2, $2, $3)", [ghost.id, JSON.stringify(ghost), await backendOf(url, live)]);
    // Not taken for live: shard 1/2 may run, and is told the dead run's registration was dropped.
    const again = await state.lock(request('orgform apply --shard 1/2', shard(1, 2)), interest());
    expect(again.replaced.map((h) => h.id)).toEqual([ghost.id]);
    await again.release();
    await query(url, "INSERT INTO orgform.holders (lock_id, state, shard_index, shard_count, info, backend_pid) VALUES ($1, 'prod', 1, 2, $2, $3)", [ghost.id, JSON.stringify(ghost), await backendOf(url, live)]);
    expect((await state.forceUnlock(ghost.id)).id).toBe(ghost.id);
    await live.journal.record(SERVICE, keyOf(2), entry('org-2'));
    expect(lost).toBe(false);
    await live.release();
  });

  it('breaks only the run whose lock ID it is given: a wrong ID names the holders, and the other shard keeps running', async () => {
    const url = await createTestDatabase('pg_force');
    const state = openPostgres(withState(url, 'prod'));
    const [one, two] = await Promise.all([1, 2].map((i) => state.lock(request(`orgform apply --shard ${i}/2`, shard(i, 2), i), interest())));
    const lostOne = new Promise<OrgformError>((resolve) => one!.onLost(resolve));
    let twoLost = false;
    two!.onLost(() => (twoLost = true));

    const wrong = await rejection(state.forceUnlock('0123456789ab'));
    expect(wrong.message).toContain('has no lock with ID 0123456789ab; it is held by ');
    expect(wrong.message).toContain(`pid 1 on runner-1 as ci@runner-1, running "orgform apply --shard 1/2" since 2025-03-04T05:06:07.000Z (lock ID ${one!.lock.id})`);
    expect(wrong.message).toContain(`pid 2 on runner-1 as ci@runner-1, running "orgform apply --shard 2/2" since 2025-03-04T05:06:07.000Z (lock ID ${two!.lock.id})`);

    const holder = await state.forceUnlock(one!.lock.id);
    expect(holder).toMatchObject({ id: one!.lock.id, pid: 1, host: 'runner-1', partition: { index: 1, count: 2 } });
    expect((await lostOne).code).toBe('STATE_LOCK_LOST');
    await two!.journal.record(SERVICE, keyOf(2), entry('org-2'));
    expect(twoLost).toBe(false);
    await Promise.all([one!.release(), two!.release()]);

    const none = await rejection(state.forceUnlock(one!.lock.id));
    expect(none.message).toContain('There is no lock on the state');
  });
});
