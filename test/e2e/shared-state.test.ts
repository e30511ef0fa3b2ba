/**
 * Shards on one state, end to end with the built CLI and the emulator: the shards of one count
 * apply at once on the same --state, every later plan sees all their work, and whatever would
 * overlap a live run is refused, naming it; a linked state and a named pipe; states kept under a
 * name per shard merged into one. Runs are held at fault points (a proxy in front of the
 * emulator), never timed, on each state of test/support/shared-state-backends.ts. The heavier
 * cases (four shards, a shard killed with SIGKILL, PostgreSQL names merged) are in
 * shared-state.soak.test.ts.
 */
import { spawnSync } from 'node:child_process';
import { lstat, mkdir, readdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { generateEmulatorData } from '../../src/emulator/generate-emulator-data.js';
import { startFaultProxy, startWorld, waitFor, type FaultProxy } from '../reliability/support.js';
import { applyOn, expectNoChanges, expectPerShardNamesMerge, holdWrites, shardWorld } from '../support/shard-world.js';
import { FILE_BACKEND, SHARED_STATE_BACKENDS } from '../support/shared-state-backends.js';
import { spawnCli, watchCli } from '../support/run-cli.js';

const BACKENDS = SHARED_STATE_BACKENDS;

describe.each(BACKENDS)('shards on one $name state', (backend) => {
  it.each([2])('%i shards at once all apply, and an unsharded plan afterwards shows No changes', async (count) => {
    const { world, rules, writes } = await shardWorld();
    const state = await backend.state(world.cwd);
    const held = holdWrites(rules);
    const runs = Array.from({ length: count }, (_, i) => applyOn(world, state, '--shard', `${i + 1}/${count}`));
    // One write each in flight (--parallelism 1): every shard holds its partition at the same time.
    expect(await waitFor(() => writes() >= count, 30_000)).toBe(true);
    expect(await backend.holders(state)).toHaveLength(count);
    held.release();
    for (const run of runs) {
      const done = await run.done;
      expect(done.stderr).toBe('');
      expect(done.code).toBe(0);
    }
    expect(await backend.holders(state)).toEqual([]);
    await expectNoChanges(world, state);
  });

  it('refuses what would overlap a live shard (one applying a saved plan of its shard), naming it; force-unlock breaks that shard only, and it converges when run again', async () => {
    const { world, rules, writes } = await shardWorld();
    const state = await backend.state(world.cwd);
    // Shard 1/2 as a saved plan: its apply holds the partition the plan was made for.
    const saved = await world.cli(['plan', '--shard', '1/2', '--out', 'plan.bin', '--state', state]);
    expect(saved.code).toBe(0);
    const held = holdWrites(rules);
    const one = watchCli(['apply', 'plan.bin', '--parallelism', '1', '--state', state], { cwd: world.cwd, env: world.env });
    const two = applyOn(world, state, '--shard', '2/2');
    expect(await waitFor(() => writes() >= 2, 30_000)).toBe(true);
    const holders = await backend.holders(state);
    const shardOf = new Map(holders.map((h) => [h.id, h.shard]));
    const idOne = holders.find((h) => h.shard === '1/2')!.id;
    const idTwo = holders.find((h) => h.shard === '2/2')!.id;
    for (const [args, why] of [
      [['--shard', '1/2'], (id: string) => (shardOf.get(id) === '1/2' ? 'shard 1/2 runs already' : undefined)],
      [['--shard', '1/3'], (id: string) => `shard ${shardOf.get(id)} runs, and shard 1/3 of another count would overlap it`],
      [[], (id: string) => `shard ${shardOf.get(id)} runs, and an apply without --shard would overlap every shard`],
    ] as const) {
      const refused = await applyOn(world, state, ...args).done;
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain(`The state at ${backend.shown(state)} is locked by pid `);
      const named = /\(lock ID ([0-9a-f]{12})\): /.exec(refused.stderr)?.[1];
      expect(refused.stderr).toContain(`(lock ID ${named}): ${why(named!)}`);
    }
    const wrong = await world.cli(['force-unlock', '0123456789ab', '--state', state]);
    expect(wrong.code).toBe(1);
    const right = await world.cli(['force-unlock', idOne, '--state', state]);
    expect(right.stdout).toContain(`Released the lock ${idOne} on ${backend.shown(state)}`);
    expect(await backend.holders(state)).toEqual([{ id: idTwo, shard: '2/2' }]);
    held.release();
    const [first, second] = [await one.done, await two.done];
    expect(second.code).toBe(0);
    expect(first.code).toBe(1);
    expect(first.stdout + first.stderr).toContain(`Lost the lock on the state at ${backend.shown(state)}`);
    const again = await applyOn(world, state, '--shard', '1/2').done;
    expect(again.code).toBe(0);
    await expectNoChanges(world, state);
  });
});

describe('a file state run whose lock is broken (force-unlock) while it applies', () => {
  it('starts nothing more, not even a change that records nothing (billing): the next run has those organisations alone', async () => {
    const data = generateEmulatorData({ organisations: 8 });
    const lines = ['version: 1', 'organisations:'];
    for (const o of data.organisations) lines.push(`  ${o.slug}:`, '    billing:', `      billingEmail: new-${o.id}@example.com`);
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let proxy!: FaultProxy;
    const world = await startWorld({
      config: `${lines.join('\n')}\n`,
      emulator: { data },
      baseUrl: async (emulator) => {
        proxy = await startFaultProxy(emulator.url, (method) => (method === 'GET' ? { kind: 'pass' } : { kind: 'hold', until: released }));
        return proxy.url;
      },
    });
    const writes = () => proxy.records.filter((r) => r.method !== 'GET').length;
    const state = await FILE_BACKEND.state(world.cwd);
    const broken = applyOn(world, state);
    expect(await waitFor(() => writes() >= 1, 30_000)).toBe(true);
    const [holder] = await FILE_BACKEND.holders(state);
    expect((await world.cli(['force-unlock', holder!.id, '--state', state])).code).toBe(0);
    const next = applyOn(world, state);
    expect(await waitFor(() => writes() >= 2, 30_000)).toBe(true);
    release();
    const [first, second] = [await broken.done, await next.done];
    // Only the change in flight when its lock was broken; it used to apply all 8 alongside the next run.
    expect(first.stdout).toContain('1 applied, 0 already done, 0 skipped, 7 not started, 0 failed');
    expect(first.stderr).toContain(`Lost the lock on the state at ${state}: the lock ${holder!.id} was broken (orgform force-unlock)`);
    expect(first.code).toBe(1);
    expect(second.stdout).toContain('8 applied, 0 already done');
    expect(second.code).toBe(0);
    expect(writes()).toBe(9);
  });
});

describe('a linked file state', () => {
  it('is written through to its target, and a run through another link to it is refused while the first holds it', async () => {
    const { world, rules, writes } = await shardWorld();
    for (const dir of ['real', 'a', 'b']) await mkdir(join(world.cwd, dir));
    // A journal with no entry yet: a link must lead to one that is there.
    await writeFile(join(world.cwd, 'real', 'state.json'), '{"orgformJournal":2}\n');
    await symlink('../real/state.json', join(world.cwd, 'a', 'state.json'));
    await symlink('../real/state.json', join(world.cwd, 'b', 'state.json'));
    const held = holdWrites(rules);
    const first = applyOn(world, join(world.cwd, 'a', 'state.json'));
    expect(await waitFor(() => writes() >= 1, 30_000)).toBe(true);
    const second = await applyOn(world, join(world.cwd, 'b', 'state.json')).done;
    expect(second.code).toBe(1);
    expect(second.stderr).toContain('is locked by pid ');
    held.release();
    expect((await first.done).code).toBe(0);
    expect((await lstat(join(world.cwd, 'a', 'state.json'))).isSymbolicLink()).toBe(true);
    await expectNoChanges(world, join(world.cwd, 'b', 'state.json'));
  });
});

describe('a file state path that is a named pipe', () => {
  it('is refused before the lock, and apply ends at once (it used to hang with the lock held, past two interrupts)', async () => {
    const { world } = await shardWorld();
    const fifo = join(world.cwd, 'state.json');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    const result = await spawnCli(['apply', '--auto-approve', '--state', fifo], { cwd: world.cwd, env: world.env });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`The state ${fifo} cannot be used: it is not a regular file (a named pipe). Nothing was locked, read or written`);
    expect((await readdir(world.cwd)).filter((name) => name.startsWith('state.json'))).toEqual(['state.json']);
    expect(world.emulator.requestLog.filter((r) => r.method !== 'GET')).toEqual([]);
  });
});

describe('states kept under a name per shard, merged into one with state migrate', () => {
  it('from two file names: an unsharded plan on the merged state then shows No changes', () => expectPerShardNamesMerge('file'));
});
