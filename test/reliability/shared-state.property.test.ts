/**
 * One state shared by shards, as a property: random worlds, random waves of runs (unsharded, or
 * shards of a random count started together in a random order), a random run of a wave killed
 * (SIGKILL) after a random number of its writes. After every wave, what the runs acknowledged is
 * in the journal, and the journal holds nothing not done on the service. After a final unsharded
 * run: the journal holds every declared one-shot change, each done exactly once, and the plan is
 * empty. On each state of test/support/shared-state-backends.ts.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { EmulatorData } from '../../src/emulator/data.js';
import { shardOf } from '../../src/plan/select-organisations.js';
import { watchCli } from '../support/run-cli.js';
import { SHARED_STATE_BACKENDS } from '../support/shared-state-backends.js';
import { bulkWorld } from '../support/shard-world.js';
import { propertyRuns } from '../support/soak.js';
import { countEffects } from './world-model.js';
import { expectNoCrash, startFaultProxy, startWorld, waitFor, type ProxyAction, type World } from './support.js';

interface Wave {
  /** Undefined: one unsharded run; else the shard count and the shards run (1-based), in start order. */
  shards?: { count: number; run: number[] };
  /** Which run of the wave is killed (its index in start order, modulo the runs), after how many of its writes. */
  kill?: { victim: number; afterWrites: number };
}

const waveArb: fc.Arbitrary<Wave> = fc.oneof(
  fc.record({ kill: fc.option(fc.record({ victim: fc.constant(0), afterWrites: fc.integer({ min: 0, max: 4 }) }), { nil: undefined }) }, { requiredKeys: [] }),
  fc.integer({ min: 1, max: 4 }).chain((count) =>
    fc.record({
      shards: fc.record({ count: fc.constant(count), run: fc.shuffledSubarray(Array.from({ length: count }, (_, i) => i + 1), { minLength: 1 }) }),
      kill: fc.option(fc.record({ victim: fc.nat({ max: count - 1 }), afterWrites: fc.integer({ min: 0, max: 4 }) }), { nil: undefined }),
    }),
  ),
);

const RUNS = propertyRuns(15, 1);

const caseArb = fc.record({ organisations: fc.integer({ min: 4, max: 14 }), waves: fc.array(waveArb, { minLength: 1, maxLength: 3 }) });

/** The journal keys (`SERVICE KEY`) of the changes a run's JSON output ends as done. */
function acknowledged(stdout: string, service: string, idOf: Map<string, string>): string[] {
  const keys: string[] = [];
  for (const line of stdout.split('\n')) {
    if (!line.startsWith('{"type":"change_end"')) continue;
    const event = JSON.parse(line) as { outcome: string; address: string };
    if (event.outcome !== 'applied' && event.outcome !== 'already_done') continue;
    const [, slug, what, target] = /^organisations\.([\w-]+)\.(invitations\.revoke|notificationChannels\.remove)\.(\w+)$/.exec(event.address)!;
    keys.push(`${service} ${what === 'invitations.revoke' ? 'revoke-invitation' : 'remove-channel'} ${idOf.get(slug!)} ${target}`);
  }
  return keys;
}

describe.each(SHARED_STATE_BACKENDS)('one $name state shared by shards', (backend) => {
  it('holds every acknowledged one-shot change and nothing not done, whatever runs, in whatever order, and whichever is killed', async () => {
    let kills = 0;
    await fc.assert(
      fc.asyncProperty(caseArb, async ({ organisations, waves }) => {
        const { data, config } = bulkWorld(organisations);
        const rules = { decide: (_m: string, _p: string): ProxyAction => ({ kind: 'pass' }) };
        const world: World = await startWorld({ config, emulator: { data }, baseUrl: async (e) => (await startFaultProxy(e.url, (m, p) => rules.decide(m, p))).url });
        const effects = countEffects(world.emulator.store);
        const state = await backend.state(world.cwd);
        const service = world.env.ORGFORM_BASE_URL!;
        const idOf = new Map(data.organisations.map((o) => [o.slug, o.id]));
        const acked = new Set<string>();
        for (const wave of waves) {
          if (await runWave(world, state, wave, rules, data, (stdout) => acknowledged(stdout, service, idOf).forEach((k) => acked.add(k)))) kills += 1;
          await backend.settle(state);
          const journal = await backend.keys(state);
          expect([...acked].filter((k) => !journal.has(k))).toEqual([]);
          const removed = new Set(world.emulator.store.dump().channels.map((c) => c.id));
          for (const key of journal) if (key.includes(' remove-channel ')) expect(removed.has(key.split(' ').at(-1)!), key).toBe(false);
        }
        rules.decide = () => ({ kind: 'pass' });
        const final = await watchCli(['apply', '--auto-approve', '--state', state], { cwd: world.cwd, env: world.env }).done;
        expectNoCrash(final);
        expect(final.code).toBe(0);
        expect((await backend.keys(state)).size).toBe(2 * organisations);
        for (const [effect, times] of effects) expect(times, effect).toBe(1);
        expect([...effects.keys()].filter((k) => k.startsWith('deleteNotificationChannel'))).toHaveLength(organisations);
        expect((await world.cli(['plan', '--detailed-exitcode', '--state', state])).code).toBe(0);
      }),
      { numRuns: RUNS, seed: Number(process.env.ORGFORM_PROPERTY_SEED ?? 20_261_129), endOnFailure: true },
    );
    // The full run must have killed some runs part way, or it proved little.
    if (RUNS >= 10) expect(kills).toBeGreaterThan(0);
  }, 30_000 * RUNS);
});

/** Starts the wave's runs together, kills its victim after its writes, and hands each run's output to `told`; says whether a run was killed part way. */
async function runWave(world: World, state: string, wave: Wave, rules: { decide(method: string, path: string): ProxyAction }, data: EmulatorData, told: (stdout: string) => void): Promise<boolean> {
  const runs = wave.shards === undefined ? [undefined] : wave.shards.run;
  const victimIndex = wave.kill === undefined ? undefined : wave.kill.victim % runs.length;
  const victim = victimIndex === undefined ? undefined : runs[victimIndex];
  const victimOrgs = new Set(data.organisations.filter((o) => wave.shards === undefined || shardOf(o.slug, wave.shards.count) === victim).map((o) => o.id));
  let written = 0;
  let stuck = false;
  rules.decide = (method, path) => {
    if (wave.kill === undefined || method === 'GET' || ![...victimOrgs].some((id) => path.includes(`/${id}/`))) return { kind: 'pass' };
    written += 1;
    if (written <= wave.kill.afterWrites) return { kind: 'pass' };
    stuck = true;
    return { kind: 'hold', until: new Promise<void>(() => undefined) };
  };
  const started = runs.map((shard) =>
    watchCli(['apply', '--auto-approve', '--parallelism', '2', '--format', 'json', '--state', state, ...(shard === undefined ? [] : ['--shard', `${shard}/${wave.shards!.count}`])], { cwd: world.cwd, env: world.env }),
  );
  if (wave.kill !== undefined) {
    const watched = started[victimIndex!]!;
    let ended = false;
    void watched.done.then(() => (ended = true));
    await waitFor(() => stuck || ended, 30_000);
    watched.kill('SIGKILL');
  }
  let killed = false;
  for (const [i, run] of started.entries()) {
    const done = await run.done;
    told(done.stdout);
    if (victimIndex === i) {
      killed = done.signal === 'SIGKILL';
      continue;
    }
    expectNoCrash(done);
    expect(done.code, done.stdout + done.stderr).toBe(0);
  }
  return killed;
}
