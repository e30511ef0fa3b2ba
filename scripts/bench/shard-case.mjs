// The shard case (issue 24): four `orgform apply --shard i/4` at once, one process each, against one
// emulator limited to 50 requests a second (token bucket, Retry-After: 1, no headers), 2,000 billing
// changes in all. Each shard learns the limit on its own; together they should use it, not waste it.
// All four share one state file, as a pipeline's shards do (issue 36). Goal: the slowest shard
// within 1.15 × (requests ÷ 50), at most 2 % answered 429, no failure.
import { join } from 'node:path';
import { writeApplyConfig, writeFixtures } from './fixtures.mjs';
import { median, runOrgform, startEmulatorProcess } from './processes.mjs';

export const SHARD_SETTINGS = { changes: 2_000, shards: 4, rps: 50, parallelism: 16, latencyMs: 20, maxWallOverBound: 1.15, max429Share: 0.02, timeoutMs: 300_000 };

/** `Apply results: 500 applied, …` → the counts. */
function applied(stdout) {
  const line = stdout.split('\n').find((l) => l.startsWith('Apply results:') || l.startsWith('Apply complete:'));
  const count = (what) => Number(new RegExp(`(\\d+) ${what}`).exec(line ?? '')?.[1] ?? 0);
  return { applied: count('applied'), failed: count('failed') };
}

export async function shardCase(ctx, rounds) {
  const s = SHARD_SETTINGS;
  ctx.log(`bench: shards: ${s.shards} × apply --shard i/${s.shards} of ${s.changes.toLocaleString('en-US')} changes against --rate-limit ${s.rps} (${rounds} round(s), about ${Math.round(s.changes / s.rps)} s each)...`);
  const fixtures = await writeFixtures(ctx.tmp, s.changes);
  const emulator = await startEmulatorProcess({ data: fixtures.dataFile, latencyMs: s.latencyMs, slugDelayMs: 0, cwd: ctx.tmp, extraArgs: ['--rate-limit', String(s.rps)] });
  const runs = [];
  try {
    for (let r = 1; r <= rounds; r += 1) {
      ctx.log(`bench: shards (${r}/${rounds})...`);
      // A round of its own e-mails (the rate case's start at 1: these from 101), and a full bucket.
      const config = writeApplyConfig(ctx.tmp, fixtures, 100 + r);
      await new Promise((done) => setTimeout(done, 2_000));
      await emulator.resetCounters();
      const started = Date.now();
      const shards = await Promise.all(
        Array.from({ length: s.shards }, (_, i) => {
          const args = ['apply', '--auto-approve', '-f', config, '--shard', `${i + 1}/${s.shards}`, '--base-url', emulator.url, '--parallelism', String(s.parallelism), '--state', join(ctx.tmp, `state-shards-${r}.json`), '--no-color'];
          return runOrgform(args, { cwd: ctx.tmp, env: ctx.baseEnv(), timeoutMs: s.timeoutMs, ...ctx.files(`shard-${r}-${i + 1}`) });
        }),
      );
      const wallMs = Date.now() - started;
      const c = await emulator.counters();
      const counts = shards.map((run) => applied(run.stdout));
      const boundMs = (c.total / s.rps) * 1000;
      runs.push({
        wallMs,
        shardWallMs: shards.map((run) => Math.round(run.wallMs)),
        requests: c.total,
        rateLimited: c.rateLimited,
        share429: c.rateLimited / c.total,
        applied: counts.reduce((sum, x) => sum + x.applied, 0),
        failed: counts.reduce((sum, x) => sum + x.failed, 0) + shards.filter((run) => run.code !== 0).length,
        boundMs,
        wallOverBound: wallMs / boundMs,
        // Reads by id: organisations whose read from the listing behind the writes aged past the
        // read age bound before their write went out (docs/performance.md, shards).
        readsById: c.byOperation?.getOrganisation ?? 0,
        fastestShardMs: Math.min(...shards.map((run) => Math.round(run.wallMs))),
      });
    }
  } finally {
    await emulator.stop();
  }
  const summary = {};
  for (const field of ['wallMs', 'fastestShardMs', 'requests', 'readsById', 'rateLimited', 'share429', 'failed', 'wallOverBound']) {
    const values = runs.map((x) => x[field]);
    summary[field] = { median: median(values), min: Math.min(...values), max: Math.max(...values) };
  }
  return { case: `shards: ${s.shards} × ${(s.changes / s.shards).toLocaleString('en-US')} changes, one limit of ${s.rps}/s`, kind: 'shards', settings: s, runs, stats: summary };
}

export function shardGoals(cases) {
  const s = SHARD_SETTINGS;
  return cases
    .filter((c) => c.kind === 'shards')
    .flatMap((c) => [
      { goal: 'shards: 0 failures (every run)', value: String(c.stats.failed.max), ok: c.stats.failed.max === 0 },
      { goal: `shards: 429s <= ${s.max429Share * 100} % of requests (median)`, value: `${(c.stats.share429.median * 100).toFixed(2)} %`, ok: c.stats.share429.median <= s.max429Share },
      { goal: `shards: slowest shard <= ${s.maxWallOverBound} x requests / ${s.rps} per s (median)`, value: c.stats.wallOverBound.median, ok: c.stats.wallOverBound.median <= s.maxWallOverBound },
    ]);
}

export function renderShardCase(cases, { table, ms }) {
  const shards = cases.filter((c) => c.kind === 'shards');
  if (shards.length === 0) return [];
  return [
    table(
      ['shards sharing a limit (median)', 'runs', 'wall (slowest)', 'fastest shard', 'requests', 'reads by id', '429s', '429 share', 'bound = requests ÷ rps', 'wall / bound', 'failures'],
      shards.map((c) => [c.case, c.runs.length, ms(c.stats.wallMs.median), ms(c.stats.fastestShardMs.median), Math.round(c.stats.requests.median), Math.round(c.stats.readsById.median), Math.round(c.stats.rateLimited.median), `${(c.stats.share429.median * 100).toFixed(2)} %`, ms(median(c.runs.map((r) => r.boundMs))), c.stats.wallOverBound.median.toFixed(3), c.stats.failed.max]),
    ),
    `shards: ${SHARD_SETTINGS.shards} processes at once, each --parallelism ${SHARD_SETTINGS.parallelism}, one state file for all; emulator --rate-limit ${SHARD_SETTINGS.rps} (Retry-After: 1, no headers), latency ${SHARD_SETTINGS.latencyMs} ms.`,
    '',
  ];
}
