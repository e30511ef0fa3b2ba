/**
 * A run over time as an inline SVG drawn here (no chart library, nothing fetched): three panels on
 * one time axis. Requests sent a second (bars), the 429 answers in front of them, and the rate
 * orgform held itself to (dashed line, broken where nothing limited it); the requests in flight; the
 * answers' mean latency and the slowest. Where every request was held back (a 429's pause, the
 * quota) the panels are shaded, so that a wait is seen with its cause above it. Colours come from
 * the page's style; the legend and the run in words go beside the chart (render-apply-report-page.ts).
 */
import type { RunTimeline } from '../../model/run-timeline.js';
import { formatDuration } from '../format-duration.js';
import { html, type Html } from './html.js';
import { runSeries, UNIT_WORDS, type RunSeries } from './run-chart-series.js';

/** Buckets drawn at most: more than the plot has room for in bars is merged (coarsenTimeline). */
const MAX_BARS = 600;

const WIDTH = 1200;
const LEFT = 64;
const RIGHT = 16;
const PLOT = WIDTH - LEFT - RIGHT;

interface Panel {
  title: string;
  top: number;
  height: number;
  max: number;
}

export function renderRunChartSvg(timeline: RunTimeline, options: { title: string; description: string }): Html {
  const s = runSeries(timeline, MAX_BARS);
  const words = UNIT_WORDS[timeline.unit];
  const n = Math.max(1, s.at.length);
  const bar = PLOT / n;
  const x = (i: number) => LEFT + i * bar;
  const requests: Panel = { title: words.perSecond, top: 28, height: 190, max: niceCeil(Math.max(1, ...s.sentPerSecond, ...s.rateLimit.map((r) => r ?? 0))) };
  const flight: Panel = { title: words.inFlight, top: 262, height: 90, max: niceCeil(Math.max(1, ...s.inFlight)) };
  const latency: Panel = { title: words.latency, top: 396, height: 110, max: niceCeil(Math.max(1, ...s.latencyMax)) };
  const y = (p: Panel, v: number) => round(p.top + p.height - (Math.min(v, p.max) / p.max) * p.height);
  const height = latency.top + latency.height + 36;
  const panels = [requests, flight, latency];

  // A part of a bucket held back ends it when the next bucket is held back too (the wait began in it), else begins it.
  const pauseX = (f: number, i: number) => ((s.paused[i + 1] ?? 0) > 0 && f < 1 ? x(i) + bar * (1 - f) : x(i));
  const pauses = s.paused.flatMap((f, i) => (f > 0 ? panels.map((p) => html`<rect class="pause" x="${round(pauseX(f, i))}" y="${p.top}" width="${round(Math.max(1, bar * f))}" height="${p.height}"/>`) : []));
  const sent = s.sentPerSecond.map((v, i) => (v > 0 ? html`<rect class="sent" x="${round(x(i))}" y="${y(requests, v)}" width="${barWidth(bar)}" height="${round(requests.top + requests.height - y(requests, v))}"/>` : html``));
  const throttled = s.throttledPerSecond.map((v, i) => (v > 0 ? html`<rect class="throttled" x="${round(x(i))}" y="${y(requests, v)}" width="${barWidth(bar)}" height="${round(requests.top + requests.height - y(requests, v))}"/>` : html``));
  const limit = stepPath(s.rateLimit, x, bar, (v) => y(requests, v));
  const inFlight = stepPath(s.inFlight, x, bar, (v) => y(flight, v));
  const mean = linePath(s.latencyMean, x, bar, (v) => y(latency, v));
  const slowest = linePath(
    s.latencyMax.map((v, i) => (s.latencyMean[i] === null ? null : v)),
    x,
    bar,
    (v) => y(latency, v),
  );

  return html`<svg class="chart" viewBox="0 0 ${WIDTH} ${height}" role="img" aria-labelledby="chart-title chart-desc" xmlns="http://www.w3.org/2000/svg">
<title id="chart-title">${options.title}</title>
<desc id="chart-desc">${options.description}</desc>
${pauses}
${panels.map((p) => axes(p))}
${sent}${throttled}
${limit === '' ? html`` : html`<path class="limit" d="${limit}"/>`}
${inFlight === '' ? html`` : html`<path class="flight" d="${inFlight}"/>`}
${slowest === '' ? html`` : html`<path class="latency-max" d="${slowest}"/>`}
${mean === '' ? html`` : html`<path class="latency" d="${mean}"/>`}
${timeAxis(s, latency.top + latency.height, x, words.since)}
</svg>`;
}

/** A panel's title, its baseline and grid (0, half, the top) with their values. */
function axes(p: Panel): Html {
  const lines = [0, 0.5, 1].map((f) => {
    const yy = round(p.top + p.height - f * p.height);
    return html`<line class="${f === 0 ? 'axis' : 'grid'}" x1="${LEFT}" x2="${WIDTH - RIGHT}" y1="${yy}" y2="${yy}"/><text x="${LEFT - 6}" y="${yy + 4}" text-anchor="end">${axisNumber(p.max * f)}</text>`;
  });
  return html`<text x="${LEFT}" y="${p.top - 8}" font-weight="600">${p.title}</text>${lines}\n`;
}

/** Ticks at a round step, at most about ten of them, labelled as a clock counts (`1m 30s`). */
function timeAxis(s: RunSeries, bottom: number, x: (i: number) => number, since: string): Html {
  const total = s.at.length * s.seconds;
  const step = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 14400, 28800, 86400].find((t) => total / t <= 10) ?? 86400;
  const ticks: Html[] = [];
  for (let t = 0; t <= total; t += step) {
    const xx = round(x(t / s.seconds));
    ticks.push(html`<line class="axis" x1="${xx}" x2="${xx}" y1="${bottom}" y2="${bottom + 5}"/><text x="${xx}" y="${bottom + 19}" text-anchor="middle">${formatDuration(t * 1000, 'clock')}</text>`);
  }
  return html`${ticks}<text x="${WIDTH - RIGHT}" y="${bottom + 34}" text-anchor="end">time since ${since}</text>`;
}

/** A line held level over each bucket (a rate, a count in flight), broken where there is no value. */
function stepPath(values: ReadonlyArray<number | null>, x: (i: number) => number, bar: number, y: (v: number) => number): string {
  let d = '';
  let last: number | undefined;
  values.forEach((v, i) => {
    if (v === null) {
      last = undefined;
      return;
    }
    const level = y(v);
    if (last === undefined) d += `M${round(x(i))} ${level}`;
    else if (level !== last) d += `V${level}`;
    d += `H${round(x(i) + bar)}`;
    last = level;
  });
  // A level held over many buckets is one segment: `H a H b` is `H b`.
  return d.replace(/(?:H[\d.]+)+(?=H)/g, '');
}

/**
 * A line through each bucket's middle, broken where there is no value; a value with none beside it
 * (a run of one second, an answer between two silent seconds) is a level stroke across its bucket,
 * since a line of one point draws nothing.
 */
function linePath(values: ReadonlyArray<number | null>, x: (i: number) => number, bar: number, y: (v: number) => number): string {
  let d = '';
  values.forEach((v, i) => {
    if (v === null) return;
    const before = i > 0 && values[i - 1] !== null;
    const alone = !before && (i + 1 >= values.length || values[i + 1] === null);
    if (alone) d += `M${round(x(i) + bar * 0.15)} ${y(v)}H${round(x(i) + bar * 0.85)}`;
    else d += `${before ? 'L' : 'M'}${round(x(i) + bar / 2)} ${y(v)}`;
  });
  return d;
}

function barWidth(bar: number): number {
  return round(bar > 4 ? bar * 0.85 : bar);
}

/** The smallest of 1, 2, 2.5, 5 × 10ⁿ at or above `v`: a top for an axis that people read at a glance. */
export function niceCeil(v: number): number {
  const power = 10 ** Math.floor(Math.log10(v));
  return ([1, 2, 2.5, 5, 10].find((m) => m * power >= v) ?? 10) * power;
}

/** `12.5`, `250`, `1,000`: an axis value with its one decimal only when it has one. */
function axisNumber(v: number): string {
  return Number.isInteger(v) ? v.toLocaleString('en') : v.toFixed(1);
}

function round(v: number): number {
  return Math.round(v * 10) / 10;
}
