/**
 * A run over time for the GitHub job summary, which renders Mermaid: the run in words (where it
 * waited and why), then three `xychart-beta` charts on one time axis: requests sent a second with
 * the 429 answers in front and the rate orgform held itself to; the requests in flight; the answers'
 * mean and slowest latency. Mermaid's charts have no legend, so each says in words what its series
 * are; their colours are set in the chart's init directive. Nothing from outside is written here:
 * only numbers and these words (escaped all the same). Pure.
 */
import type { RunTimeline } from '../../model/run-timeline.js';
import { formatDuration } from '../format-duration.js';
import { capitalise } from '../format-value.js';
import { codeBlock, joinMarkdown, md, type Markdown } from '../markdown-escape.js';
import { BLANK } from '../step-summary.js';
import { niceCeil } from './render-run-chart-svg.js';
import { describeRun, runSeries, UNIT_WORDS } from './run-chart-series.js';

/** Points per chart at most: a summary is read at a glance, and Mermaid labels every one. */
const MAX_POINTS = 60;

export function renderRunChartMermaid(timeline: RunTimeline): Markdown {
  const s = runSeries(timeline, MAX_POINTS);
  const words = UNIT_WORDS[timeline.unit];
  const total = Math.max(1, Math.round(s.at.length * s.seconds));
  const bar = formatDuration(s.seconds * 1000, 'rounded');
  const requestsTop = niceCeil(Math.max(1, ...s.sentPerSecond, ...s.rateLimit.map((r) => r ?? 0)));
  // Mermaid cannot break a line: where nothing limited the rate, the line runs along the top.
  const limit = s.rateLimit.every((r) => r === null) ? undefined : s.rateLimit.map((r) => r ?? requestsTop);
  const latencyMean = s.latencyMean.map((v) => v ?? 0);
  const lines = [
    md`#### The run over time`,
    BLANK,
    ...describeRun(timeline).map((l) => md`- ${l}`),
    BLANK,
    md`_${capitalise(words.sentKey)} (blue bars), ${words.throttledKey} (red bars, in front)${limit === undefined ? '' : ', and the rate orgform held itself to (orange line; along the top where nothing limited it)'}; a bar is ${bar}._`,
    BLANK,
    chart(['#4472c4', '#c62828', '#b35900'], words.perSecond, words.since, total, requestsTop, [`bar ${list(s.sentPerSecond)}`, `bar ${list(s.throttledPerSecond)}`, ...(limit === undefined ? [] : [`line ${list(limit)}`])]),
    BLANK,
    md`_${words.inFlight}: the most at once in each bar._`,
    BLANK,
    chart(['#5b3f99'], words.inFlight, words.since, total, niceCeil(Math.max(1, ...s.inFlight)), [`line ${list(s.inFlight)}`]),
    BLANK,
    md`_${words.latencyCaption}_`,
    BLANK,
    chart(['#0f766e', '#8c959f'], words.latency, words.since, total, niceCeil(Math.max(1, ...s.latencyMax)), [`line ${list(latencyMean)}`, `line ${list(s.latencyMax)}`]),
    BLANK,
    BLANK,
  ];
  return joinMarkdown(lines, md`\n`);
}

function chart(colours: readonly string[], title: string, since: string, seconds: number, top: number, series: readonly string[]): Markdown {
  const init = JSON.stringify({ themeVariables: { xyChart: { plotColorPalette: colours.join(', ') } } });
  return codeBlock('mermaid', [`%%{init: ${init}}%%`, 'xychart-beta', `  title "${title}"`, `  x-axis "seconds since ${since}" 0 --> ${seconds}`, `  y-axis ${JSON.stringify(title)} 0 --> ${top}`, ...series.map((l) => `  ${l}`)]);
}

/** `[1.5, 20, 0]`: numbers as Mermaid reads them, rounded to what a chart can show. */
function list(values: readonly number[]): string {
  return `[${values.map((v) => String(Math.round(v * 10) / 10)).join(', ')}]`;
}
