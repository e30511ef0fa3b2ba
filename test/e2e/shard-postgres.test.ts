/**
 * A shard killed (SIGKILL) or cut off from its PostgreSQL state (pg_terminate_backend) mid-run, end
 * to end: it loses no entry it acknowledged nor any other shard's, says what was done when it can,
 * and converges when run again. (Shards at once and the refusals run on every shared state in
 * shared-state.test.ts.)
 *
 * Every organisation has two one-shot changes (a channel to remove, an invitation to revoke that is
 * gone already), so that every shard records entries. A run is held at a fault point by the
 * emulator: its first DELETEs pass, every later one hangs.
 */
import { describe, expect, it } from 'vitest';
import { generateEmulatorData } from '../../src/emulator/generate-emulator-data.js';
import type { Emulator } from '../../src/emulator/server.js';
import { setupEmulatorWorkspace } from '../support/emulator-workspace.js';
import { createTestDatabase, query } from '../support/postgres.js';
import { runCli, watchCli } from '../support/run-cli.js';

const ORGANISATIONS = 40;
/** Batches of a few milliseconds: each entry is committed soon after its change. */
const QUICK_STATE = { ORGFORM_STATE_FLUSH_MS: '10' };

function config(data: ReturnType<typeof generateEmulatorData>): string {
  const lines = ['version: 1', 'organisations:'];
  for (const org of data.organisations) {
    lines.push(`  ${org.slug}:`, '    invitations:', `      revoke: [inv_gone_${org.id}]`, '    notificationChannels:', `      remove: [chn_${org.id.slice(4)}]`);
  }
  return `${lines.join('\n')}\n`;
}

async function setup(name: string) {
  const data = generateEmulatorData({ organisations: ORGANISATIONS });
  const world = await setupEmulatorWorkspace({ 'orgs.yaml': config(data) }, { data });
  const state = `${await createTestDatabase(name)}?state=prod`;
  const env = { ...world.env, ...QUICK_STATE, ORGFORM_STATE: state };
  return { ...world, env, state, database: state.replace(/\?.*$/, '') };
}

const apply = (shard: string | undefined, world: { cwd: string; env: Record<string, string> }) =>
  runCli(['apply', '--auto-approve', '--no-color', ...(shard === undefined ? [] : ['--shard', shard])], { cwd: world.cwd, env: world.env });

/** Lets `k` DELETEs through, and holds every later one unanswered (until the emulator's faults are cleared and the client retries). */
function holdDeletesAfter(emulator: Emulator, k: number): void {
  emulator.faults.add({ method: 'DELETE', times: k, fault: { kind: 'delay-headers', ms: 0 } });
  emulator.faults.add({ method: 'DELETE', times: Infinity, fault: { kind: 'hang' } });
}

/** The entries recorded by shard `index` of its registration (the run holding it now). */
async function entriesOfShard(database: string, index: number): Promise<{ run: string | undefined; count: number; backend: number | undefined }> {
  const [holder] = await query<{ lock_id: string; backend_pid: number }>(database, 'SELECT lock_id, backend_pid FROM orgform.holders WHERE shard_index = $1', [index]).catch(() => []);
  if (holder === undefined) return { run: undefined, count: 0, backend: undefined };
  const [{ n }] = (await query<{ n: number }>(database, 'SELECT count(*)::int AS n FROM orgform.journal WHERE run = $1', [holder.lock_id])) as [{ n: number }];
  return { run: holder.lock_id, count: n, backend: holder.backend_pid };
}

async function until<T>(probe: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  for (;;) {
    const value = await probe();
    if (done(value)) return value;
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function expectEverythingRecorded(world: { cwd: string; env: Record<string, string> }, database: string): Promise<void> {
  const plan = await runCli(['plan', '--detailed-exitcode', '--no-color'], world);
  expect(plan.stderr).toBe('');
  expect(plan.stdout).toContain('No changes.');
  expect(plan.code).toBe(0);
  expect(await query(database, 'SELECT count(*)::int AS n FROM orgform.journal')).toEqual([{ n: 2 * ORGANISATIONS }]);
}

describe('a shard on a PostgreSQL state', () => {
  it('a shard killed (SIGKILL) mid-run keeps what it recorded, no other shard loses an entry, and run again it converges', async () => {
    const world = await setup('shard_killed');
    holdDeletesAfter(world.emulator, 3);
    const killed = watchCli(['apply', '--auto-approve', '--shard', '2/4', '--parallelism', '2'], { cwd: world.cwd, env: world.env });
    const held = await until(() => entriesOfShard(world.database, 2), (shard) => shard.count === 3);
    // Held: three deletes done and committed, every later one unanswered. The other shards start now.
    world.emulator.faults.clear();
    const others = Promise.all(['1/4', '3/4', '4/4'].map((shard) => apply(shard, world)));
    killed.kill('SIGKILL');
    expect((await killed.done).signal).toBe('SIGKILL');
    for (const result of await others) expect(result.code).toBe(0);

    // Its session ended with it: the shard is free again, and its three entries are kept.
    await until(async () => (await query(world.database, 'SELECT 1 FROM pg_stat_activity WHERE pid = $1', [held.backend])).length, (n) => n === 0);
    expect(await query(world.database, 'SELECT count(*)::int AS n FROM orgform.journal WHERE run = $1', [held.run])).toEqual([{ n: 3 }]);
    const again = await apply('2/4', world);
    // The killed run's registration is dropped by whichever run finds its session gone first: one of
    // the others, if any took the state after the kill, else this one, which says so.
    expect(again.stderr).toMatch(/^(Took over a stale lock on postgres:\/\/\S+ left by pid \d+ \(no longer running\)\.\n)?$/);
    expect(again.code).toBe(0);
    await expectEverythingRecorded(world, world.database);
  });

  it('a shard whose database connection is dropped mid-run (pg_terminate_backend) stops, saying what was done; the other shard goes on; run again, it converges', async () => {
    const world = await setup('shard_dropped');
    holdDeletesAfter(world.emulator, 2);
    // The hung deletes give up after a second: their changes fail, and nothing new starts.
    const cut = watchCli(['apply', '--auto-approve', '--no-color', '--shard', '1/2', '--parallelism', '2'], { cwd: world.cwd, env: { ...world.env, ORGFORM_REQUEST_TIMEOUT_MS: '1000' } });
    const held = await until(() => entriesOfShard(world.database, 1), (shard) => shard.count === 2);
    await query(world.database, 'SELECT pg_terminate_backend($1, 5000)', [held.backend]);
    await cut.written('stderr', /Lost the lock on the state at/);
    world.emulator.faults.clear();
    // The other shard of the count runs meanwhile, on its own session.
    const other = await apply('2/2', world);
    expect(other.code).toBe(0);

    const result = await cut.done;
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('the database connection failed (terminating connection due to administrator command');
    expect(result.stderr).toContain('every entry recorded before is written, and none recorded after will be. Nothing new was started');
    // What it did is said: the first organisation's two deletes at once, its invitation found gone and
    // its channel removed (both recorded); the next one's two in flight failed; nothing new started.
    expect(result.stdout).toMatch(/Apply interrupted: 1 applied, 1 already done, 2 failed, \d+ not started/);
    expect(await query(world.database, 'SELECT count(*)::int AS n FROM orgform.journal WHERE run = $1', [held.run])).toEqual([{ n: 2 }]);

    const again = await apply('1/2', world);
    expect(again.code).toBe(0);
    await expectEverythingRecorded(world, world.database);
  });
});

