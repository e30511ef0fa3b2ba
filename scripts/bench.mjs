#!/usr/bin/env node
// `npm run bench` — how orgform scales, measured against the emulator in a separate process with a
// fixed per-request latency. Prints a table and writes bench/results.json (bench/results-GROUPS.json with --only).
//
//   node scripts/bench.mjs           quick mode (about a minute and a half): the speed groups, each case once
//   node scripts/bench.mjs --full    every group, the goal groups included; each case 3 times
//                                    (median), 20 cold starts, 10 validates; the 1,000,000 plan
//                                    once. About 25 minutes on 2 cores.
//   --only GROUP,...                 only these groups:
//                                      speed: plan, apply (together per size, each run followed by the
//                                             floor: a bare undici client sending the same requests), slugs, start,
//                                             emulator (2,000 reads among 10,000 organisations),
//                                             load (validate of files that are slow to read, and
//                                             SIGINT while it parses: about 30 s)
//                                      goals: rate (~2 min a round), shards (4 × --shard sharing one
//                                             limit of 50/s: ~1 min), token (~30 s), output (~1 min),
//                                             state (apply of 10,000 one-shot changes with the journal
//                                             in a file, PostgreSQL and an HTTP backend: ~1 min a round),
//                                             journal (apply of 12,000 one-shot changes on an empty
//                                             and a 1,000,000-entry journal file, then state list and
//                                             pull of it; the same on PostgreSQL: ~4 min a round,
//                                             230 MB of temp files),
//                                             memory (plan and apply of 100,000, plan of 1,000,000:
//                                             about 5 min), memory100k (without the 1,000,000 plan),
//                                             page (the plan page of 100,000 changes: written, its
//                                             size, opened and filtered in Chromium: ~30 s),
//                                             inputs (inputs of plausible shape at two sizes, a
//                                             doubling: the growth factor, above 2.5 fails: ~3 min),
//                                             organisation (2,000 channel removals in one organisation
//                                             against one each in 2,000, and 2,000 answered 404: ~1 min a round)
//   --repeat N                       run each plan/apply and goal case N times (median and range)
//   --timeline                       the plan cases and their floors record each listing page's
//                                    timeline (scripts/bench/page-timeline.mjs), printed page by page
//   ORGFORM_BENCH_PROFILES=NAME,...  rate and shards run on these page behaviours only (by prefix:
//                                    "pages", "fixed"; default both, scripts/bench/service-profiles.mjs)
//   ORGFORM_BENCH_TRACE_SHARDS=1     shards: each shard's requests, 5 s at a time, in the results file
//   --build / --no-build             always / never run `npm run build` first (default: only when
//                                    dist/ is missing or older than src/, schemas/ or the build script)
//   --help                           this text
//
// The bench uses the BUILT CLI (bin/orgform.js → dist/). Children are stopped by the bench itself,
// by their own pid (or process group), on success, failure or Ctrl+C; every run has a time limit.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { writeApplyConfig, writeFixtures, writeSlugFixtures } from './bench/fixtures.mjs';
import { goalCaseGoals, GOAL_SETTINGS, memoryCases, outputCase, rateCases, tokenCase } from './bench/goal-cases.mjs';
import { loadCases, loadGoals, LOAD_SETTINGS } from './bench/load-cases.mjs';
import { floorGoals, measureFloor, renderFloorRatios, withFloor } from './bench/floor-case.mjs';
import { renderTimelines, summariseTimeline } from './bench/page-timeline.mjs';
import { BIN, GNU_TIME, median, ROOT, runOrgform, startEmulatorProcess, stopAllChildren, timeOnce } from './bench/processes.mjs';
import { renderShardCase, shardCases, shardGoals } from './bench/shard-case.mjs';
import { renderStateCase, stateCase, stateGoals } from './bench/state-case.mjs';
import { journalCase, journalGoals, renderJournalCase } from './bench/journal-case.mjs';
import { organisationCase, organisationGoals, renderOrganisationCase } from './bench/organisation-case.mjs';
import { postgresJournalCase, postgresJournalGoals, renderPostgresJournalCase } from './bench/journal-postgres-case.mjs';
import { pageCase, pageGoals, renderPageCase } from './bench/page-case.mjs';
import { inputCases, inputGoals, renderInputCases } from './bench/input-cases.mjs';

const argv = process.argv.slice(2);
if (argv.includes('--help') || argv.includes('-h')) {
  // The usage is the comment at the top of this file.
  const text = readFileSync(new URL(import.meta.url), 'utf8');
  const usage = text.split('\n').slice(1).filter((line, i, all) => all.slice(0, i + 1).every((l) => l.startsWith('//')));
  process.stdout.write(`${usage.map((line) => line.replace(/^\/\/ ?/, '')).join('\n')}\n`);
  process.exit(0);
}
const FULL = argv.includes('--full');
const option = (name) => {
  const arg = argv.find((a) => a === name || a.startsWith(`${name}=`));
  if (arg === undefined) return undefined;
  return arg.includes('=') ? arg.slice(arg.indexOf('=') + 1) : argv[argv.indexOf(arg) + 1];
};
const SPEED_GROUPS = ['plan', 'apply', 'slugs', 'start', 'emulator', 'load'];
const GOAL_GROUPS = ['rate', 'shards', 'token', 'output', 'state', 'journal', 'memory', 'page', 'inputs', 'organisation'];
const onlyValue = option('--only');
const ONLY = onlyValue === undefined ? undefined : new Set(onlyValue.split(','));
if (ONLY) {
  const unknown = [...ONLY].filter((g) => ![...SPEED_GROUPS, ...GOAL_GROUPS, 'memory100k'].includes(g));
  if (unknown.length > 0) {
    process.stderr.write(`bench: unknown group(s) ${unknown.join(', ')}: choose from ${[...SPEED_GROUPS, ...GOAL_GROUPS, 'memory100k'].join(', ')}\n`);
    process.exit(2);
  }
}
/** Quick mode runs the speed groups; --full adds the goal groups; --only picks. */
const wants = (group) => (ONLY === undefined ? SPEED_GROUPS.includes(group) || FULL : ONLY.has(group));
/** bench/results.json for the quick and full runs; a run of some groups only does not overwrite it. */
const RESULTS_FILE = ONLY === undefined ? 'results.json' : `results-${[...ONLY].sort().join('-')}.json`;
const TIMELINE = argv.includes('--timeline');
const repeatValue = option('--repeat');
const REPEAT = repeatValue === undefined ? undefined : Number(repeatValue);
if (REPEAT !== undefined && !(Number.isInteger(REPEAT) && REPEAT >= 1 && REPEAT <= 10)) {
  process.stderr.write('bench: --repeat takes a whole number from 1 to 10\n');
  process.exit(2);
}

const SETTINGS = {
  mode: FULL ? 'full' : 'quick',
  latencyMs: 20,
  parallelism: 16,
  sizes: [1_000, 10_000],
  repetitions: REPEAT ?? (FULL ? 3 : 1),
  slugs: { count: 100, delayMs: 1_000, parallelism: 10 },
  coldStartRuns: FULL ? 20 : 10,
  validateRuns: FULL ? 10 : 5,
  validateSize: 10_000,
};
// validateMs is also the speed bound test/config/scale.test.ts once asserted (< 4 s in-process);
// emulatorReadsMs the one test/emulator/store-and-data.test.ts did: tests assert no speed.
const GOALS = { ratio: 1.2, helpOverNodeMs: 60, validateMs: 500, peakRssMB: 256, emulatorReadsMs: 15_000 };

// ---------------------------------------------------------------------------------------------
// Clean-up: the temporary directory and every child, whatever happens.
let tmp;
function cleanUp() {
  stopAllChildren();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
  tmp = undefined;
}
process.on('exit', cleanUp);
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    process.stderr.write(`\nbench: ${signal}, stopping.\n`);
    cleanUp();
    process.exit(130);
  });
}

const log = (text) => process.stderr.write(`${text}\n`);

// ---------------------------------------------------------------------------------------------
function newestMtime(path) {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = 0;
  for (const entry of readdirSync(path)) newest = Math.max(newest, newestMtime(join(path, entry)));
  return newest;
}

function ensureBuilt() {
  const outputs = [join(ROOT, 'dist', 'cli', 'main.js'), join(ROOT, 'dist', 'validators', 'orgs.cjs')];
  const inputs = ['src', 'schemas', 'scripts/build-validators.mjs', 'tsconfig.json', 'tsconfig.build.json'].map((p) => join(ROOT, p)).filter(existsSync);
  const stale = () => outputs.some((o) => !existsSync(o)) || Math.max(...inputs.map(newestMtime)) > Math.min(...outputs.map((o) => statSync(o).mtimeMs));
  if (argv.includes('--no-build')) {
    if (outputs.some((o) => !existsSync(o))) throw new Error('dist/ is missing: run npm run build (or drop --no-build).');
    return 'skipped (--no-build)';
  }
  if (!argv.includes('--build') && !stale()) return 'up to date';
  log('bench: building (npm run build)...');
  const result = spawnSync('npm', ['run', 'build'], { cwd: ROOT, stdio: ['ignore', 2, 2] });
  if (result.status !== 0) throw new Error('npm run build failed');
  return 'built';
}

/** The caller's environment without any ORGFORM_* setting (timeouts, retries, URL...), plus the demo token. */
const baseEnv = () => {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('ORGFORM_')));
  return { ...env, ORGFORM_TOKEN: 'demo-token', NO_COLOR: '1' };
};

let runCounter = 0;
function files(label) {
  runCounter += 1;
  const stem = join(tmp, `${String(runCounter).padStart(3, '0')}-${label}`);
  return { outFile: `${stem}.out`, errFile: `${stem}.err`, probeFile: `${stem}.probe.json`, timeFile: `${stem}.time` };
}

/** What the goal cases (scripts/bench/goal-cases.mjs) need from here. */
const goalContext = () => ({ tmp, files, baseEnv, fail, log });

function fail(label, run) {
  const tail = (s) => s.split('\n').slice(-15).join('\n');
  return new Error(`${label} exited ${run.code ?? run.signal}:\n${tail(run.stderr)}\n${tail(run.stdout)}`);
}

/**
 * latency × (listing pages, one after another) + latency × ceil(other requests / parallelism).
 * `serialPages`: how many of the listing pages are a chain the rest waits for (default all of
 * them). An apply's are its plan's: the listing it reads again is streamed behind the writes, each
 * page holding one of the parallelism places as a write does, so those pages count with the others.
 */
function idealMs(counters, latencyMs, parallelism, serialPages = counters.byOperation.getOrganisations) {
  const pages = Math.min(serialPages, counters.byOperation.getOrganisations);
  const others = counters.total - pages;
  return latencyMs * pages + latencyMs * Math.ceil(others / parallelism);
}

// ---------------------------------------------------------------------------------------------
/** Runs plan or apply once against a running emulator and reads what the emulator counted; `planPages`: the plan's listing pages (for an apply's ideal). */
async function measure(kind, emulator, config, n, round, planPages) {
  await emulator.resetCounters();
  const serviceCpuBefore = emulator.cpuMs();
  const { latencyMs, parallelism } = SETTINGS;
  const common = ['-f', config, '--base-url', emulator.url, '--parallelism', String(parallelism), '--state', join(tmp, `state-${n}.json`), '--no-color'];
  const args = kind === 'plan' ? ['plan', ...common] : ['apply', '--auto-approve', ...common];
  const env = { ...baseEnv(), ...(TIMELINE && kind === 'plan' ? { ORGFORM_BENCH_TIMELINE: '1' } : {}) };
  const run = await runOrgform(args, { cwd: tmp, env, ...files(`${kind}-${n}-${round}`) });
  if (run.code !== 0) throw fail(`orgform ${kind} at ${n}`, run);
  const counters = await emulator.counters();
  const serviceCpuMs = serviceCpuBefore === undefined ? undefined : emulator.cpuMs() - serviceCpuBefore;
  // The bench's inputs make these certain; anything else means the numbers measure something else.
  if (kind === 'plan' && !/No changes\./.test(run.stdout)) throw new Error(`plan at ${n} was expected to show No changes`);
  if (kind === 'apply' && counters.byOperation.updateBillingDetails !== n) {
    throw new Error(`apply at ${n} sent ${counters.byOperation.updateBillingDetails} billing updates, expected ${n}`);
  }
  return {
    case: `${kind} ${n.toLocaleString('en-US')}`,
    kind,
    organisations: n,
    listingPages: counters.byOperation.getOrganisations,
    byOperation: counters.byOperation,
    writes: counters.writes,
    ...timings(run, counters, idealMs(counters, latencyMs, parallelism, planPages), serviceCpuMs),
    rssSource: run.rssSource,
    timeline: summariseTimeline(run.probe?.pages),
  };
}

/** What every case reports: wall time and the requests phase against the ideal, in flight, memory, where the time went. */
function timings(run, counters, idealMs, serviceCpuMs) {
  const p = run.probe;
  const phaseMs = p && p.firstRequestMs !== null ? p.lastResponseMs - p.firstRequestMs : null;
  return {
    wallMs: run.wallMs,
    requests: counters.total,
    idealMs,
    ratio: run.wallMs / idealMs,
    requestPhaseMs: phaseMs,
    requestPhaseRatio: phaseMs === null ? null : phaseMs / idealMs,
    maxInFlight: counters.maxInFlight,
    // The whole process's CPU (start-up and configuration included) over the requests it sent.
    cpuPerRequestMs: p && counters.total > 0 ? (p.userCpuMs + p.systemCpuMs) / counters.total : undefined,
    peakRssMB: run.peakRssKB / 1024,
    breakdown: p && {
      startAndConfigMs: p.firstRequestMs,
      requestsMs: phaseMs,
      afterRequestsMs: p.exitMs - p.lastResponseMs,
      clientCpuMs: p.userCpuMs + p.systemCpuMs,
      serviceCpuMs,
    },
  };
}

function medianRun(runs) {
  if (runs.length === 1) return runs[0];
  const sorted = [...runs].sort((a, b) => a.wallMs - b.wallMs);
  return { ...sorted[sorted.length >> 1], runs: runs.length, wallMsAll: runs.map((r) => Math.round(r.wallMs)) };
}

async function planAndApply(size, results) {
  log(`bench: ${size.toLocaleString('en-US')} organisations: writing fixtures...`);
  const fixtures = await writeFixtures(tmp, size);
  const emulator = await startEmulatorProcess({ data: fixtures.dataFile, latencyMs: SETTINGS.latencyMs, slugDelayMs: 0, cwd: tmp });
  try {
    // Each orgform run is followed by the floor's run of the same requests (scripts/bench/floor-case.mjs).
    const floorContext = { tmp, files, baseEnv, fail, log, emulator, settings: SETTINGS, idealMs, timings, timeline: TIMELINE };
    const plans = [];
    const planFloors = [];
    for (let r = 1; r <= SETTINGS.repetitions; r += 1) {
      log(`bench: plan ${size} (${r}/${SETTINGS.repetitions})...`);
      plans.push(await measure('plan', emulator, fixtures.planFile, size, r));
      planFloors.push(await measureFloor(floorContext, 'plan', size, r, plans[0]));
    }
    results.push(withFloor(medianRun(plans), medianRun(planFloors), plans, planFloors), medianRun(planFloors));
    const applies = [];
    const applyFloors = [];
    for (let r = 1; r <= SETTINGS.repetitions; r += 1) {
      log(`bench: apply ${size} (${r}/${SETTINGS.repetitions})...`);
      applies.push(await measure('apply', emulator, writeApplyConfig(tmp, fixtures, r), size, r, plans[0].listingPages));
      applyFloors.push(await measureFloor(floorContext, 'apply', size, r, applies[applies.length - 1], plans[0].listingPages));
    }
    results.push(withFloor(medianRun(applies), medianRun(applyFloors), applies, applyFloors), medianRun(applyFloors));
  } finally {
    await emulator.stop();
  }
  return fixtures;
}

async function slugChecks() {
  const { count, delayMs, parallelism } = SETTINGS.slugs;
  log(`bench: ${count} slug checks at ${delayMs} ms, parallelism ${parallelism}...`);
  const { dataFile, slugs } = await writeSlugFixtures(tmp, count);
  const emulator = await startEmulatorProcess({ data: dataFile, latencyMs: 0, slugDelayMs: delayMs, cwd: tmp });
  try {
    await emulator.resetCounters();
    const serviceCpuBefore = emulator.cpuMs();
    const args = ['slugs', 'check', ...slugs, '--base-url', emulator.url, '--parallelism', String(parallelism), '--format', 'json'];
    const run = await runOrgform(args, { cwd: tmp, env: baseEnv(), ...files('slugs') });
    if (run.code !== 0) throw fail('slug checks', run);
    const counters = await emulator.counters();
    const serviceCpuMs = serviceCpuBefore === undefined ? undefined : emulator.cpuMs() - serviceCpuBefore;
    return {
      case: `slugs check ${count}`,
      kind: 'slugs',
      ...timings(run, counters, Math.ceil(count / parallelism) * delayMs, serviceCpuMs),
    };
  } finally {
    await emulator.stop();
  }
}

function coldStarts(validateFile) {
  const env = baseEnv();
  const runs = SETTINGS.coldStartRuns;
  log(`bench: cold starts (${runs} each of node -e "" and orgform --help, interleaved)...`);
  // Two warm-up rounds each, so that the file cache is the same for both.
  for (let i = 0; i < 2; i += 1) {
    timeOnce(['-e', ''], { cwd: tmp, env });
    timeOnce([BIN, '--help'], { cwd: tmp, env });
  }
  const bare = [];
  const help = [];
  for (let i = 0; i < runs; i += 1) {
    bare.push(timeOnce(['-e', ''], { cwd: tmp, env }));
    help.push(timeOnce([BIN, '--help'], { cwd: tmp, env }));
  }
  const out = [
    { case: 'node -e ""', kind: 'start', wallMs: median(bare), samplesMs: bare.map(Math.round) },
    { case: 'orgform --help', kind: 'start', wallMs: median(help), overBareNodeMs: median(help) - median(bare), samplesMs: help.map(Math.round) },
  ];
  if (validateFile) {
    log(`bench: orgform validate on ${SETTINGS.validateSize.toLocaleString('en-US')} organisations (${SETTINGS.validateRuns} runs)...`);
    timeOnce([BIN, 'validate', '-f', validateFile], { cwd: tmp, env });
    const validate = [];
    for (let i = 0; i < SETTINGS.validateRuns; i += 1) validate.push(timeOnce([BIN, 'validate', '-f', validateFile], { cwd: tmp, env }));
    out.push({ case: `validate ${SETTINGS.validateSize.toLocaleString('en-US')}`, kind: 'start', wallMs: median(validate), overBareNodeMs: median(validate) - median(bare), samplesMs: validate.map(Math.round) });
  }
  return out;
}

/**
 * The emulator keeps up with a bulk run: 2,000 reads of single organisations among 10,000, 50 at a
 * time, no latency, from this process to the emulator in its own. Every read must answer 200.
 */
async function emulatorReads(fixtures) {
  const reads = 2_000;
  const concurrency = 50;
  log(`bench: emulator: ${reads.toLocaleString('en-US')} reads among ${fixtures.n.toLocaleString('en-US')} organisations, ${concurrency} at a time...`);
  const emulator = await startEmulatorProcess({ data: fixtures.dataFile, latencyMs: 0, slugDelayMs: 0, cwd: tmp });
  try {
    const { organisations } = JSON.parse(readFileSync(fixtures.dataFile, 'utf8'));
    const ids = organisations.map((o) => o.id);
    await emulator.resetCounters();
    let next = 0;
    const started = performance.now();
    const worker = async () => {
      while (next < reads) {
        const id = ids[next % ids.length];
        next += 1;
        const res = await fetch(`${emulator.url}/api/organisations/v1/organisations/${encodeURIComponent(id)}`, { headers: { authorization: 'Bearer demo-token' } });
        await res.arrayBuffer();
        if (res.status !== 200) throw new Error(`emulator read of ${id} answered ${res.status}`);
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
    const wallMs = performance.now() - started;
    const counters = await emulator.counters();
    if (counters.byOperation.getOrganisation !== reads) throw new Error(`the emulator counted ${counters.byOperation.getOrganisation} reads, expected ${reads}`);
    return { case: `emulator: ${reads.toLocaleString('en-US')} reads among ${fixtures.n.toLocaleString('en-US')}, ${concurrency} at a time`, kind: 'start', wallMs };
  } finally {
    await emulator.stop();
  }
}

// ---------------------------------------------------------------------------------------------
function goals(cases) {
  const find = (name) => cases.find((c) => c.case === name);
  const out = [];
  for (const kind of ['plan', 'apply']) {
    const c = find(`${kind} 10,000`);
    if (!c) continue;
    out.push({ goal: `${kind} 10,000: requests phase / ideal <= ${GOALS.ratio}`, value: c.requestPhaseRatio, ok: c.requestPhaseRatio !== null && c.requestPhaseRatio <= GOALS.ratio });
    out.push({ goal: `${kind} 10,000: whole run / ideal <= ${GOALS.ratio}`, value: c.ratio, ok: c.ratio <= GOALS.ratio });
    out.push({ goal: `${kind} 10,000: peak RSS < ${GOALS.peakRssMB} MB`, value: c.peakRssMB, ok: c.peakRssMB < GOALS.peakRssMB });
    if (kind === 'apply') out.push({ goal: `apply 10,000: max in flight = ${SETTINGS.parallelism}`, value: c.maxInFlight, ok: c.maxInFlight === SETTINGS.parallelism });
  }
  const help = find('orgform --help');
  if (help) out.push({ goal: `--help within ${GOALS.helpOverNodeMs} ms of bare node`, value: help.overBareNodeMs, ok: help.overBareNodeMs <= GOALS.helpOverNodeMs });
  const validate = find(`validate ${SETTINGS.validateSize.toLocaleString('en-US')}`);
  if (validate) out.push({ goal: `validate 10,000 < ${GOALS.validateMs} ms`, value: validate.wallMs, ok: validate.wallMs < GOALS.validateMs });
  const reads = cases.find((c) => c.case.startsWith('emulator: '));
  if (reads) out.push({ goal: `${reads.case} < ${GOALS.emulatorReadsMs / 1000} s`, value: reads.wallMs, ok: reads.wallMs < GOALS.emulatorReadsMs });
  return out;
}

const ms = (v) => (v === null || v === undefined ? '-' : v >= 10_000 ? `${(v / 1000).toFixed(1)} s` : `${Math.round(v)} ms`);
const num = (v, digits = 2) => (v === null || v === undefined ? '-' : v.toFixed(digits));

function table(headers, rows) {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)));
  const line = (cells) => `| ${cells.map((c, i) => String(c).padEnd(widths[i])).join(' | ')} |`;
  return [line(headers), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.map(line)].join('\n');
}

function render(report) {
  const { latencyMs, parallelism } = SETTINGS;
  const net = report.cases.filter((c) => c.kind === 'plan' || c.kind === 'apply' || c.kind === 'floor' || c.kind === 'slugs');
  const starts = report.cases.filter((c) => c.kind === 'start');
  const out = [];
  out.push(`orgform bench (${report.mode}) — node ${process.version}, ${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? '?'}), load ${report.loadAverage.start.map((l) => l.toFixed(1)).join(' ')} → ${report.loadAverage.end.map((l) => l.toFixed(1)).join(' ')}`);
  if (net.length > 0 || starts.length > 0) out.push(`emulator latency ${latencyMs} ms, parallelism ${parallelism} (slugs: ${SETTINGS.slugs.delayMs} ms, parallelism ${SETTINGS.slugs.parallelism})`);
  out.push(`peak RSS by ${GNU_TIME ? 'GNU time -v' : 'process.resourceUsage().maxRSS'}`);
  out.push('');
  if (net.length > 0) {
    out.push(
      table(
        ['case', 'wall', 'requests', 'ideal', 'ratio', 'requests phase', '÷ ideal', '÷ floor', 'start+config', 'after', 'client CPU', 'CPU/request', '÷ floor', 'service CPU', 'max in flight', 'peak RSS'],
        net.map((c) => [
          c.case,
          ms(c.wallMs),
          c.requests,
          ms(c.idealMs),
          num(c.ratio),
          ms(c.requestPhaseMs),
          num(c.requestPhaseRatio),
          num(c.floor?.requestPhaseRatio),
          ms(c.breakdown?.startAndConfigMs),
          ms(c.breakdown?.afterRequestsMs),
          ms(c.breakdown?.clientCpuMs),
          c.cpuPerRequestMs === undefined ? '-' : `${c.cpuPerRequestMs.toFixed(3)} ms`,
          num(c.floor?.cpuPerRequestRatio),
          ms(c.breakdown?.serviceCpuMs),
          c.maxInFlight,
          `${Math.round(c.peakRssMB)} MB`,
        ]),
      ),
    );
    out.push('');
  }
  const floorRatios = renderFloorRatios(net);
  if (floorRatios.length > 0) out.push(...floorRatios, '');
  if (starts.length > 0) {
    out.push(table(['cold start (median)', 'wall', 'over bare node'], starts.map((c) => [c.case, ms(c.wallMs), c.overBareNodeMs === undefined ? '' : `+${Math.round(c.overBareNodeMs)} ms`])));
    out.push('');
  }
  out.push(...renderTimelines(report.cases, { table }));
  out.push(...renderGoalCases(report.cases));
  out.push(...renderStateCase(report.cases, { table, ms }));
  out.push(...renderJournalCase(report.cases, { table, ms }));
  out.push(...renderPostgresJournalCase(report.cases, { table, ms }));
  out.push(...renderShardCase(report.cases, { table, ms }));
  out.push(...renderPageCase(report.cases, { table, ms }));
  out.push(...renderInputCases(report.cases, { table, ms }));
  out.push(...renderOrganisationCase(report.cases, { table, ms }));
  if (report.goals.length > 0) {
    out.push(table(['goal', 'measured', ''], report.goals.map((g) => [g.goal, typeof g.value === 'number' ? num(g.value, g.value > 10 ? 0 : 2) : String(g.value), g.ok ? 'ok' : 'MISSED'])));
    out.push('');
  }
  if (net.length > 0) {
    out.push('ideal = latency × listing pages (a cursor chain, one after another) + latency × ceil(other requests / parallelism); for apply, the chain is its plan\'s listing, and the listing it reads again behind the writes counts with the other requests.');
    out.push('requests phase = first request sent to last answer received, inside the orgform process; start+config is before it, after is rendering and exit.');
    out.push('client CPU = user + system time of the orgform process; service CPU = the same for the emulator during the case (from /proc); CPU/request = client CPU ÷ requests.');
    out.push('floor = a bare undici.request client (scripts/bench/floor-client.mjs) sending the same requests right after each orgform run, against the same emulator; ÷ floor = orgform\'s figure over the floor\'s.');
  }
  if (report.cases.some((c) => c.kind === 'rate')) out.push(`rate: emulator --rate-limit ${GOAL_SETTINGS.rate.rps} (burst ${Math.ceil(GOAL_SETTINGS.rate.rps / 4)}, or 12 with fixed pages of 100; Retry-After: 1, no headers), latency ${GOAL_SETTINGS.rate.latencyMs} ms; requests = every request the emulator received, 429s included; wall = the whole process.`);
  if (report.cases.some((c) => c.kind === 'token')) out.push(`token: emulator --token-lifetime-requests ${GOAL_SETTINGS.token.lifetimeRequests}, latency ${GOAL_SETTINGS.token.latencyMs} ms, --parallelism ${GOAL_SETTINGS.token.parallelism}; ORGFORM_TOKEN_COMMAND runs orgform emulator token; refused = requests neither a listing page nor a write processed.`);
  if (report.cases.some((c) => c.kind === 'output')) out.push(`output: stdout and stderr to files (no terminal), text format, CI=true; latency ${GOAL_SETTINGS.output.latencyMs} ms, --parallelism ${GOAL_SETTINGS.output.parallelism}.`);
  return out.join('\n');
}

/** `median (min–max)` of a goal case's figure, formatted; just the value for one run. */
function spread(c, field, format) {
  const st = c.stats[field];
  if (st === undefined) return '-';
  return c.runs.length === 1 || st.min === st.max ? format(st.median) : `${format(st.median)} (${format(st.min)}–${format(st.max)})`;
}

function renderGoalCases(cases) {
  const out = [];
  const mb = (v) => `${Math.round(v)} MB`;
  const int = (v) => String(Math.round(v));
  const pct = (v) => `${(v * 100).toFixed(2)} %`;
  const rate = cases.filter((c) => c.kind === 'rate');
  if (rate.length > 0) {
    out.push(table(['rate limit (median, range)', 'runs', 'wall', 'requests', 'reads by id', '429s', '429 share', 'bound = requests ÷ rps', 'wall / bound', 'failures', 'peak RSS'],
      rate.map((c) => [c.case, c.runs.length, spread(c, 'wallMs', ms), spread(c, 'requests', int), spread(c, 'readsById', int), spread(c, 'rateLimited', int), spread(c, 'share429', pct), ms(median(c.runs.map((r) => r.boundMs))), spread(c, 'wallOverBound', (v) => v.toFixed(3)), spread(c, 'failed', int), spread(c, 'peakRssMB', mb)])));
    out.push('');
  }
  const token = cases.filter((c) => c.kind === 'token');
  if (token.length > 0) {
    out.push(table(['expiring token (median, range)', 'runs', 'wall', 'requests', 'refused (401)', 'token command runs', 'failures', 'one run', 'peak RSS'],
      token.map((c) => [c.case, c.runs.length, spread(c, 'wallMs', ms), spread(c, 'requests', int), spread(c, 'refused', int), spread(c, 'commandRuns', int), spread(c, 'failed', int), c.runs.every((r) => r.oneRun) ? 'yes' : 'no', spread(c, 'peakRssMB', mb)])));
    out.push('');
  }
  const output = cases.filter((c) => c.kind === 'output');
  if (output.length > 0) {
    out.push(table(['CI output (median, range)', 'runs', 'wall', 'lines (stdout + stderr)', 'bytes', 'failures', 'peak RSS'],
      output.map((c) => [c.case, c.runs.length, spread(c, 'wallMs', ms), spread(c, 'lines', int), spread(c, 'bytes', int), spread(c, 'failed', int), spread(c, 'peakRssMB', mb)])));
    out.push('');
  }
  const load = cases.filter((c) => c.kind === 'load');
  if (load.length > 0) {
    out.push(table(['validate (median, range)', 'runs', 'wall', 'CPU', 'peak RSS'], load.map((c) => [c.case, c.runs.length, spread(c, 'wallMs', ms), spread(c, 'cpuMs', ms), spread(c, 'peakRssMB', mb)])));
    for (const c of cases.filter((x) => x.kind === 'load-interrupt')) out.push(`${c.case}: exited ${spread(c, 'interruptMs', ms)} after the signal (${c.runs.length} run(s), sent once the process had used ${LOAD_SETTINGS.interruptAfterCpuMs} ms of CPU).`);
    out.push('');
  }
  const memory = cases.filter((c) => c.kind === 'memory');
  if (memory.length > 0) {
    out.push(table(['memory (median, range)', 'runs', 'wall', 'requests', 'peak RSS', 'goal'],
      memory.map((c) => [c.case, c.runs.length, spread(c, 'wallMs', ms), spread(c, 'requests', int), spread(c, 'peakRssMB', mb), `<= ${c.goalMB} MB`])));
    out.push(`memory: emulator latency ${GOAL_SETTINGS.memory.latencyMs} ms, pages of 500, --parallelism ${GOAL_SETTINGS.memory.parallelism}; orgs.yaml as files of ${GOAL_SETTINGS.memory.perFile.toLocaleString('en-US')} organisations; the 1,000,000 seed is lean (four billing fields, no channels).`);
    out.push('');
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
async function main() {
  const build = ensureBuilt();
  tmp = mkdtempSync(join(os.tmpdir(), 'orgform-bench-'));
  const report = {
    mode: SETTINGS.mode,
    date: new Date().toISOString(),
    build,
    machine: { node: process.version, platform: `${os.platform()} ${os.release()}`, cpus: os.cpus().length, cpuModel: os.cpus()[0]?.model, totalMemMB: Math.round(os.totalmem() / 2 ** 20) },
    loadAverage: { start: os.loadavg(), end: [] },
    settings: { ...SETTINGS, goals: GOAL_SETTINGS, load: LOAD_SETTINGS },
    peakRssSource: GNU_TIME ? 'GNU time -v (Maximum resident set size)' : 'process.resourceUsage().maxRSS at exit (--import probe)',
    cases: [],
    goals: [],
  };
  const started = Date.now();
  let tenThousand;
  for (const size of SETTINGS.sizes) {
    if (wants('plan') || wants('apply')) {
      const fixtures = await planAndApply(size, report.cases);
      if (size === SETTINGS.validateSize) tenThousand = fixtures;
    }
  }
  if (wants('slugs')) report.cases.push(await slugChecks());
  if ((wants('start') || wants('emulator')) && !tenThousand) tenThousand = await writeFixtures(tmp, SETTINGS.validateSize);
  if (wants('start')) report.cases.push(...coldStarts(tenThousand.planFile));
  if (wants('emulator')) report.cases.push(await emulatorReads(tenThousand));
  // The goal groups: as many rounds as the speed cases, except the 1,000,000 plan (once).
  const rounds = SETTINGS.repetitions;
  if (wants('load')) report.cases.push(...(await loadCases(goalContext(), rounds)));
  if (wants('rate')) report.cases.push(...(await rateCases(goalContext(), rounds)));
  if (wants('shards')) report.cases.push(...(await shardCases(goalContext(), rounds)));
  if (wants('token')) report.cases.push(await tokenCase(goalContext(), rounds));
  if (wants('output')) report.cases.push(await outputCase(goalContext(), rounds));
  if (wants('state')) report.cases.push(await stateCase(goalContext(), rounds));
  if (wants('journal')) report.cases.push(await journalCase(goalContext(), rounds), await postgresJournalCase(goalContext(), rounds));
  if (wants('memory') || wants('memory100k')) report.cases.push(...(await memoryCases(goalContext(), rounds, { big: wants('memory') })));
  if (wants('page')) report.cases.push(await pageCase(goalContext(), rounds));
  if (wants('inputs')) report.cases.push(...(await inputCases(goalContext(), rounds)));
  if (wants('organisation')) report.cases.push(await organisationCase(goalContext(), rounds));
  report.loadAverage.end = os.loadavg();
  report.elapsedS = (Date.now() - started) / 1000;
  report.goals = [...goals(report.cases), ...floorGoals(report.cases), ...goalCaseGoals(report.cases), ...stateGoals(report.cases), ...journalGoals(report.cases), ...postgresJournalGoals(report.cases), ...shardGoals(report.cases), ...loadGoals(report.cases), ...pageGoals(report.cases), ...inputGoals(report.cases), ...organisationGoals(report.cases)];
  const text = render(report);
  process.stdout.write(`\n${text}\n\nbench took ${report.elapsedS.toFixed(0)} s; results in bench/${RESULTS_FILE}\n`);
  mkdirSync(join(ROOT, 'bench'), { recursive: true });
  writeFileSync(join(ROOT, 'bench', RESULTS_FILE), JSON.stringify(report, null, 2) + '\n');
  // The inputs group is a check, not only a figure: a path that grows faster than linear fails the run.
  const grown = inputGoals(report.cases).filter((g) => !g.ok);
  if (grown.length > 0) {
    process.stderr.write(`bench: inputs: ${grown.map((g) => g.goal).join('; ')}: MISSED\n`);
    process.exitCode = 1;
  }
}

try {
  await main();
} catch (err) {
  process.stderr.write(`bench failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
} finally {
  cleanUp();
}
