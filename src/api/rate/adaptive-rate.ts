/**
 * The adaptive request rate of one client, as pure functions of what happened: requests sent,
 * answers received (429 or not) and the rate-limit headers they carried. The shape is the AWS
 * SDKs' adaptive retry mode (botocore `retries/adaptive.py`, `throttling.py`): a client-side token
 * bucket whose rate follows CUBIC, cut to β = 0.7 × the measured rate on a throttle and grown back
 * along C·(t−K)³ + W_max (C = 0.4) while answers succeed, never beyond twice the rate actually
 * sent; no limit at all until the first throttle or rate-limit header.
 *
 * The departures, each because a 429 here also pauses every request until Retry-After, so that
 * every throttle costs a whole pause (a second of nothing, at Retry-After: 1), not one retry:
 * - the rate a throttle is measured at is the lowest of the rate allowed, sent and admitted
 *   (answers other than 429) over the last buckets: under overload the admitted rate is the
 *   service's limit, which the sending rate overstates;
 * - the cubic climbs back to `headroom` (0.95) × that rate, not to the rate itself, and probes
 *   above it `probeSlowdown` (64) times more gently: gently enough that one client alone meets a
 *   steady limit every ten seconds or so, fast enough (+20 % in 15 s) that clients sharing a limit
 *   (shards) take back within seconds the share one that finished gave up;
 * - each throttle at the same level as the one before, after a steady spell (`steadyGapMs`), makes
 *   the next probe take twice as long, so that a steady limit is met a few times a run (measured
 *   against the emulator's bucket: see docs/reliability.md); throttles closer together are
 *   contention between clients sharing the limit, and slow nothing, or a client held back early
 *   would stay at its small share for the rest of the run (docs/performance.md, shards);
 * - a throttle well below the last (under 90 % of it) means the limit is now shared: W_max is set
 *   to (1 + β) / 2 of the rate met (CUBIC's fast convergence, RFC 9438 §4.7), so that a client that
 *   held a large share gives it up within a few cuts;
 * - 429s for requests sent before the last cut are the same congestion event: one cut, not one per
 *   request in flight;
 * - a throttle of a burst sent before anything limited the client (the first requests of a run,
 *   all at once) says only that the burst was too much: the rate then starts from 0.7 × what was
 *   sent or admitted (at least 5 a second) and doubles every second (TCP's slow start) until the
 *   next throttle, which does measure it.
 * A rate the service announces (RateLimit-Policy, X-RateLimit-Limit) caps the rate, at 0.98 of it
 * (never below `minRps`), from the first answer that carries it, before any 429.
 */

/** Sending at this share of the rate allowed or more, the client was held back by it. */
const SATURATED = 0.8;

/** What the service said about its limit on one answer (see rate-limit-headers.ts). */
export interface RateLimitHint {
  /** Requests allowed per second in the long run (quota ÷ window). */
  rps?: number;
  /** Requests left in the current window or bucket. */
  remaining?: number;
  /** Milliseconds until the quota is restored. */
  resetMs?: number;
}

export interface RateSettings {
  /** --max-rps: never faster than this; Infinity for no cap. */
  maxRps: number;
  /** Multiplicative decrease on a throttle (AWS: 0.7). */
  beta: number;
  /** CUBIC's scale constant C, in requests/s per s³ (AWS: 0.4). */
  scale: number;
  /** The rate never drops below this (AWS: 0.5). */
  minRps: number;
  /** Share of a measured limit to run at. */
  headroom: number;
  /** Share of an announced limit to run at: it is exact, and the service's burst absorbs jitter. */
  announcedHeadroom: number;
  /** How many times more slowly the rate probes above `headroom` × the last limit than it climbed back to it. */
  probeSlowdown: number;
  /** Each throttle at the same level as the one before (within 10 %) multiplies the slowdown by this (8: the next probe takes twice as long)… */
  probeBackoff: number;
  /** …up to this. */
  maxProbeSlowdown: number;
  /**
   * A throttle sooner than this after the one before is contention (other clients sharing the
   * limit, each probing), not a steady limit met by a probe: it never slows the next probe.
   */
  steadyGapMs: number;
  /** The rate is never raised beyond this many times the rate actually sent (AWS: 2). */
  maxGrowth: number;
  /** Meter buckets and smoothing (AWS: 500 ms, 0.8). */
  meterBucketMs: number;
  smoothing: number;
  /** A wait for an empty quota (Remaining 0) longer than this is taken as a pause; shorter ones are left to pacing. */
  minQuotaPauseMs: number;
  /** In slow start the rate doubles this often… */
  slowStartDoublingMs: number;
  /** …from at least this: one early 429 says little, and from 5 a second 40 is three doublings away. */
  minSlowStartRps: number;
}

export const DEFAULT_RATE_SETTINGS: RateSettings = {
  maxRps: Infinity,
  beta: 0.7,
  scale: 0.4,
  minRps: 0.5,
  headroom: 0.95,
  announcedHeadroom: 0.98,
  probeSlowdown: 64,
  probeBackoff: 8,
  maxProbeSlowdown: 64 * 8 ** 3,
  steadyGapMs: 7_000,
  maxGrowth: 2,
  meterBucketMs: 500,
  smoothing: 0.8,
  minQuotaPauseMs: 2_000,
  slowStartDoublingMs: 1_000,
  minSlowStartRps: 5,
};

/** An exponentially smoothed count of events per second, updated once per bucket (AWS's RateClocker). */
export interface RateMeter {
  bucketStart: number;
  /** RateState.pausedMs when the bucket started: time paused does not count as time measured. */
  pausedAtStart: number;
  count: number;
  /** Buckets closed so far. */
  closed: number;
  /** Events per second; 0 until the first bucket closes. */
  rate: number;
}

export interface RateState {
  /** Requests per second allowed now; Infinity while nothing limits the client. */
  rps: number;
  /** The rate the last throttle was measured at (CUBIC's W_max); 0 before any throttle. */
  wMax: number;
  /** Seconds the cubic takes to climb back to `headroom` × W_max (CUBIC's K). */
  k: number;
  /** The probe above the plateau is this many times slower than the climb to it (see probeBackoff). */
  probeSlowdown: number;
  /** When the cubic's clock starts: the end of the last throttle's pause. */
  cubicFrom: number;
  /** Slow start after a throttle that could not be measured: the rate doubles from `rps` at cubicFrom. */
  slowStartRps: number | undefined;
  /** Milliseconds spent paused so far (Retry-After, empty quotas). */
  pausedMs: number;
  /** Since when the rate has been finite: attempts sent before were not paced. */
  pacedSince: number;
  /** When the last cut was made; 429s for requests sent before it belong to the same event. */
  throttledAt: number;
  /** sent.closed at the last cut: a measurement needs a bucket closed since. */
  closedAtCut: number;
  /** No request may be sent before this (Retry-After, or an empty quota). */
  pauseUntil: number;
  /** The long-run rate the service announced; Infinity when it did not. */
  announcedRps: number;
  sent: RateMeter;
  admitted: RateMeter;
}

export type RateChange = 'throttled' | 'announced' | 'quota-empty' | 'none';

export function initialRateState(settings: RateSettings, now: number): RateState {
  const meter = { bucketStart: now, pausedAtStart: 0, count: 0, rate: 0, closed: 0 };
  return {
    rps: settings.maxRps,
    wMax: 0,
    k: 0,
    probeSlowdown: settings.probeSlowdown,
    cubicFrom: now,
    slowStartRps: undefined,
    pausedMs: 0,
    pacedSince: Number.isFinite(settings.maxRps) ? now : Infinity,
    throttledAt: -Infinity,
    closedAtCut: 0,
    pauseUntil: -Infinity,
    announcedRps: Infinity,
    sent: meter,
    admitted: { ...meter },
  };
}

/** Milliseconds a meter's open bucket has measured: since it started, less the time paused since. */
function measuredMs(meter: RateMeter, now: number, pausedMs: number): number {
  return Math.max(0, now - meter.bucketStart - (pausedMs - meter.pausedAtStart));
}

/** Counts one event; closes the bucket, folding its rate into the smoothed one, once it is over. */
export function tickMeter(meter: RateMeter, settings: RateSettings, now: number, pausedMs: number): RateMeter {
  const elapsed = measuredMs(meter, now, pausedMs);
  if (elapsed < settings.meterBucketMs) return { ...meter, count: meter.count + 1 };
  const current = (meter.count * 1000) / elapsed;
  const rate = meter.rate === 0 ? current : current * settings.smoothing + meter.rate * (1 - settings.smoothing);
  return { bucketStart: now, pausedAtStart: pausedMs, count: 1, rate, closed: meter.closed + 1 };
}

/** The rate a meter shows; 0 until a bucket has closed (nothing measured yet). */
function meterRate(meter: RateMeter): number {
  return meter.rate;
}

/**
 * The cap that holds whatever the cubic says: --max-rps and the announced rate. An announced rate
 * is never taken below `minRps`: a long window's quota ÷ window (`q=2;w=86400`) would otherwise
 * space requests hours apart, a pause no one sees; below `minRps` the quota's own Remaining and
 * reset say when to stop (a pause until the reset, or, beyond what orgform waits, the end of the run).
 */
function cap(state: RateState, settings: RateSettings): number {
  return Math.min(settings.maxRps, Math.max(settings.minRps, state.announcedRps * settings.announcedHeadroom));
}

/** CUBIC's curve: up to `headroom` × W_max by K seconds after the pause, then a slow probe above it. */
export function cubicRate(state: RateState, settings: RateSettings, now: number): number {
  const t = Math.max(0, now - state.cubicFrom) / 1000;
  if (state.slowStartRps !== undefined) return state.slowStartRps * 2 ** ((t * 1000) / settings.slowStartDoublingMs);
  const plateau = state.wMax * settings.headroom;
  const d = t - state.k;
  const scale = d < 0 ? settings.scale : settings.scale / state.probeSlowdown;
  return Math.max(settings.minRps, scale * d * d * d + plateau);
}

export function recordSend(state: RateState, settings: RateSettings, now: number): RateState {
  return { ...state, sent: tickMeter(state.sent, settings, now, state.pausedMs) };
}

/** Holds every request until `until`; the meters leave the time paused out of what they measure. */
function pause(state: RateState, now: number, until: number): RateState {
  if (until <= state.pauseUntil) return state;
  const added = until - Math.max(now, state.pauseUntil);
  return { ...state, pauseUntil: until, pausedMs: state.pausedMs + Math.max(0, added) };
}

export interface AnswerFacts {
  now: number;
  /** When the answered attempt was sent. */
  sentAt: number;
  /** HTTP 429. */
  throttled: boolean;
  /** Retry-After in milliseconds, when given. */
  retryAfterMs?: number;
  hint?: RateLimitHint;
}

/**
 * The state after one answer, and what changed that is worth telling people: a cut after a 429,
 * a rate announced (or changed) by the service, or an empty quota that pauses everyone.
 */
export function recordAnswer(state: RateState, settings: RateSettings, facts: AnswerFacts): { state: RateState; change: RateChange } {
  const { now } = facts;
  let next: RateState = state;
  let change: RateChange = 'none';

  const announced = facts.hint?.rps;
  const differs = (a: number, b: number) => !Number.isFinite(b) || Math.abs(a - b) > b * 0.01;
  if (announced !== undefined && Number.isFinite(announced) && announced > 0 && differs(announced, state.announcedRps)) {
    const before = cap(state, settings);
    next = { ...next, announcedRps: announced };
    if (Math.abs(cap(next, settings) - before) > 1e-9) change = 'announced';
  }

  if (facts.throttled) {
    next = pause(next, now, now + Math.max(0, facts.retryAfterMs ?? 0));
    // A new congestion event (429s for requests sent before the last cut belong to that one).
    if (facts.sentAt > next.throttledAt) {
      next = { ...next, ...cutAfterThrottle(next, settings, facts), throttledAt: now, closedAtCut: next.sent.closed, cubicFrom: next.pauseUntil };
      change = 'throttled';
    }
  } else {
    const admitted = admit(next, settings, facts);
    // Only an empty quota pauses on an answer let through.
    if (admitted.pauseUntil > next.pauseUntil && change === 'none') change = 'quota-empty';
    next = admitted;
  }

  // Before any throttle only the caps limit the rate (Infinity when there are none).
  const limit = cap(next, settings);
  const rps = next.wMax === 0 ? limit : Math.min(next.rps, limit);
  if (rps !== next.rps) next = { ...next, rps };
  if (!Number.isFinite(state.rps) && Number.isFinite(next.rps)) next = { ...next, pacedSince: now };
  return { state: next, change };
}

type Cut = Pick<RateState, 'wMax' | 'k' | 'rps' | 'slowStartRps' | 'probeSlowdown'>;

/** Where a new congestion event puts the rate: below where it was met, or (nothing measured) a slow start. */
function cutAfterThrottle(next: RateState, settings: RateSettings, facts: AnswerFacts): Cut {
  const { now } = facts;
  // Only an attempt sent while the client was being paced says anything about the limit:
  // unpaced, it shows only that a burst was too much.
  const paced = facts.sentAt >= next.pacedSince;
  const sent = meterRate(next.sent);
  const admitted = meterRate(next.admitted);
  if (paced && Number.isFinite(next.rps)) {
    // The meters measure the rate only once they have closed a bucket since the last cut, and
    // only the service's limit while the client sent about as fast as it was allowed (or was in
    // slow start, measuring): a client that sent less showed its own demand, not the limit.
    const measured = next.sent.closed > next.closedAtCut && sent > 0 && admitted > 0;
    const saturated = measured && (next.slowStartRps !== undefined || sent >= next.rps * SATURATED);
    // Cut below the rate the event happened at: the rate allowed, or less if less was sent
    // (or admitted) over the last buckets.
    const at = saturated ? Math.min(next.rps, sent, admitted) : next.rps;
    const metAt = Math.max(settings.minRps, at);
    const rps = Math.max(settings.minRps, metAt * settings.beta);
    const comparable = saturated && next.wMax > 0 && next.slowStartRps === undefined;
    // The limit met where it was met last time, after a steady spell: it is steady, so probe
    // above it less often. A throttle soon after the last is contention: probe as before.
    const sameLevel = comparable && Math.abs(metAt - next.wMax) <= next.wMax * 0.1 && now - next.throttledAt >= settings.steadyGapMs;
    const probeSlowdown = sameLevel ? Math.min(settings.maxProbeSlowdown, next.probeSlowdown * settings.probeBackoff) : settings.probeSlowdown;
    // CUBIC's fast convergence (RFC 9438, 4.7): met well below where it was met last time, the
    // limit is being shared with clients that came since; aim below the measure, at (1 + β) / 2
    // of it, so that the share is given up within a few cuts rather than held on to.
    const wMax = comparable && metAt < next.wMax * 0.9 ? (metAt * (1 + settings.beta)) / 2 : metAt;
    // K: the time for C·(t−K)³ + headroom·W_max to climb from β·W_max back to the plateau.
    return { wMax, k: Math.cbrt(Math.max(0, wMax * settings.headroom - rps) / settings.scale), rps, slowStartRps: undefined, probeSlowdown };
  }
  // A burst before the announced rate was known: after the pause, go at it (W_max 0: the caps alone).
  if (Number.isFinite(next.announcedRps)) return { wMax: 0, k: 0, rps: cap(next, settings), slowStartRps: undefined, probeSlowdown: settings.probeSlowdown };
  // Nothing measured: start below what the client sent or the service let through, and double from there.
  const base = Math.max(sent, admitted, next.admitted.count, next.sent.count, 1);
  const rps = Math.min(settings.maxRps, Math.max(settings.minSlowStartRps, settings.minRps, base * settings.beta));
  return { wMax: rps, k: 0, rps, slowStartRps: rps, probeSlowdown: settings.probeSlowdown };
}

/** An answer let through: counted, the rate grown along the cubic, and an empty quota waited out. */
function admit(state: RateState, settings: RateSettings, facts: AnswerFacts): RateState {
  const { now } = facts;
  let next: RateState = { ...state, admitted: tickMeter(state.admitted, settings, now, state.pausedMs) };
  if (next.wMax > 0) {
    // Grow along the cubic, but never past twice what is actually sent: a client held back by
    // its own parallelism must not bank a rate it never tried.
    let rps = cubicRate(next, settings, now);
    const sent = meterRate(next.sent);
    if (sent > 0) rps = Math.min(rps, Math.max(next.rps, sent * settings.maxGrowth));
    next = { ...next, rps };
  }
  const hint = facts.hint;
  if (hint?.remaining !== undefined && hint.remaining <= 0 && hint.resetMs !== undefined && hint.resetMs >= settings.minQuotaPauseMs) {
    // A quota used up until a reset well ahead (a fixed window): waiting is all that helps.
    const pauseUntil = now + hint.resetMs;
    if (pauseUntil > next.pauseUntil + 1000) return pause(next, now, pauseUntil);
  }
  return next;
}
