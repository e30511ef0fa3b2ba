// The floor case: right after each plan and apply run, scripts/bench/floor-client.mjs (a bare
// undici.request client) sends the same requests to the same emulator, under the same probe. The
// plan and apply cases then carry their ratio to it (requests phase, CPU per request) beside their
// ratio to the ideal: the ideal ignores what any Node client costs, the floor does not.
import { summariseTimeline } from './page-timeline.mjs';
import { runNode } from './processes.mjs';

const CLIENT = new URL('./floor-client.mjs', import.meta.url).pathname;
/** Goals against the floor (issue 35): the median of the ratios of paired runs (each orgform run over the floor run right after it). */
export const FLOOR_GOALS = { applyPhase: 1.03, planPhase: 1.05, applyCpuPerRequest: 1.5 };

/**
 * Runs the floor for the orgform run `like` (whose counted requests it repeats). An apply's listing
 * read again behind the writes takes the page size orgform chose, found from the emulator's counters:
 * it reads until every organisation is found, ceil(organisations / page size) pages.
 */
export async function measureFloor(ctx, kind, n, round, like, planPages) {
  const { emulator, settings } = ctx;
  await emulator.resetCounters();
  const serviceCpuBefore = emulator.cpuMs();
  const freshPages = kind === 'apply' ? like.listingPages - planPages : 0;
  const freshPageSize = kind === 'apply' ? Math.ceil(n / Math.max(1, freshPages)) : 0;
  const args = [CLIENT, kind, emulator.url, 'demo-token', '500', String(settings.parallelism), String(freshPageSize), `floor-r${round}`];
  const env = { ...ctx.baseEnv(), ...(ctx.timeline && kind === 'plan' ? { ORGFORM_BENCH_TIMELINE: '1' } : {}) };
  const run = await runNode(args, { cwd: ctx.tmp, env, timeoutMs: 600_000, ...ctx.files(`floor-${kind}-${n}-${round}`) });
  if (run.code !== 0) throw ctx.fail(`floor ${kind} at ${n}`, run);
  const counters = await emulator.counters();
  const serviceCpuMs = serviceCpuBefore === undefined ? undefined : emulator.cpuMs() - serviceCpuBefore;
  if (kind === 'apply' && counters.byOperation.updateBillingDetails !== n) throw new Error(`floor apply at ${n} sent ${counters.byOperation.updateBillingDetails} billing updates, expected ${n}`);
  const pages = counters.byOperation.getOrganisations;
  return {
    case: `floor: ${kind} ${n.toLocaleString('en-US')}`,
    kind: 'floor',
    of: kind,
    organisations: n,
    listingPages: pages,
    byOperation: counters.byOperation,
    sameRequests: counters.total === like.requests,
    ...ctx.timings(run, counters, ctx.idealMs(counters, settings.latencyMs, settings.parallelism, kind === 'apply' ? planPages : pages), serviceCpuMs),
    rssSource: run.rssSource,
    timeline: summariseTimeline(run.probe?.pages),
  };
}

const ratio = (a, b) => (a === null || a === undefined || !b ? null : a / b);

/** The median and range of one ratio over the paired rounds; null when a round has none. */
function pairedRatio(runs, floors, field) {
  const values = runs.map((run, i) => ratio(run[field], floors[i]?.[field]));
  if (values.some((v) => v === null)) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return { median: sorted[sorted.length >> 1], min: sorted[0], max: sorted[sorted.length - 1], runs: values.length };
}

/**
 * The orgform case (the median run `c` of `runs`) with its ratios to the floor beside it: each
 * round's orgform run over the floor run right after it (paired, so that the load of the moment
 * weighs on both alike), their median and range.
 */
export function withFloor(c, floor, runs = [c], floors = [floor]) {
  const phase = pairedRatio(runs, floors, 'requestPhaseMs');
  const cpu = pairedRatio(runs, floors, 'cpuPerRequestMs');
  return {
    ...c,
    floor: {
      requests: floor.requests,
      requestPhaseMs: floor.requestPhaseMs,
      clientCpuMs: floor.breakdown?.clientCpuMs,
      cpuPerRequestMs: floor.cpuPerRequestMs,
      requestPhaseRatio: phase?.median ?? null,
      wallRatio: ratio(c.wallMs, floor.wallMs),
      cpuPerRequestRatio: cpu?.median ?? null,
      paired: { requestPhase: phase, cpuPerRequest: cpu },
    },
  };
}

/** `median (min–max, N pairs)` of the paired ratios, for the lines under the table. */
export function renderFloorRatios(cases) {
  const f = (r) => (r === null || r === undefined ? '-' : r.runs === 1 ? r.median.toFixed(3) : `${r.median.toFixed(3)} (${r.min.toFixed(3)}–${r.max.toFixed(3)}, ${r.runs} pairs)`);
  return cases
    .filter((c) => c.floor?.paired !== undefined)
    .map((c) => `${c.case} ÷ floor, paired: requests phase ${f(c.floor.paired.requestPhase)}; client CPU ${f(c.floor.paired.cpuPerRequest)}`);
}

export function floorGoals(cases) {
  const out = [];
  const find = (name) => cases.find((c) => c.case === name);
  const apply = find('apply 10,000');
  const plan = find('plan 10,000');
  if (apply?.floor) {
    out.push({ goal: `apply 10,000: requests phase / floor <= ${FLOOR_GOALS.applyPhase}`, value: apply.floor.requestPhaseRatio, ok: apply.floor.requestPhaseRatio !== null && apply.floor.requestPhaseRatio <= FLOOR_GOALS.applyPhase });
    out.push({ goal: `apply 10,000: client CPU / floor <= ${FLOOR_GOALS.applyCpuPerRequest}`, value: apply.floor.cpuPerRequestRatio, ok: apply.floor.cpuPerRequestRatio !== null && apply.floor.cpuPerRequestRatio <= FLOOR_GOALS.applyCpuPerRequest });
  }
  if (plan?.floor) out.push({ goal: `plan 10,000: requests phase / floor <= ${FLOOR_GOALS.planPhase}`, value: plan.floor.requestPhaseRatio, ok: plan.floor.requestPhaseRatio !== null && plan.floor.requestPhaseRatio <= FLOOR_GOALS.planPhase });
  return out;
}
