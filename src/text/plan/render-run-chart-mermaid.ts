/**
 * A run over time for the GitHub job summary, which renders Mermaid: the run in words (where it
 * waited and why), then three `xychart-beta` charts on one time axis: requests sent a second with
 * the 429 answers in front and the rate orgform held itself to; the requests in flight; the answers'
 * mean and slowest latency. Mermaid's charts have no legend, so each says in words what its series
 * are; their colours are set in the chart's init directive. Nothing from outside is written here:
 * only numbers and these words. Pure.
 */
import type { RunTimeline } from '../../model/run-timeline.js';
import { formatDuration } from '../format-duration.js';
import { niceCeil } from './render-run-chart-svg.js';
import { describeRun, runSeries } from './run-chart-series.js';

/** Points per chart at most: a summary is read at a glance, and Mermaid labels every one. */
const MAX_POINTS = 60;

export function renderRunChartMermaid(timeline: RunTimeline): string {
  const s = runSeries(timeline, MAX_POINTS);
  const total = Math.max(1, Math.round(s.at.length * s.seconds));
  const bar = formatDuration(s.seconds * 1000, 'rounded');
  const requestsTop = niceCeil(Math.max(1, ...s.sentPerSecond, ...s.rateLimit.map((r) => r ?? 0)));
  // Mermaid cannot break a line: where nothing limited the rate, the line runs along the top.
  const limit = s.rateLimit.every((r) => r === null) ? undefined : s.rateLimit.map((r) => r ?? requestsTop);
  const latencyMean = s.latencyMean.map((v) => v ?? 0);
  const lines = [
    '#### The run over time',
    '',
    ...describeRun(timeline).map((l) => `- ${l}`),
    '',
    `_Requests sent a second (blue bars), the 429 answers among them (red bars, in front)${limit === undefined ? '' : ', and the rate orgform held itself to (orange line; along the top where nothing limited it)'}; a bar is ${bar}._`,
    '',
    chart(['#4472c4', '#c62828', '#b35900'], 'Requests a second', total, requestsTop, [`bar ${list(s.sentPerSecond)}`, `bar ${list(s.throttledPerSecond)}`, ...(limit === undefined ? [] : [`line ${list(limit)}`])]),
    '',
    '_Requests in flight: the most at once in each bar._',
    '',
    chart(['#5b3f99'], 'Requests in flight', total, niceCeil(Math.max(1, ...s.inFlight)), [`line ${list(s.inFlight)}`]),
    '',
    '_Latency in milliseconds: the mean of the answers in each bar (green), and the slowest (grey)._',
    '',
    chart(['#0f766e', '#8c959f'], 'Latency (ms)', total, niceCeil(Math.max(1, ...s.latencyMax)), [`line ${list(latencyMean)}`, `line ${list(s.latencyMax)}`]),
    '',
  ];
  return `${lines.join('\n')}\n`;
}

function chart(colours: readonly string[], title: string, seconds: number, top: number, series: readonly string[]): string {
  const init = JSON.stringify({ themeVariables: { xyChart: { plotColorPalette: colours.join(', ') } } });
  return ['```mermaid', `%%{init: ${init}}%%`, 'xychart-beta', `  title "${title}"`, `  x-axis "seconds since the first request" 0 --> ${seconds}`, `  y-axis ${JSON.stringify(title)} 0 --> ${top}`, ...series.map((l) => `  ${l}`), '```'].join('\n');
}

/** `[1.5, 20, 0]`: numbers as Mermaid reads them, rounded to what a chart can show. */
function list(values: readonly number[]): string {
  return `[${values.map((v) => String(Math.round(v * 10) / 10)).join(', ')}]`;
}
