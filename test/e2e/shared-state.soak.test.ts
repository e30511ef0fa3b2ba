/**
 * The heavier cases of shards on one state (shared-state.test.ts has the rest), in the soak suite:
 * four shards at once, a shard killed with SIGKILL part way that runs again and converges with no
 * other shard's entries lost, and per-shard PostgreSQL state names merged into one file.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { waitFor } from '../reliability/support.js';
import { SHARED_STATE_BACKENDS } from '../support/shared-state-backends.js';
import { applyOn, expectNoChanges, expectPerShardNamesMerge, holdWrites, shardWorld } from '../support/shard-world.js';

describe.each(SHARED_STATE_BACKENDS)('shards on one $name state', (backend) => {
  it('4 shards at once all apply, and an unsharded plan afterwards shows No changes', async () => {
    const { world, rules, writes } = await shardWorld();
    const state = await backend.state(world.cwd);
    const held = holdWrites(rules);
    const runs = [1, 2, 3, 4].map((i) => applyOn(world, state, '--shard', `${i}/4`));
    // One write each in flight (--parallelism 1): every shard holds its partition at the same time.
    expect(await waitFor(() => writes() >= 4, 30_000)).toBe(true);
    expect(await backend.holders(state)).toHaveLength(4);
    held.release();
    for (const run of runs) expect((await run.done).code).toBe(0);
    await expectNoChanges(world, state);
  });

  it('a shard killed with SIGKILL part way runs again and converges; no other shard’s entry is lost', async () => {
    const { world, rules } = await shardWorld();
    const state = await backend.state(world.cwd);
    const planned = await world.cli(['plan', '--format', 'json', '--shard', '2/4', '--state', state]);
    const ids = new Set((JSON.parse(planned.stdout) as { changes: Array<{ organisation: { id: string } }> }).changes.map((c) => c.organisation.id));
    // Shard 2's third write, and every one after, never comes back: it is killed there.
    let passed = 0;
    const stuck = new Promise<void>(() => undefined);
    rules.decide = (method, path) => {
      if (method === 'GET' || ![...ids].some((id) => path.includes(`/${id}/`))) return { kind: 'pass' };
      passed += 1;
      return passed <= 2 ? { kind: 'pass' } : { kind: 'hold', until: stuck };
    };
    const runs = [1, 2, 3, 4].map((i) => applyOn(world, state, '--shard', `${i}/4`));
    expect(await waitFor(() => passed >= 3, 30_000)).toBe(true);
    runs[1]!.kill('SIGKILL');
    for (const [i, run] of runs.entries()) expect((await run.done).code, `shard ${i + 1}`).toBe(i === 1 ? -1 : 0);
    rules.decide = () => ({ kind: 'pass' });
    // Only the killed shard's hold can be left: dropped as its process was found gone by a run that
    // came after the kill, if any did (the others may all have ended first), else by its own re-run.
    await backend.settle(state);
    expect((await backend.holders(state)).map((h) => h.shard ?? 'whole').filter((shard) => shard !== '2/4')).toEqual([]);
    const again = await applyOn(world, state, '--shard', '2/4').done;
    expect(again.code).toBe(0);
    await backend.settle(state);
    expect(await backend.holders(state)).toEqual([]);
    await expectNoChanges(world, state);
  });
});

describe('states kept under a name per shard in PostgreSQL, merged into one with state migrate', () => {
  it('from two postgres names: an unsharded plan on the merged state then shows No changes', () => expectPerShardNamesMerge('postgres'));
});
