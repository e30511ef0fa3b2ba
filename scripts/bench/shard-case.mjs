// The shard case (issues 24 and 35): four `orgform apply --shard i/4` at once, one process each,
// against one emulator limited to 50 requests a second (token bucket, Retry-After: 1, no headers),
// 2,000 billing changes in all, on each page behaviour of service-profiles.mjs. Each shard learns
// the limit on its own; together they should use it, not waste it. All four share one state file,
// as a pipeline's shards do (issue 36). Goal: the slowest shard within 1.10 × (requests ÷ 50), at
// most 2 % answered 429, no failure, on every profile. The bound counts every request, so reads by
// id inflate it: the requests are also set against the fewest needed (every shard lists the
// organisations twice, in the largest pages the service sends, and writes each change once).
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeApplyConfig, writeFixtures } from './fixtures.mjs';
import { median, ROOT, runOrgform, startEmulatorProcess } from './processes.mjs';
import { traceTimeline } from './request-trace.mjs';
import { chosenProfiles } from './service-profiles.mjs';

/** ORGFORM_BENCH_TRACE_SHARDS=1: each shard's requests, 5 s at a time, in the results file (`timeline`). */
const TRACE = process.env.ORGFORM_BENCH_TRACE_SHARDS === '1';
const TRACE_HOOK = join(ROOT, 'scripts', 'bench', 'request-trace.mjs');

export const SHARD_SETTINGS = { changes: 2_000, shards: 4, rps: 50, parallelism: 16, latencyMs: 20, maxWallOverBound: 1.1, max429Share: 0.02, timeoutMs: 300_000 };

/** The fewest requests the case needs: each shard's two listings (its plan's, and the one behind its writes) in the largest pages, and a write a change. */
export function fewestRequests(profile, s = SHARD_SETTINGS) {
  return s.shards * 2 * Math.ceil(s.changes / profile.servedPage) + s.changes;
}

/** `Apply results: 500 applied, …` → the counts. */
function applied(stdout) {
  const line = stdout.split('\n').find((l) => l.startsWith('Apply results:') || l.startsWith('Apply complete:'));
  const count = (what) => Number(new RegExp(`(\\d+) ${what}`).exec(line ?? '')?.[1] ?? 0);
  return { applied: count('applied'), failed: count('failed') };
}

/** The case on each profile chosen (ORGFORM_BENCH_PROFILES), one case each. */
export async function shardCases(ctx, rounds) {
  const cases = [];
  for (const profile of chosenProfiles()) cases.push(await shardCase(ctx, rounds, profile));
  return cases;
}

async function shardCase(ctx, rounds, profile) {
  const s = SHARD_SETTINGS;
  ctx.log(`bench: shards (${profile.name}): ${s.shards} × apply --shard i/${s.shards} of ${s.changes.toLocaleString('en-US')} changes against --rate-limit ${s.rps} (${rounds} round(s), about ${Math.round(s.changes / s.rps)} s each)...`);
  const fixtures = await writeFixtures(ctx.tmp, s.changes);
  const emulator = await startEmulatorProcess({ data: fixtures.dataFile, latencyMs: s.latencyMs, slugDelayMs: 0, cwd: ctx.tmp, extraArgs: profile.emulatorArgs(s.rps) });
  const fewest = fewestRequests(profile);
  const runs = [];
  try {
    for (let r = 1; r <= rounds; r += 1) {
      ctx.log(`bench: shards (${profile.name}, ${r}/${rounds})...`);
      // A round of its own e-mails (the rate case's start at 1: these from 101), and a full bucket.
      const config = writeApplyConfig(ctx.tmp, fixtures, 100 + r);
      await new Promise((done) => setTimeout(done, 2_000));
      await emulator.resetCounters();
      const started = Date.now();
      const shards = await Promise.all(
        Array.from({ length: s.shards }, (_, i) => {
          const trace = TRACE ? { NODE_OPTIONS: `--import ${TRACE_HOOK}`, ORGFORM_BENCH_TRACE: join(ctx.tmp, `trace-${profile.servedPage}-${r}-${i + 1}.log`) } : {};
          const args = ['apply', '--auto-approve', '-f', config, '--shard', `${i + 1}/${s.shards}`, '--base-url', emulator.url, '--parallelism', String(s.parallelism), '--state', join(ctx.tmp, `state-shards-${r}.json`), '--no-color'];
          return runOrgform(args, { cwd: ctx.tmp, env: { ...ctx.baseEnv(), ...trace }, timeoutMs: s.timeoutMs, ...ctx.files(`shard-${r}-${i + 1}`) });
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
        listingRequests: c.byOperation?.getOrganisations ?? 0,
        overFewest: c.total / fewest,
        fastestShardMs: Math.min(...shards.map((run) => Math.round(run.wallMs))),
        ...(TRACE ? { timeline: shards.map((_, i) => readTrace(join(ctx.tmp, `trace-${profile.servedPage}-${r}-${i + 1}.log`), started)) } : {}),
      });
    }
  } finally {
    await emulator.stop();
  }
  const summary = {};
  for (const field of ['wallMs', 'fastestShardMs', 'requests', 'readsById', 'listingRequests', 'overFewest', 'rateLimited', 'share429', 'failed', 'wallOverBound']) {
    const values = runs.map((x) => x[field]);
    summary[field] = { median: median(values), min: Math.min(...values), max: Math.max(...values) };
  }
  return { case: `shards, ${profile.name}: ${s.shards} × ${(s.changes / s.shards).toLocaleString('en-US')} changes, one limit of ${s.rps}/s`, kind: 'shards', profile: profile.name, fewest, settings: s, runs, stats: summary };
}

function readTrace(file, started) {
  return existsSync(file) ? traceTimeline(readFileSync(file, 'utf8'), started) : [];
}

export function shardGoals(cases) {
  const s = SHARD_SETTINGS;
  return cases
    .filter((c) => c.kind === 'shards')
    .flatMap((c) => [
      { goal: `shards (${c.profile}): 0 failures (every run)`, value: String(c.stats.failed.max), ok: c.stats.failed.max === 0 },
      { goal: `shards (${c.profile}): 429s <= ${s.max429Share * 100} % of requests (median)`, value: `${(c.stats.share429.median * 100).toFixed(2)} %`, ok: c.stats.share429.median <= s.max429Share },
      { goal: `shards (${c.profile}): slowest shard <= ${s.maxWallOverBound} x requests / ${s.rps} per s (median)`, value: c.stats.wallOverBound.median, ok: c.stats.wallOverBound.median <= s.maxWallOverBound },
    ]);
}

export function renderShardCase(cases, { table, ms }) {
  const shards = cases.filter((c) => c.kind === 'shards');
  if (shards.length === 0) return [];
  const range = (c, field, format) => (c.runs.length === 1 ? format(c.stats[field].median) : `${format(c.stats[field].median)} (${format(c.stats[field].min)}–${format(c.stats[field].max)})`);
  const int = (v) => String(Math.round(v));
  const pct = (v) => `${(v * 100).toFixed(2)} %`;
  const ratio = (v) => v.toFixed(3);
  return [
    table(
      ['shards sharing a limit (median, range)', 'runs', 'wall (slowest)', 'fastest shard', 'requests', 'fewest', 'requests ÷ fewest', 'listing requests', 'reads by id', '429s', '429 share', 'bound = requests ÷ rps', 'wall / bound', 'failures'],
      shards.map((c) => [c.case, c.runs.length, range(c, 'wallMs', ms), range(c, 'fastestShardMs', ms), range(c, 'requests', int), c.fewest, range(c, 'overFewest', ratio), range(c, 'listingRequests', int), range(c, 'readsById', int), range(c, 'rateLimited', int), range(c, 'share429', pct), ms(median(c.runs.map((r) => r.boundMs))), range(c, 'wallOverBound', ratio), c.stats.failed.max]),
    ),
    `shards: ${SHARD_SETTINGS.shards} processes at once, each --parallelism ${SHARD_SETTINGS.parallelism}, one state file for all; emulator --rate-limit ${SHARD_SETTINGS.rps} (Retry-After: 1, no headers), latency ${SHARD_SETTINGS.latencyMs} ms; fewest = ${SHARD_SETTINGS.shards} shards × 2 listings in the largest pages served + a write a change (listing requests and reads by id count 429s too).`,
    '',
  ];
}
