/**
 * What the charts of a run draw (render-run-chart-svg.ts, render-run-chart-mermaid.ts), read from
 * its timeline: per bucket, requests and 429s a second, the rate held to, requests in flight, the
 * answers' mean and slowest latency, and the share of it every request was held back; and the run
 * in words, saying where it waited and why. Pure.
 */
import { coarsenTimeline, type RunTimeline, type TimelineUnit } from '../../model/run-timeline.js';
import { formatDuration } from '../format-duration.js';
import { counted, thousands } from './describe-change-group.js';

/** How the charts and words name what a timeline counts: request attempts, or changes (run-timeline.ts). */
export interface UnitWords {
  /** One of them: `request`, `change`. */
  one: string;
  /** The first panel's title, and its bars in the legend. */
  perSecond: string;
  sentKey: string;
  /** The 429 answers beside them, in the job summary's words. */
  throttledKey: string;
  inFlight: string;
  latency: string;
  meanKey: string;
  slowestKey: string;
  /** The job summary's words under its latency chart. */
  latencyCaption: string;
  /** What the time axis counts from. */
  since: string;
  failed(n: number): string;
  took: string;
}

export const UNIT_WORDS: Readonly<Record<TimelineUnit, UnitWords>> = {
  request: {
    one: 'request',
    perSecond: 'Requests a second',
    sentKey: 'requests sent a second',
    throttledKey: 'the 429 answers among them',
    inFlight: 'Requests in flight',
    latency: 'Latency (ms)',
    meanKey: 'mean latency',
    slowestKey: 'slowest answer',
    latencyCaption: 'Latency in milliseconds: the mean of the answers in each bar (green), and the slowest (grey).',
    since: 'the first request',
    failed: (n) => `${counted(n, 'attempt', thousands)} failed without an answer or with a 5xx`,
    took: 'Answers took',
  },
  change: {
    one: 'change',
    perSecond: 'Changes started a second',
    sentKey: 'changes started a second',
    throttledKey: 'the 429 answers to their requests',
    inFlight: 'Changes in flight',
    latency: 'Time a change took (ms)',
    meanKey: 'mean time a change took',
    slowestKey: 'slowest change',
    latencyCaption: 'How long changes took, in milliseconds: the mean of those that ended in each bar (green), and the slowest (grey).',
    since: 'the first change',
    failed: (n) => `${counted(n, 'change', thousands)} failed`,
    took: 'Changes took',
  },
};

export interface RunSeries {
  /** Each bucket's start, in seconds from the run's start. */
  at: number[];
  /** The buckets' length in seconds. */
  seconds: number;
  sentPerSecond: number[];
  throttledPerSecond: number[];
  /** Requests a second orgform held itself to; null where nothing limited it. */
  rateLimit: Array<number | null>;
  inFlight: number[];
  /** Mean latency of the bucket's answers (ms); null where none came. */
  latencyMean: Array<number | null>;
  latencyMax: number[];
  /** How much of the bucket every request was held back, 0 to 1. */
  paused: number[];
}

export function runSeries(timeline: RunTimeline, maxBuckets: number): RunSeries {
  const t = coarsenTimeline(timeline, maxBuckets);
  const seconds = t.bucketMs / 1000;
  const b = t.buckets;
  return {
    at: b.map((_, i) => i * seconds),
    seconds,
    sentPerSecond: b.map((x) => x.sent / seconds),
    throttledPerSecond: b.map((x) => x.throttled / seconds),
    rateLimit: b.map((x) => x.rateLimit),
    inFlight: b.map((x) => x.maxInFlight),
    latencyMean: b.map((x) => (x.answered > 0 ? x.latencySumMs / x.answered : null)),
    latencyMax: b.map((x) => x.latencyMaxMs),
    paused: b.map((x) => Math.min(1, x.pausedMs / t.bucketMs)),
  };
}

/** The run in a few sentences: how many requests (or changes), the 429s, where it waited and for how long, the rate held to, the latency. */
export function describeRun(timeline: RunTimeline): string[] {
  const words = UNIT_WORDS[timeline.unit];
  const b = timeline.buckets;
  const sum = (f: (x: (typeof b)[number]) => number) => b.reduce((n, x) => n + f(x), 0);
  const sent = sum((x) => x.sent);
  const answered = sum((x) => x.answered);
  const throttled = sum((x) => x.throttled);
  const failed = sum((x) => x.failed);
  const pausedMs = sum((x) => x.pausedMs);
  const lines = [`${counted(sent, words.one, thousands)} in ${formatDuration(b.length * timeline.bucketMs, 'rounded')}, at most ${Math.max(0, ...b.map((x) => x.maxInFlight))} in flight.`];
  if (throttled > 0) lines.push(`${counted(throttled, 'answer', thousands)} ${throttled === 1 ? 'was' : 'were'} 429 (too many requests)${failed > 0 ? `, and ${words.failed(failed)}` : ''}.`);
  else if (failed > 0) lines.push(`${words.failed(failed)}.`);
  else lines.push('No answer was 429 (too many requests).');
  const pauses = waits(timeline);
  if (pauses.length > 0) {
    const longest = pauses.reduce((a, w) => (w.ms > a.ms ? w : a));
    lines.push(
      `Every request was held back ${pauses.length === 1 ? 'once' : `${pauses.length} times`}, ${formatDuration(pausedMs, 'rounded')} in all; the longest wait began ${formatDuration(longest.from * 1000, 'clock')} in and lasted ${formatDuration(longest.ms, 'rounded')}.`,
    );
  }
  const limits = b.map((x) => x.rateLimit).filter((r): r is number => r !== null);
  if (limits.length > 0) {
    const low = Math.min(...limits);
    const high = Math.max(...limits);
    lines.push(`orgform held itself to ${low === high ? rate(low) : `between ${rate(low)} and ${rate(high)}`} requests a second${limits.length < b.length ? ' (unlimited at other times)' : ''}.`);
  } else {
    lines.push('Nothing limited the rate.');
  }
  if (answered > 0) lines.push(`${words.took} ${formatDuration(sum((x) => x.latencySumMs) / answered)} on average, ${formatDuration(Math.max(...b.map((x) => x.latencyMaxMs)))} at the slowest.`);
  return lines;
}

/** The runs of consecutive buckets in which every request was held back: where (seconds in) and how long. */
function waits(timeline: RunTimeline): Array<{ from: number; ms: number }> {
  const out: Array<{ from: number; ms: number }> = [];
  let current: { from: number; ms: number } | undefined;
  timeline.buckets.forEach((x, i) => {
    if (x.pausedMs > 0) {
      current ??= { from: (i * timeline.bucketMs) / 1000, ms: 0 };
      current.ms += x.pausedMs;
    } else if (current !== undefined) {
      out.push(current);
      current = undefined;
    }
  });
  if (current !== undefined) out.push(current);
  return out;
}

/** `47`, `2.5`: a rate as people read it. */
export function rate(rps: number): string {
  return rps >= 10 ? String(Math.round(rps)) : String(Math.round(rps * 10) / 10);
}
