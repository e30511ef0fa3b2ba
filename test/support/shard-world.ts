/**
 * A world for shards on one state: organisations each with a channel to remove and an invitation to
 * revoke (long gone: two journaled changes each), an emulator behind a proxy whose rules a test
 * sets (every request passes until it says otherwise), and the runs and checks the shared-state
 * tests share.
 */
import { join } from 'node:path';
import { expect } from 'vitest';
import { generateEmulatorData } from '../../src/emulator/generate-emulator-data.js';
import type { EmulatorData } from '../../src/emulator/data.js';
import { startFaultProxy, startWorld, type ProxyAction, type World } from '../reliability/support.js';
import { createTestDatabase } from './postgres.js';
import { watchCli } from './run-cli.js';

export const ORGANISATIONS = 16;

export interface ProxyRules {
  decide(method: string, path: string): ProxyAction;
}

/** `organisations` organisations, each with two one-shot changes to make: the service's data and the orgs.yaml declaring them. */
export function bulkWorld(organisations = ORGANISATIONS): { data: EmulatorData; config: string } {
  const data = generateEmulatorData({ organisations });
  const lines = ['version: 1', 'organisations:'];
  for (const o of data.organisations) lines.push(`  ${o.slug}:`, '    invitations:', `      revoke: [inv_${o.id}]`, '    notificationChannels:', `      remove: [chn_${o.id.slice(4)}]`);
  return { data, config: `${lines.join('\n')}\n` };
}

/** A world whose requests go through a proxy that `rules.decide` rules; `writes()` counts the writes it has seen. */
export async function shardWorld(organisations = ORGANISATIONS): Promise<{ world: World; data: EmulatorData; rules: ProxyRules; writes(): number }> {
  const { data, config } = bulkWorld(organisations);
  const rules: ProxyRules = { decide: () => ({ kind: 'pass' }) };
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
  return { world, data, rules, writes: () => writes() };
}

/** Holds every write at the proxy until `release()`. */
export function holdWrites(rules: ProxyRules): { release(): void } {
  let release!: () => void;
  const until = new Promise<void>((resolve) => (release = resolve));
  rules.decide = (method) => (method === 'GET' ? { kind: 'pass' } : { kind: 'hold', until });
  return { release };
}

/** `orgform apply --auto-approve --parallelism 1 --state STATE …`, watched. */
export function applyOn(world: World, state: string, ...more: string[]) {
  return watchCli(['apply', '--auto-approve', '--parallelism', '1', '--state', state, ...more], { cwd: world.cwd, env: world.env });
}

/** The plan after every run: nothing to do, every change of every organisation in the journal, and listed. */
export async function expectNoChanges(world: World, state: string, organisations = ORGANISATIONS): Promise<void> {
  const plan = await world.cli(['plan', '--detailed-exitcode', '--state', state]);
  expect(plan.stderr).toBe('');
  expect(plan.stdout).toContain(`${2 * organisations} one-shot changes already done according to the journal, not planned again.`);
  expect(plan.stdout).toContain('No changes.');
  expect(plan.code).toBe(0);
  const list = await world.cli(['state', 'list', '--state', state]);
  expect(list.stdout).toContain(`: ${2 * organisations} entries.`);
}

/**
 * Applies shards 1/2 and 2/2 each under a state name of its own (as the docs advised before one
 * state served every shard), merges the two names into one file with `state migrate --from --from`,
 * and checks that an unsharded plan on it shows No changes, and that merging again copies nothing.
 */
export async function expectPerShardNamesMerge(kind: 'file' | 'postgres'): Promise<void> {
  const { world } = await shardWorld();
  const database = kind === 'postgres' ? await createTestDatabase('per_shard') : '';
  const name = (i: number) => (kind === 'file' ? join(world.cwd, `shard-${i}-of-2.json`) : `${database}?state=shard-${i}-of-2`);
  for (const i of [1, 2]) expect((await applyOn(world, name(i), '--shard', `${i}/2`).done).code).toBe(0);
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
  expect(again.stdout).toContain('Copied 0 entries');
  expect(again.stdout).toContain(`(${2 * ORGANISATIONS} already there, kept as they were)`);
}
