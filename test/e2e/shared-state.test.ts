/**
 * Shards on one state, end to end with the built CLI and the emulator: every shard of one count
 * applies at once on the same --state, every later plan sees all their work, a shard killed part
 * way runs again and converges without losing another's entries, and whatever would overlap a
 * live run is refused, naming it. Runs are held at fault points (a proxy in front of the
 * emulator), never timed, on each state of test/support/shared-state-backends.ts.
 */
import { spawnSync } from 'node:child_process';
import { lstat, mkdir, readdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { generateEmulatorData } from '../../src/emulator/generate-emulator-data.js';
import type { EmulatorData } from '../../src/emulator/data.js';
import { startFaultProxy, startWorld, waitFor, type ProxyAction, type World } from '../reliability/support.js';
import { createTestDatabase } from '../support/postgres.js';
import { SHARED_STATE_BACKENDS } from '../support/shared-state-backends.js';
import { spawnCli, watchCli } from '../support/run-cli.js';

const BACKENDS = SHARED_STATE_BACKENDS;

const ORGANISATIONS = 40;

/** Every organisation with a channel to remove and an invitation to revoke (long gone): two journaled changes each. */
function bulkWorld(): { data: EmulatorData; config: string } {
  const data = generateEmulatorData({ organisations: ORGANISATIONS });
  const lines = ['version: 1', 'organisations:'];
  for (const o of data.organisations) lines.push(`  ${o.slug}:`, '    invitations:', `      revoke: [inv_${o.id}]`, '    notificationChannels:', `      remove: [chn_${o.id.slice(4)}]`);
  return { data, config: `${lines.join('\n')}\n` };
}

/** A world whose writes go through a proxy that `rules.decide` rules (every request passes until a test says otherwise). */
async function shardWorld(): Promise<{ world: World; rules: { decide(method: string, path: string): ProxyAction }; writes(): number }> {
  const { data, config } = bulkWorld();
  const rules = { decide: (_m: string, _p: string): ProxyAction => ({ kind: 'pass' }) };
  let writes = () => 0;
  const world = await startWorld({
    config,
    emulator: { data },
    baseUrl: async (emulator) => {
      const proxy = await startFaultProxy(emulator.url, (method, path) => rules.decide(method, path));
      writes = () => proxy.records.filter((r) => r.method !== 'GET').length;
      return proxy.url;
    },
  });
  return { world, rules, writes: () => writes() };
}

/** Holds every write at the proxy until `release()`. */
function holdWrites(rules: { decide(method: string, path: string): ProxyAction }): { release(): void } {
  let release!: () => void;
  const until = new Promise<void>((resolve) => (release = resolve));
  rules.decide = (method) => (method === 'GET' ? { kind: 'pass' } : { kind: 'hold', until });
  return { release };
}

function apply(world: World, state: string, ...more: string[]) {
  return watchCli(['apply', '--auto-approve', '--parallelism', '1', '--state', state, ...more], { cwd: world.cwd, env: world.env });
}

async function expectNoChanges(world: World, state: string): Promise<void> {
  const plan = await world.cli(['plan', '--detailed-exitcode', '--state', state]);
  expect(plan.stderr).toBe('');
  expect(plan.stdout).toContain(`${2 * ORGANISATIONS} one-shot changes already done according to the journal, not planned again.`);
  expect(plan.stdout).toContain('No changes.');
  expect(plan.code).toBe(0);
  const list = await world.cli(['state', 'list', '--state', state]);
  expect(list.stdout).toContain(`: ${2 * ORGANISATIONS} entries.`);
}

describe.each(BACKENDS)('shards on one $name state', (backend) => {
  it.each([2, 4])('%i shards at once all apply, and an unsharded plan afterwards shows No changes', async (count) => {
    const { world, rules, writes } = await shardWorld();
    const state = await backend.state(world.cwd);
    const held = holdWrites(rules);
    const runs = Array.from({ length: count }, (_, i) => apply(world, state, '--shard', `${i + 1}/${count}`));
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

  it('refuses what would overlap a live shard, naming it; force-unlock breaks that shard only, and it converges when run again', async () => {
    const { world, rules, writes } = await shardWorld();
    const state = await backend.state(world.cwd);
    const held = holdWrites(rules);
    const one = apply(world, state, '--shard', '1/2');
    const two = apply(world, state, '--shard', '2/2');
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
      const refused = await apply(world, state, ...args).done;
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain(`The state at ${state} is locked by pid `);
      const named = /\(lock ID ([0-9a-f]{12})\): /.exec(refused.stderr)?.[1];
      expect(refused.stderr).toContain(`(lock ID ${named}): ${why(named!)}`);
    }
    const wrong = await world.cli(['force-unlock', '0123456789ab', '--state', state]);
    expect(wrong.code).toBe(1);
    const right = await world.cli(['force-unlock', idOne, '--state', state]);
    expect(right.stdout).toContain(`Released the lock ${idOne} on ${state}`);
    expect(await backend.holders(state)).toEqual([{ id: idTwo, shard: '2/2' }]);
    held.release();
    const [first, second] = [await one.done, await two.done];
    expect(second.code).toBe(0);
    expect(first.code).toBe(1);
    expect(first.stdout + first.stderr).toContain(`Lost the lock on the state at ${state}`);
    const again = await apply(world, state, '--shard', '1/2').done;
    expect(again.code).toBe(0);
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
    const runs = [1, 2, 3, 4].map((i) => apply(world, state, '--shard', `${i}/4`));
    expect(await waitFor(() => passed >= 3, 30_000)).toBe(true);
    runs[1]!.kill('SIGKILL');
    for (const [i, run] of runs.entries()) expect((await run.done).code, `shard ${i + 1}`).toBe(i === 1 ? -1 : 0);
    rules.decide = () => ({ kind: 'pass' });
    // The killed shard's hold was dropped as its process was found gone (by whichever run came next).
    expect(await backend.holders(state)).toEqual([]);
    const again = await apply(world, state, '--shard', '2/4').done;
    expect(again.code).toBe(0);
    await expectNoChanges(world, state);
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
    const first = apply(world, join(world.cwd, 'a', 'state.json'));
    expect(await waitFor(() => writes() >= 1, 30_000)).toBe(true);
    const second = await apply(world, join(world.cwd, 'b', 'state.json')).done;
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
  it.each(['file', 'postgres'] as const)('from two %s names: an unsharded plan on the merged state then shows No changes', async (kind) => {
    const { world } = await shardWorld();
    const database = kind === 'postgres' ? await createTestDatabase('per_shard') : '';
    const name = (i: number) => (kind === 'file' ? join(world.cwd, `shard-${i}-of-2.json`) : `${database}?state=shard-${i}-of-2`);
    for (const i of [1, 2]) expect((await apply(world, name(i), '--shard', `${i}/2`).done).code).toBe(0);
    // Each name holds its shard's work alone: an unsharded plan on one of them plans the other's again.
    expect((await world.cli(['plan', '--detailed-exitcode', '--state', name(1)])).code).toBe(2);

    const one = join(world.cwd, 'one.json');
    const migrated = await world.cli(['state', 'migrate', '--from', name(1), '--from', name(2), '--to', one]);
    expect(migrated.stderr).toBe('');
    expect(migrated.stdout).toContain(`Copied ${2 * ORGANISATIONS} entries from `);
    expect(migrated.stdout).toContain(`Read back and checked: ${one} holds all ${2 * ORGANISATIONS} entries of `);
    await expectNoChanges(world, one);
    // Again: everything is there, nothing is copied.
    const again = await world.cli(['state', 'migrate', '--from', name(1), '--from', name(2), '--to', one]);
    expect(again.stdout).toContain(`Copied 0 entries`);
    expect(again.stdout).toContain(`(${2 * ORGANISATIONS} already there, kept as they were)`);
  });
});
