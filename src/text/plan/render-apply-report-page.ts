/**
 * An apply as one self-contained HTML page (`apply --report FILE.html`): how it ended, the run over
 * time as a chart (render-run-chart-svg.ts) with the run in words, the failures in full, and every
 * change with its outcome in a table filtered by outcome, organisation and kind, failures first.
 * Pure: ApplyReport → string.
 *
 * ApplyReport is what an apply knows at its end: the plan's changes, the summary, whose `notApplied`
 * holds the result of every change not applied (so that the 100,000 applied ones are not kept one
 * by one: every change not in it was applied), and the timeline the client recorded.
 */
import type { ChangeKind } from '../../model/change-kind.js';
import type { RunTimeline } from '../../model/run-timeline.js';
import type { Action } from '../../plan/types.js';
import { terminalSafe } from '../ansi.js';
import { formatDuration } from '../format-duration.js';
import { capitalise } from '../format-value.js';
import { counted, KIND_LABEL, thousands } from './describe-change-group.js';
import { html, type Html } from './html.js';
import { renderPageDocument, type PageCell, type PageTable } from './page-document.js';
import { renderTableSection } from './page-table.js';
import { NO_CHANGES } from './plan-headline.js';
import { renderRunChartSvg } from './render-run-chart-svg.js';
import { describeRun, rate, runSeries, UNIT_WORDS } from './run-chart-series.js';
import type { ApplyCounts, ChangeFailure } from '../../model/apply-result.js';

export type ReportedOutcome = 'applied' | 'already-done' | 'skipped' | 'not-started' | 'stale' | 'failed';

/** How a change failed. */
export type ReportedFailure = ChangeFailure;

/** A change's result (apply/events.ts's ChangeResult is one). */
export interface ReportedResult {
  address: string;
  organisation: string;
  kind: ChangeKind;
  outcome: ReportedOutcome;
  reason?: string;
  failure?: ReportedFailure;
  durationMs: number;
}

/** How the apply ended (executor/events.ts's ApplySummary is one). */
export interface ReportedSummary extends ApplyCounts {
  /** Every change not applied, in plan order. */
  notApplied: readonly ReportedResult[];
}

export interface ApplyReport {
  baseUrl: string;
  /** When the apply started (epoch milliseconds). */
  startedAt: number;
  /** Every change the apply was given, in plan order (the plan's changes, displays dropped or not). */
  changes: ReadonlyArray<{ address: string; kind: ChangeKind; action: Action; organisation: { slug: string } }>;
  summary: ReportedSummary;
  /** What the client recorded of its requests; absent when none was. */
  timeline?: RunTimeline;
  /**
   * Why the run stopped before its end, when something stopped it (an error, a refusal, the client
   * giving up after only 429s, a lost lock): the page leads with it. Absent when it ended by itself or
   * was interrupted.
   */
  stopped?: string;
}

/** The outcomes in the order the page lists them: what needs someone first. */
const OUTCOMES: ReadonlyArray<{ outcome: ReportedOutcome; label: string; tone: 'bad' | 'warn' | 'info' | 'good' }> = [
  { outcome: 'failed', label: 'failed', tone: 'bad' },
  { outcome: 'stale', label: 'stale', tone: 'bad' },
  { outcome: 'not-started', label: 'not started', tone: 'warn' },
  { outcome: 'skipped', label: 'skipped', tone: 'warn' },
  { outcome: 'already-done', label: 'already done', tone: 'info' },
  { outcome: 'applied', label: 'applied', tone: 'good' },
];

/** Failures shown in full above the table; the table has them all. */
const FAILURES_SHOWN = 100;


/** Why the run stopped, a line each: a refusal's details hold line breaks (what differs from the reviewed plan), which are not text to escape. */
function stoppedLines(stopped: string): Html[] {
  return stopped.split('\n').map((line, i) => html`${i === 0 ? '' : html`<br>`}${terminalSafe(line)}`);
}

export function renderApplyReportPage(report: ApplyReport): string {
  const s = report.summary;
  const title = headline(s, report);
  const head = html`<header>
<h1>orgform apply</h1>
<p class="muted">for <code>${terminalSafe(report.baseUrl)}</code>, started ${new Date(report.startedAt).toISOString().replace('T', ' ').slice(0, 19)} UTC, took ${formatDuration(s.elapsedMs)}</p>
</header>
<p><strong>${title}</strong></p>
${report.stopped === undefined ? html`` : html`<div class="banner bad"><strong>Why apply stopped:</strong> ${stoppedLines(report.stopped)}</div>`}`;
  // Stopped before any change was handed to it: there is nothing more to show.
  if (report.stopped !== undefined && report.changes.length === 0) return renderPageDocument({ title: `orgform apply: ${title}`, body: head });
  const body = html`${head}
<ul class="summary" aria-label="Outcomes">${OUTCOMES.map(({ outcome, label }) => html`<li><span class="n">${count(s, outcome).toLocaleString('en')}</span> ${label}</li>`)}</ul>
${chartSection(report.timeline)}
${failuresSection(s.notApplied.filter((r) => r.outcome === 'failed'))}
${renderTableSection({
  id: 'every-change',
  heading: 'Every change',
  intro: html`<p>${counted(s.total, 'change', thousands)}, failures first, then stale, not started, skipped, already done and applied, each in plan order.</p>`,
  what: 'the changes',
  controls: [
    { id: 'outcome', label: 'Outcome', type: 'select', options: OUTCOMES.filter(({ outcome }) => count(s, outcome) > 0).map((o) => o.label) },
    { id: 'organisation', label: 'Organisation', type: 'search', placeholder: 'slug' },
    { id: 'kind', label: 'Kind', type: 'select', options: [...new Set(report.changes.map((c) => KIND_LABEL[c.kind]))] },
    { id: 'why', label: 'Reason or error', type: 'search', placeholder: 'HTTP 500, stale…' },
  ],
  headings: [
    ['Outcome', 11],
    ['Organisation', 16],
    ['Kind', 11],
    ['Change', 26],
    ['Why', 28],
    ['Took', 8],
  ],
})}`;
  return renderPageDocument({ title: `orgform apply: ${title}`, body, table: outcomeTable(report) });
}

function count(s: ReportedSummary, outcome: ReportedOutcome): number {
  switch (outcome) {
    case 'applied':
      return s.applied;
    case 'already-done':
      return s.alreadyDone;
    case 'skipped':
      return s.skipped;
    case 'not-started':
      return s.notStarted;
    case 'stale':
      return s.stale;
    case 'failed':
      return s.failed;
    default: {
      const unreachable: never = outcome;
      throw new Error(`unknown outcome ${String(unreachable)}`);
    }
  }
}

function headline(s: ReportedSummary, report: Pick<ApplyReport, 'stopped' | 'changes'>): string {
  if (report.stopped !== undefined && report.changes.length === 0) return 'Apply stopped before it changed anything.';
  if (report.stopped !== undefined) return `Stopped part way: ${s.applied} applied, ${s.failed} failed, ${s.notStarted} not started; run orgform apply again to finish.`;
  if (s.total === 0) return NO_CHANGES;
  if (s.interrupted) return `Interrupted: ${s.applied} applied, ${s.notStarted} not started; run orgform apply again to finish.`;
  if (s.failed > 0) return `Finished with ${counted(s.failed, 'failure', thousands)}; run orgform apply again to retry what is left.`;
  if (s.stale > 0) return `Finished with ${counted(s.stale, 'stale change', thousands)}; run orgform plan again to review them.`;
  return `Complete: ${counted(s.applied, 'change', thousands)} applied, ${s.alreadyDone} already done.`;
}

function chartSection(timeline: RunTimeline | undefined): Html {
  if (timeline === undefined || timeline.buckets.length === 0) return html`<section aria-labelledby="run-heading"><h2 id="run-heading">The run over time</h2><p>No requests were recorded.</p></section>`;
  const words = describeRun(timeline);
  const unit = UNIT_WORDS[timeline.unit];
  return html`<section aria-labelledby="run-heading">
<h2 id="run-heading">The run over time</h2>
<ul>${words.map((w) => html`<li>${w}</li>`)}</ul>
<ul class="legend" aria-label="Legend">
<li><span class="key sent"></span>${unit.sentKey}</li>
<li><span class="key throttled"></span>429 answers a second</li>
<li><span class="key limit"></span>the rate orgform held itself to</li>
<li><span class="key pause"></span>every request held back</li>
<li><span class="key flight"></span>${unit.inFlight.toLowerCase()}</li>
<li><span class="key latency"></span>${unit.meanKey}</li>
<li><span class="key latency-max"></span>${unit.slowestKey}</li>
</ul>
${renderRunChartSvg(timeline, { title: `The run over time: ${unit.sentKey}, 429 answers, the rate held to, ${unit.inFlight.toLowerCase()} and ${unit.meanKey}`, description: words.join(' ') })}
${numbersTable(timeline)}
</section>`;
}

/** The chart's numbers as a table, for those who cannot see the chart or want the figures. */
function numbersTable(timeline: RunTimeline): Html {
  const s = runSeries(timeline, 300);
  const rows = s.at.map(
    (at, i) =>
      html`<tr><td>${formatDuration(at * 1000, 'clock')}</td><td class="num">${rate(s.sentPerSecond[i]!)}</td><td class="num">${rate(s.throttledPerSecond[i]!)}</td><td class="num">${s.rateLimit[i] === null ? 'none' : rate(s.rateLimit[i]!)}</td><td class="num">${s.inFlight[i]!}</td><td class="num">${s.latencyMean[i] === null ? '' : Math.round(s.latencyMean[i]!)}</td><td class="num">${Math.round(s.latencyMax[i]!)}</td><td class="num">${Math.round(s.paused[i]! * 100)} %</td></tr>\n`,
  );
  const unit = UNIT_WORDS[timeline.unit];
  return html`<details><summary>The chart's numbers (${formatDuration(s.seconds * 1000, 'rounded')} a row)</summary>
<table><thead><tr><th scope="col">From</th><th scope="col" class="num">${unit.perSecond}</th><th scope="col" class="num">429s a second</th><th scope="col" class="num">Rate held to</th><th scope="col" class="num">Most in flight</th><th scope="col" class="num">${capitalise(unit.meanKey)} (ms)</th><th scope="col" class="num">Slowest (ms)</th><th scope="col" class="num">Held back</th></tr></thead><tbody>
${rows}</tbody></table></details>`;
}

function failuresSection(failures: readonly ReportedResult[]): Html {
  if (failures.length === 0) return html``;
  const shown = failures.slice(0, FAILURES_SHOWN);
  return html`<section aria-labelledby="failures-heading">
<h2 id="failures-heading">Failures (${thousands(failures.length)})</h2>
<p>Run orgform apply again: it applies only what is left, and what is done already counts as done.</p>
${shown.map((r) => {
  const f = r.failure;
  const details: Array<[string, string]> = f === undefined ? [['error', 'no details were recorded']] : failureDetails(f);
  return html`<h3>${terminalSafe(r.organisation)} <span class="muted">— <code>${terminalSafe(r.address)}</code></span></h3>
<dl>${details.map(([k, v]) => html`<dt>${k}</dt><dd>${terminalSafe(v)}</dd>`)}</dl>\n`;
})}
${failures.length > shown.length ? html`<p>…and ${counted(failures.length - shown.length, 'more failure', thousands)}: filter the table below by outcome.</p>` : html``}
</section>`;
}

function failureDetails(f: ReportedFailure): Array<[string, string]> {
  return [
    ['operation', `${f.operation}${f.status === undefined ? '' : ` (HTTP ${f.status})`}`],
    ['error', f.serviceCode === undefined ? f.message : `${f.serviceCode}: ${f.serviceMessage ?? f.message}`],
    ...(f.serviceCause === undefined ? [] : [['cause', f.serviceCause] as [string, string]]),
    ...(f.note === undefined || f.serviceCode === undefined ? [] : [['note', f.note] as [string, string]]),
  ];
}

/** One line for the table: `updateBillingDetails · HTTP 500 · internal: database unavailable`. */
function failureLine(f: ReportedFailure): string {
  return failureDetails(f)
    .map(([, v]) => v)
    .join(' · ');
}

function outcomeTable(report: ApplyReport): PageTable {
  const notApplied = new Map(report.summary.notApplied.map((r) => [r.address, r]));
  const byOutcome = new Map<ReportedOutcome, PageCell[][]>(OUTCOMES.map(({ outcome }) => [outcome, []]));
  for (const change of report.changes) {
    const r = notApplied.get(change.address);
    const outcome = r?.outcome ?? 'applied';
    const why = r === undefined ? '' : r.failure !== undefined ? failureLine(r.failure) : (r.reason ?? '');
    byOutcome.get(outcome)!.push([
      OUTCOMES.find((o) => o.outcome === outcome)!.label,
      terminalSafe(change.organisation.slug),
      KIND_LABEL[change.kind],
      terminalSafe(change.address),
      terminalSafe(why),
      r === undefined ? '' : formatDuration(r.durationMs),
    ]);
  }
  return {
    columns: [
      { label: 'Outcome', type: 'outcome' },
      { label: 'Organisation', type: 'name' },
      { label: 'Kind', type: 'text' },
      { label: 'Change', type: 'code' },
      { label: 'Why', type: 'text' },
      { label: 'Took', type: 'text' },
    ],
    rows: OUTCOMES.flatMap(({ outcome }) => byOutcome.get(outcome)!),
    marks: [],
    filters: [
      { id: 'outcome', type: 'select', column: 0 },
      { id: 'organisation', type: 'search', columns: [1] },
      { id: 'kind', type: 'select', column: 2 },
      { id: 'why', type: 'search', columns: [4] },
    ],
    noun: ['change', 'changes'],
    pageSize: 500,
  };
}
