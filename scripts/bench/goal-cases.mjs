// The bench's goal cases (issue: rate limits, expiring tokens, memory, CI output), each run as the
// built CLI against the emulator in its own process, as the speed cases are:
//
//   rate     5,000 billing changes against `emulator --rate-limit 50`, --parallelism 32
//   token    10,000 billing changes, every token expiring after 1,000 requests, a token command
//   output   30,000 billing changes in a CI log (no terminal, text format): lines of output
//   memory   plan of 100,000 organisations (no change, then a billing change each: as text, as
//            --format json and with --out), apply of
//            100,000 changes (--parallelism 32), plan of
//            1,000,000; 5 ms latency, pages of 500; peak RSS (the apply also with V8's own heap
//            growth, without orgform's cap on it)
//
// Each returns one entry per run; summarise() makes the median and the range of what matters.
import { closeSync, existsSync, openSync, readFileSync, readSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { writeApplyConfig, writeFixtures } from './fixtures.mjs';
import { BIN, median, ROOT, runOrgform, startEmulatorProcess } from './processes.mjs';
import { chosenProfiles } from './service-profiles.mjs';

export const GOAL_SETTINGS = {
  rate: { changes: 5_000, rps: 50, parallelism: 32, latencyMs: 20, max429Share: 0.02, maxWallOverBound: 1.1, timeoutMs: 400_000 },
  token: { changes: 10_000, lifetimeRequests: 1_000, parallelism: 16, latencyMs: 20, timeoutMs: 300_000 },
  output: { changes: 30_000, parallelism: 16, latencyMs: 20, maxLines: 500, timeoutMs: 400_000 },
  memory: {
    latencyMs: 5,
    parallelism: 32,
    planSize: 100_000,
    applySize: 100_000,
    bigPlanSize: 1_000_000,
    perFile: 10_000,
    maxRssMB: 256,
    // Issue 35: a plan of 100,000 with a change each and an apply of 100,000 in 200 MB, a plan of
    // 1,000,000 in half a gigabyte.
    changesMaxRssMB: 200,
    bigMaxRssMB: 512,
    timeoutMs: 1_200_000,
  },
};

const HEAP_CAP_BUILT = () => existsSync(join(ROOT, 'dist', 'cli', 'limit-heap-growth.js'));

/** `Apply results: 5000 applied, 0 already done, 0 skipped, 0 not started, 0 failed (...)` → the counts. */
function applyResults(stdout) {
  const line = stdout.split('\n').find((l) => l.startsWith('Apply results:'));
  if (!line) return undefined;
  const count = (what) => Number(new RegExp(`(\\d+) ${what}`).exec(line)?.[1] ?? NaN);
  return { applied: count('applied'), failed: count('failed'), skipped: count('skipped'), notStarted: count('not started') };
}

function lineCount(text) {
  if (text === '') return 0;
  return text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
}

/** Runs `orgform apply --auto-approve` once; checks it ran (exit code aside: a failure is a figure here). */
async function runApply(ctx, { emulator, config, n, parallelism, label, env, timeoutMs, extraArgs = [] }) {
  const args = ['apply', '--auto-approve', '-f', config, '--base-url', emulator.url, '--parallelism', String(parallelism), '--state', join(ctx.tmp, `state-${label}.json`), '--no-color', ...extraArgs];
  const run = await runOrgform(args, { cwd: ctx.tmp, env, timeoutMs, ...ctx.files(label) });
  if (run.timedOut) throw new Error(`${label}: still running after ${Math.round(timeoutMs / 1000)} s, stopped`);
  const results = applyResults(run.stdout);
  if (!results) throw ctx.fail(`orgform apply (${label})`, run);
  if (results.applied + results.failed + results.skipped + results.notStarted !== n) {
    throw new Error(`${label}: apply reported ${JSON.stringify(results)} for ${n} changes`);
  }
  return { run, results };
}

// ---------------------------------------------------------------------------------------------
/** The rate case on each page behaviour chosen (service-profiles.mjs), one case each. */
export async function rateCases(ctx, rounds) {
  const cases = [];
  for (const profile of chosenProfiles()) cases.push(await rateCase(ctx, rounds, profile));
  return cases;
}

async function rateCase(ctx, rounds, profile) {
  const s = GOAL_SETTINGS.rate;
  ctx.log(`bench: rate limit (${profile.name}): ${s.changes.toLocaleString('en-US')} changes against --rate-limit ${s.rps}, --parallelism ${s.parallelism} (${rounds} round(s), about ${Math.round(s.changes / s.rps)} s each)...`);
  const fixtures = await writeFixtures(ctx.tmp, s.changes);
  const emulator = await startEmulatorProcess({ data: fixtures.dataFile, latencyMs: s.latencyMs, slugDelayMs: 0, cwd: ctx.tmp, extraArgs: profile.emulatorArgs(s.rps) });
  const runs = [];
  try {
    for (let r = 1; r <= rounds; r += 1) {
      ctx.log(`bench: rate (${profile.name}, ${r}/${rounds})...`);
      const config = writeApplyConfig(ctx.tmp, fixtures, r);
      // A bucket left half empty by the previous round would count against this one.
      await new Promise((done) => setTimeout(done, 2_000));
      await emulator.resetCounters();
      const { run, results } = await runApply(ctx, { emulator, config, n: s.changes, parallelism: s.parallelism, label: `rate-${r}`, env: ctx.baseEnv(), timeoutMs: s.timeoutMs });
      const c = await emulator.counters();
      const boundMs = (c.total / s.rps) * 1000;
      runs.push({
        wallMs: run.wallMs,
        requests: c.total,
        rateLimited: c.rateLimited,
        share429: c.rateLimited / c.total,
        writes: c.writes,
        failed: results.failed,
        applied: results.applied,
        exitCode: run.code,
        boundMs,
        wallOverBound: run.wallMs / boundMs,
        peakRssMB: run.peakRssKB / 1024,
        maxInFlight: c.maxInFlight,
        readsById: c.byOperation?.getOrganisation ?? 0,
      });
    }
  } finally {
    await emulator.stop();
  }
  return {
    case: `rate, ${profile.name}: ${s.changes.toLocaleString('en-US')} changes, limit ${s.rps}/s, parallelism ${s.parallelism}`,
    kind: 'rate',
    profile: profile.name,
    settings: s,
    runs,
    ...summarise(runs, ['wallMs', 'requests', 'readsById', 'rateLimited', 'share429', 'failed', 'wallOverBound', 'peakRssMB']),
  };
}

// ---------------------------------------------------------------------------------------------
export async function tokenCase(ctx, rounds) {
  const s = GOAL_SETTINGS.token;
  ctx.log(`bench: expiring token: ${s.changes.toLocaleString('en-US')} changes, every token dies after ${s.lifetimeRequests} requests, ORGFORM_TOKEN_COMMAND (${rounds} round(s))...`);
  const fixtures = await writeFixtures(ctx.tmp, s.changes);
  const emulator = await startEmulatorProcess({
    data: fixtures.dataFile,
    latencyMs: s.latencyMs,
    slugDelayMs: 0,
    cwd: ctx.tmp,
    extraArgs: ['--token-lifetime-requests', String(s.lifetimeRequests)],
  });
  const runs = [];
  try {
    for (let r = 1; r <= rounds; r += 1) {
      ctx.log(`bench: token (${r}/${rounds})...`);
      const config = writeApplyConfig(ctx.tmp, fixtures, r);
      const tally = join(ctx.tmp, `token-runs-${r}.txt`);
      // docs/cli.md's command, plus a tally of its runs (to a file: stdout is the token).
      const command = `printf 'x\\n' >> '${tally}' && node '${BIN}' emulator token '${emulator.url}'`;
      const env = ctx.baseEnv();
      delete env.ORGFORM_TOKEN;
      env.ORGFORM_TOKEN_COMMAND = command;
      await emulator.resetCounters();
      const { run, results } = await runApply(ctx, { emulator, config, n: s.changes, parallelism: s.parallelism, label: `token-${r}`, env, timeoutMs: s.timeoutMs });
      const c = await emulator.counters();
      const commandRuns = existsSync(tally) ? lineCount(readFileSync(tally, 'utf8')) : 0;
      runs.push({
        wallMs: run.wallMs,
        requests: c.total,
        // Every request is either a listing page, a processed write, or one refused (401: the token ran out).
        refused: c.total - c.writes - c.byOperation.getOrganisations,
        writes: c.writes,
        commandRuns,
        failed: results.failed,
        applied: results.applied,
        exitCode: run.code,
        oneRun: run.code === 0 && results.failed === 0 && results.applied === s.changes,
        peakRssMB: run.peakRssKB / 1024,
      });
    }
  } finally {
    await emulator.stop();
  }
  return {
    case: `token: ${s.changes.toLocaleString('en-US')} changes, token expires every ${s.lifetimeRequests.toLocaleString('en-US')} requests`,
    kind: 'token',
    settings: s,
    runs,
    ...summarise(runs, ['wallMs', 'requests', 'refused', 'commandRuns', 'failed', 'peakRssMB']),
  };
}

// ---------------------------------------------------------------------------------------------
export async function outputCase(ctx, rounds) {
  const s = GOAL_SETTINGS.output;
  ctx.log(`bench: CI output: ${s.changes.toLocaleString('en-US')} changes in a log (${rounds} round(s))...`);
  const fixtures = await writeFixtures(ctx.tmp, s.changes);
  const emulator = await startEmulatorProcess({ data: fixtures.dataFile, latencyMs: s.latencyMs, slugDelayMs: 0, cwd: ctx.tmp });
  const runs = [];
  try {
    for (let r = 1; r <= rounds; r += 1) {
      ctx.log(`bench: output (${r}/${rounds})...`);
      const config = writeApplyConfig(ctx.tmp, fixtures, r);
      await emulator.resetCounters();
      // A CI job: stdout and stderr are files (no terminal), text format, CI=true.
      const env = { ...ctx.baseEnv(), CI: 'true' };
      const { run, results } = await runApply(ctx, { emulator, config, n: s.changes, parallelism: s.parallelism, label: `output-${r}`, env, timeoutMs: s.timeoutMs });
      const c = await emulator.counters();
      if (c.writes !== s.changes) throw new Error(`output round ${r}: ${c.writes} writes, expected ${s.changes}`);
      runs.push({
        wallMs: run.wallMs,
        stdoutLines: lineCount(run.stdout),
        stderrLines: lineCount(run.stderr),
        lines: lineCount(run.stdout) + lineCount(run.stderr),
        bytes: Buffer.byteLength(run.stdout) + Buffer.byteLength(run.stderr),
        failed: results.failed,
        exitCode: run.code,
        peakRssMB: run.peakRssKB / 1024,
        sample: run.stdout.split('\n').slice(0, 40),
      });
    }
  } finally {
    await emulator.stop();
  }
  return {
    case: `output: ${s.changes.toLocaleString('en-US')} changes in a CI log`,
    kind: 'output',
    settings: s,
    runs,
    ...summarise(runs, ['wallMs', 'lines', 'bytes', 'failed', 'peakRssMB']),
  };
}

// ---------------------------------------------------------------------------------------------
/**
 * Plan of 100,000, apply of 100,000 (as built and with V8's own heap growth), then plan of
 * 1,000,000 unless `big` is false.
 */
export async function memoryCases(ctx, rounds, { big = true } = {}) {
  const s = GOAL_SETTINGS.memory;
  const out = [];
  ctx.log(`bench: memory: ${s.planSize.toLocaleString('en-US')} organisations: writing fixtures...`);
  const fixtures = await writeFixtures(ctx.tmp, s.planSize, { perFile: s.perFile });
  const emulator = await startEmulatorProcess({ data: fixtures.dataFile, latencyMs: s.latencyMs, slugDelayMs: 0, cwd: ctx.tmp });
  try {
    const plans = [];
    for (let r = 1; r <= rounds; r += 1) {
      ctx.log(`bench: memory: plan ${s.planSize.toLocaleString('en-US')} (${r}/${rounds})...`);
      plans.push(await memoryPlan(ctx, emulator, fixtures, `mem-plan-${s.planSize}-${r}`));
    }
    out.push({ case: `memory: plan ${s.planSize.toLocaleString('en-US')}`, kind: 'memory', goalMB: s.maxRssMB, runs: plans, ...summarise(plans, ['wallMs', 'peakRssMB', 'requests']) });

    // The same plan with a billing change for every organisation: the plan and its text are then
    // as large as they get (the text alone is over 10 MB).
    const changeConfig = writeApplyConfig(ctx.tmp, fixtures, 0);
    const changing = [];
    for (let r = 1; r <= rounds; r += 1) {
      ctx.log(`bench: memory: plan ${s.planSize.toLocaleString('en-US')} with a change each (${r}/${rounds})...`);
      changing.push(await memoryPlan(ctx, emulator, { ...fixtures, planFile: changeConfig }, `mem-plan-changes-${s.planSize}-${r}`, s.planSize));
    }
    out.push({ case: `memory: plan ${s.planSize.toLocaleString('en-US')}, a change each`, kind: 'memory', goalMB: s.changesMaxRssMB, runs: changing, ...summarise(changing, ['wallMs', 'peakRssMB', 'requests']) });

    // The same plan as the pipelines' machine outputs: the JSON document and the saved plan,
    // written as they are made (issue 35: both were built whole, 1.10 and 1.42 GB at 500,000).
    for (const output of ['json', 'out']) {
      const machine = [];
      for (let r = 1; r <= rounds; r += 1) {
        ctx.log(`bench: memory: plan ${s.planSize.toLocaleString('en-US')} with a change each, ${output === 'json' ? '--format json' : '--out'} (${r}/${rounds})...`);
        machine.push(await memoryMachinePlan(ctx, emulator, changeConfig, `mem-plan-${output}-${s.planSize}-${r}`, s.planSize, output));
      }
      const name = `memory: plan ${s.planSize.toLocaleString('en-US')}, a change each, ${output === 'json' ? '--format json' : '--out FILE'}`;
      out.push({ case: name, kind: 'memory', goalMB: s.changesMaxRssMB, runs: machine, ...summarise(machine, ['wallMs', 'peakRssMB', 'requests']) });
    }

    // The saved plan read back and applied (read a line at a time since format 4).
    const savedApplies = [];
    for (let r = 1; r <= rounds; r += 1) {
      ctx.log(`bench: memory: apply PLANFILE of ${s.planSize.toLocaleString('en-US')} changes (${r}/${rounds})...`);
      savedApplies.push(await memorySavedApply(ctx, emulator, fixtures, `mem-apply-saved-${s.planSize}-${r}`, 1000 + r, s.planSize));
    }
    out.push({ case: `memory: apply PLANFILE of ${s.planSize.toLocaleString('en-US')} changes`, kind: 'memory', goalMB: s.changesMaxRssMB, runs: savedApplies, ...summarise(savedApplies, ['wallMs', 'peakRssMB', 'requests']) });

    const variants = HEAP_CAP_BUILT() ? [{ name: 'as built (heap growth capped)', env: {} }, { name: "with V8's own heap growth", env: { ORGFORM_BENCH_V8_HEAP_GROWTH: '1' } }] : [{ name: 'as built', env: {} }];
    let round = 0;
    for (const variant of variants) {
      const applies = [];
      for (let r = 1; r <= rounds; r += 1) {
        round += 1;
        ctx.log(`bench: memory: apply ${s.applySize.toLocaleString('en-US')}, ${variant.name} (${r}/${rounds})...`);
        const config = writeApplyConfig(ctx.tmp, fixtures, round);
        await emulator.resetCounters();
        const { run, results } = await runApply(ctx, {
          emulator,
          config,
          n: s.applySize,
          parallelism: s.parallelism,
          label: `mem-apply-${round}`,
          env: { ...ctx.baseEnv(), ...variant.env },
          timeoutMs: s.timeoutMs,
        });
        const c = await emulator.counters();
        applies.push({ wallMs: run.wallMs, peakRssMB: run.peakRssKB / 1024, requests: c.total, writes: c.writes, failed: results.failed, clientCpuMs: run.probe ? run.probe.userCpuMs + run.probe.systemCpuMs : undefined });
      }
      out.push({
        case: `memory: apply ${s.applySize.toLocaleString('en-US')}${variants.length > 1 ? `, ${variant.name}` : ''}`,
        kind: 'memory',
        goalMB: variant.env.ORGFORM_BENCH_V8_HEAP_GROWTH === undefined ? s.changesMaxRssMB : s.maxRssMB,
        variant: variant.name,
        runs: applies,
        ...summarise(applies, ['wallMs', 'peakRssMB', 'requests', 'failed', 'clientCpuMs']),
      });
    }
  } finally {
    await emulator.stop();
  }

  if (big) {
    ctx.log(`bench: memory: ${s.bigPlanSize.toLocaleString('en-US')} organisations: writing fixtures (lean seed)...`);
    const bigFixtures = await writeFixtures(ctx.tmp, s.bigPlanSize, { lean: true, perFile: s.perFile });
    ctx.log('bench: memory: starting the emulator with them...');
    const bigEmulator = await startEmulatorProcess({ data: bigFixtures.dataFile, latencyMs: s.latencyMs, slugDelayMs: 0, cwd: ctx.tmp });
    try {
      // Once: it takes about a minute.
      ctx.log(`bench: memory: plan ${s.bigPlanSize.toLocaleString('en-US')} (1/1)...`);
      const run = await memoryPlan(ctx, bigEmulator, bigFixtures, `mem-plan-${s.bigPlanSize}`);
      out.push({ case: `memory: plan ${s.bigPlanSize.toLocaleString('en-US')}`, kind: 'memory', goalMB: s.bigMaxRssMB, runs: [run], ...summarise([run], ['wallMs', 'peakRssMB', 'requests']) });
    } finally {
      await bigEmulator.stop();
    }
  }
  return out;
}

/** A plan that should show No changes, or `changes` changes. */
async function memoryPlan(ctx, emulator, fixtures, label, changes = 0) {
  const s = GOAL_SETTINGS.memory;
  await emulator.resetCounters();
  const args = ['plan', '-f', fixtures.planFile, '--base-url', emulator.url, '--parallelism', String(s.parallelism), '--state', join(ctx.tmp, `state-${label}.json`), '--no-color'];
  const run = await runOrgform(args, { cwd: ctx.tmp, env: ctx.baseEnv(), timeoutMs: s.timeoutMs, ...ctx.files(label) });
  if (run.timedOut) throw new Error(`${label}: still running after ${Math.round(s.timeoutMs / 1000)} s, stopped`);
  const shown = changes === 0 ? /No changes\./.test(run.stdout) : new RegExp(`Plan: ${changes} to change`).test(run.stdout);
  if (run.code !== 0 || !shown) throw ctx.fail(`orgform plan (${label})`, run);
  const c = await emulator.counters();
  return { wallMs: run.wallMs, peakRssMB: run.peakRssKB / 1024, requests: c.total, listingPages: c.byOperation.getOrganisations };
}

/** A plan of `changes` changes as the JSON document (to a file, as a pipeline redirects it) or saved with --out; checks the output holds them all. */
async function memoryMachinePlan(ctx, emulator, config, label, changes, output) {
  const s = GOAL_SETTINGS.memory;
  await emulator.resetCounters();
  const saved = join(ctx.tmp, `${label}.plan.json`);
  const args = ['plan', '-f', config, '--base-url', emulator.url, '--parallelism', String(s.parallelism), '--state', join(ctx.tmp, `state-${label}.json`), '--no-color', ...(output === 'json' ? ['--format', 'json'] : ['--out', saved])];
  const run = await runOrgform(args, { cwd: ctx.tmp, env: ctx.baseEnv(), timeoutMs: s.timeoutMs, ...ctx.files(label) });
  if (run.timedOut) throw new Error(`${label}: still running after ${Math.round(s.timeoutMs / 1000)} s, stopped`);
  const planned = run.code !== 0 ? undefined : output === 'json' ? JSON.parse(run.stdout)?.summary?.change : savedPlanChanges(saved);
  if (planned !== changes) throw ctx.fail(`orgform plan ${output === 'json' ? '--format json' : '--out'} (${label})`, run);
  rmSync(saved, { force: true });
  const c = await emulator.counters();
  return { wallMs: run.wallMs, peakRssMB: run.peakRssKB / 1024, requests: c.total };
}

/** A plan of `changes` changes saved with --out (not measured), then applied from the file (measured). */
async function memorySavedApply(ctx, emulator, fixtures, label, round, changes) {
  const s = GOAL_SETTINGS.memory;
  const config = writeApplyConfig(ctx.tmp, fixtures, round);
  const saved = join(ctx.tmp, `${label}.plan`);
  const state = join(ctx.tmp, `state-${label}.json`);
  const common = ['--base-url', emulator.url, '--parallelism', String(s.parallelism), '--state', state, '--no-color'];
  const plan = await runOrgform(['plan', '-f', config, ...common, '--out', saved], { cwd: ctx.tmp, env: ctx.baseEnv(), timeoutMs: s.timeoutMs, ...ctx.files(`${label}-plan`) });
  if (plan.code !== 0 || savedPlanChanges(saved) !== changes) throw ctx.fail(`orgform plan --out (${label})`, plan);
  await emulator.resetCounters();
  const run = await runOrgform(['apply', saved, ...common], { cwd: ctx.tmp, env: ctx.baseEnv(), timeoutMs: s.timeoutMs, ...ctx.files(label) });
  if (run.timedOut) throw new Error(`${label}: still running after ${Math.round(s.timeoutMs / 1000)} s, stopped`);
  const results = applyResults(run.stdout);
  if (run.code !== 0 || results?.applied !== changes) throw ctx.fail(`orgform apply PLANFILE (${label})`, run);
  rmSync(saved, { force: true });
  const c = await emulator.counters();
  return { wallMs: run.wallMs, peakRssMB: run.peakRssKB / 1024, requests: c.total };
}

/** How many changes a saved plan holds, from its end record (format 4: a record a line; the file may be longer than one string). */
function savedPlanChanges(path) {
  const size = statSync(path).size;
  const tail = Buffer.alloc(Math.min(size, 64 * 1024));
  const fd = openSync(path, 'r');
  try {
    readSync(fd, tail, 0, tail.length, size - tail.length);
  } finally {
    closeSync(fd);
  }
  const end = tail.toString('utf8').split('\n').find((line) => line.startsWith('{"record":"end"'));
  return end === undefined ? undefined : JSON.parse(end).counts.changes;
}

// ---------------------------------------------------------------------------------------------
/** For each field: the median, and the range over the runs. */
export function summarise(runs, fields) {
  const stats = {};
  for (const field of fields) {
    const values = runs.map((r) => r[field]).filter((v) => typeof v === 'number' && Number.isFinite(v));
    if (values.length === 0) continue;
    stats[field] = { median: median(values), min: Math.min(...values), max: Math.max(...values) };
  }
  return { stats };
}

export function goalCaseGoals(cases) {
  const out = [];
  const m = (c, field) => c.stats[field]?.median;
  const max = (c, field) => c.stats[field]?.max;
  for (const c of cases) {
    if (c.kind === 'rate') {
      const s = GOAL_SETTINGS.rate;
      out.push({ goal: `rate (${c.profile}): 0 failures (every run)`, value: String(max(c, 'failed')), ok: max(c, 'failed') === 0 });
      out.push({ goal: `rate (${c.profile}): 429s <= ${s.max429Share * 100} % of requests (median)`, value: `${(m(c, 'share429') * 100).toFixed(2)} %`, ok: m(c, 'share429') <= s.max429Share });
      out.push({ goal: `rate (${c.profile}): wall <= ${s.maxWallOverBound} x requests / ${s.rps} per s (median)`, value: m(c, 'wallOverBound'), ok: m(c, 'wallOverBound') <= s.maxWallOverBound });
    }
    if (c.kind === 'token') {
      const all = c.runs.every((r) => r.oneRun);
      out.push({ goal: 'token: 10,000 changes in one run, 0 failures (every run)', value: all ? 'yes' : 'no', ok: all });
    }
    if (c.kind === 'output') {
      const s = GOAL_SETTINGS.output;
      out.push({ goal: `output: apply of 30,000 in CI <= ${s.maxLines} lines (every run)`, value: String(max(c, 'lines')), ok: max(c, 'lines') <= s.maxLines });
    }
    if (c.kind === 'memory') {
      out.push({ goal: `${c.case}: peak RSS <= ${c.goalMB} MB (median)`, value: `${Math.round(m(c, 'peakRssMB'))} MB`, ok: m(c, 'peakRssMB') <= c.goalMB });
    }
  }
  return out;
}
