/**
 * `--shard i/n` end to end: the shards of a plan partition it (every change and every declared
 * organisation in exactly one shard), and applying each shard as its own job, all on one state,
 * converges to the whole plan. (test/e2e/shared-state.test.ts holds them at once, with journaled
 * changes, kills and refusals.)
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { generateEmulatorData } from '../../src/emulator/generate-emulator-data.js';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { runCli } from '../support/run-cli.js';
import { makeWorkspace } from '../support/workspace.js';

const ORGANISATIONS = 60;
const SHARDS = 4;

let emulator: Emulator | undefined;
afterEach(async () => {
  await emulator?.stop();
  emulator = undefined;
});

interface WirePlan {
  summary: { change: number; problems: number };
  changes: Array<{ address: string; organisation: { slug: string; id: string } }>;
  unchanged: string[];
  problems: unknown[];
}

/** Every organisation declared with its billing e-mail: changed for most, as it is for every 7th; one made active. */
function config(data: ReturnType<typeof generateEmulatorData>): string {
  const lines = ['version: 1', `activeOrganisation: ${data.organisations[49]?.slug}`, 'organisations:'];
  data.organisations.forEach((org, i) => {
    const email = i % 7 === 0 ? org.billing?.billingEmail : `finance+${org.slug}@example.com`;
    lines.push(`  ${org.slug}:`, '    billing:', `      billingEmail: ${email}`);
  });
  return lines.join('\n') + '\n';
}

async function setup() {
  const data = generateEmulatorData({ organisations: ORGANISATIONS });
  emulator = await startEmulator({ data, slugDelayMs: 0 });
  const cwd = await makeWorkspace({ 'orgs.yaml': config(data) });
  const env = { ORGFORM_TOKEN: 'demo-token', ORGFORM_BASE_URL: emulator.url };
  return { cwd, env, slugs: data.organisations.map((o) => o.slug) };
}

async function planJson(args: string[], options: { cwd: string; env: Record<string, string> }): Promise<WirePlan> {
  const result = await runCli(['plan', '--format', 'json', ...args], options);
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
  return JSON.parse(result.stdout) as WirePlan;
}

describe('--shard i/n', () => {
  it('splits the plan into shards whose union is the whole plan, with no organisation in two shards', async () => {
    const { cwd, env, slugs } = await setup();
    const whole = await planJson([], { cwd, env });
    // Every organisation less every 7th unchanged, plus the active organisation.
    expect(whole.changes).toHaveLength(ORGANISATIONS - Math.ceil(ORGANISATIONS / 7) + 1);
    expect(whole.problems).toEqual([]);

    const shards: WirePlan[] = [];
    for (let i = 1; i <= SHARDS; i += 1) shards.push(await planJson(['--shard', `${i}/${SHARDS}`], { cwd, env }));

    const addresses = shards.flatMap((s) => s.changes.map((c) => c.address));
    expect(new Set(addresses).size).toBe(addresses.length); // no change in two shards
    expect([...addresses].sort()).toEqual(whole.changes.map((c) => c.address).sort());

    const organisationsOf = (s: WirePlan) => new Set([...s.changes.map((c) => c.organisation.slug), ...s.unchanged]);
    const owner = new Map<string, number>();
    shards.forEach((shard, index) => {
      expect(organisationsOf(shard).size).toBeGreaterThan(0); // FNV-1a spreads 60 slugs over all four
      for (const slug of organisationsOf(shard)) {
        expect(owner.has(slug), `${slug} is in shards ${owner.get(slug)} and ${index + 1}`).toBe(false);
        owner.set(slug, index + 1);
      }
    });
    expect([...owner.keys()].sort()).toEqual([...slugs].sort());

    // The same split every time: a shard's plan does not depend on when or where it runs.
    const again = await planJson(['--shard', `2/${SHARDS}`], { cwd, env });
    expect(again.changes.map((c) => c.address)).toEqual(shards[1]?.changes.map((c) => c.address));
  });

  it('applies each shard as its own job, all on one state, after which the whole plan shows No changes', async () => {
    const { cwd, env } = await setup();
    const whole = await planJson([], { cwd, env });
    const perShard: number[] = [];
    for (let i = 1; i <= SHARDS; i += 1) perShard.push((await planJson(['--shard', `${i}/${SHARDS}`], { cwd, env })).changes.length);
    const writesBefore = emulator!.counters.writes;

    // Concurrently, like the jobs of a pipeline, on the one default state: each holds its partition.
    const results = await Promise.all(Array.from({ length: SHARDS }, (_, k) => runCli(['apply', '--auto-approve', '--shard', `${k + 1}/${SHARDS}`], { cwd, env })));
    results.forEach((result, k) => {
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      expect(result.stdout).toContain(`Apply complete: ${perShard[k]} applied`);
    });
    expect(emulator!.counters.writes - writesBefore).toBe(whole.changes.length);
    expect(existsSync(join(cwd, '.orgform', 'state.json.lock'))).toBe(false);

    const after = await runCli(['plan', '--detailed-exitcode'], { cwd, env });
    expect(after.stderr).toBe('');
    expect(after.stdout).toContain('No changes.');
    expect(after.code).toBe(0);
  });
});
