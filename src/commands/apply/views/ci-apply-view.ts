/**
 * The apply view as a CI job sees it: what the view writes, plus GitHub annotations for problems
 * and failures, and the job summary. A decorator: it adds to the view's output, never changes it
 * (the folding and guarding of the log is the view's own, through its LogFrame). The words of the
 * annotations and the job summary are here; ci/pipeline-output.ts writes them where the CI service
 * reads them.
 */
import type { ApplyView } from '../view.js';
import type { OutputStream } from '../../../cli-io.js';
import type { PipelineOutput } from '../../../ci/pipeline-output.js';
import type { ApplySummary, ChangeResult } from '../../../executor/events.js';
import { configFindings, planFindings, type Finding } from '../../../text/findings.js';
import { formatDuration } from '../../../text/format-duration.js';
import { markedName, plural } from '../../../text/format-value.js';
import { joinMarkdown, md, type Markdown } from '../../../text/markdown-escape.js';
import { NO_CHANGES } from '../../../text/plan/plan-headline.js';
import { BLANK, bytes, capped, DEFAULT_SUMMARY_BYTES, DEFAULT_SUMMARY_ORGANISATIONS, fitBytes, renderConfigStepSummary, type StepSummaryOptions } from '../../../text/step-summary.js';
import { NO_FAILURE_DETAILS } from './render-apply.js';
import type { RunTimeline } from '../../../model/run-timeline.js';

/**
 * `log`: the stream annotations go to (standard output for text, else standard error, which carries
 * no document); `timeline`: the run's, for the job summary's chart, when one is recorded.
 */
export function withApplyPipeline(view: ApplyView, pipeline: PipelineOutput, log: OutputStream, timeline: () => RunTimeline | undefined = () => undefined): ApplyView {
  return {
    ...view,
    async configRejected(problems) {
      await view.configRejected?.(problems);
      await pipeline.annotate(configFindings(problems), log);
      if (problems.length > 0) await pipeline.appendStepSummary(() => renderConfigStepSummary('apply', problems), log);
    },
    async planRefused(plan, hazard, desired) {
      await view.planRefused?.(plan, hazard, desired);
      if (hazard.kind === 'incomplete') await pipeline.annotate(planFindings(plan, desired), log);
    },
    async applyReported(summary) {
      await view.applyReported(summary);
      // After the view: its lines are folded and guarded, and an annotation inside the guard would be ignored.
      await pipeline.annotate(applyFindings(summary), log);
      await pipeline.appendStepSummary(async () => renderApplyStepSummary(summary, { chart: await runChart(timeline()) }), log);
    },
  };
}

/**
 * GitHub shows at most ten error annotations of a step; past that one warning says how many more
 * there are and where they all are, rather than ten failures standing for thousands.
 */
export const MAX_APPLY_FINDINGS = 10;

/** One error per failed change of an apply (its operation, status and the service's Error body), then how many more. */
export function applyFindings(summary: Pick<ApplySummary, 'notApplied'>, max: number = MAX_APPLY_FINDINGS): Finding[] {
  const failed = summary.notApplied.filter((r) => r.outcome === 'failed');
  const shown = failed.slice(0, max).map((r): Finding => {
    const f = r.failure;
    const status = f?.status === undefined ? '' : ` (HTTP ${f.status})`;
    const error = f === undefined ? NO_FAILURE_DETAILS : f.serviceCode !== undefined ? `${f.serviceCode}: ${f.serviceMessage ?? ''}` : f.message;
    return { check: 'apply', level: 'error', message: `${r.address} failed${f === undefined ? '' : ` in ${f.operation}${status}`}: ${error}` };
  });
  if (failed.length > max) shown.push({ check: 'apply', level: 'warning', message: `…and ${failed.length - max} more failed changes: every failure is in the job summary and the log.` });
  return shown;
}

/**
 * Apply's job summary: the counts by outcome, the run over time (a chart GitHub draws, when the
 * timeline was recorded and it fits), the organisations changed, what was stale, and every failure
 * in full while they fit. `chart`: the run over time (render-run-chart-mermaid.ts).
 */
export function renderApplyStepSummary(summary: ApplySummary, options: StepSummaryOptions & { chart?: Markdown | undefined } = {}): string {
  const cap = options.maxOrganisations ?? DEFAULT_SUMMARY_ORGANISATIONS;
  const maxBytes = options.maxBytes ?? DEFAULT_SUMMARY_BYTES;
  const out: Markdown[] = [md`### orgform apply`, BLANK, md`**${applyHeadline(summary)}**`, BLANK];
  if (summary.total === 0) return joinMarkdown(out, md`\n`).text + '\n';

  out.push(
    md`| Outcome | Changes |`,
    md`| --- | ---: |`,
    md`| ✓ applied | ${summary.applied} |`,
    md`| ✓ already done | ${summary.alreadyDone} |`,
    md`| – skipped | ${summary.skipped} |`,
    md`| – not started | ${summary.notStarted} |`,
    ...(summary.stale > 0 ? [md`| ! stale | ${summary.stale} |`] : []),
    md`| ✗ failed | ${summary.failed} |`,
    BLANK,
  );
  // Whole or not at all, before the lists that can be cut: a chart cut part way would not be drawn.
  const { chart } = options;
  if (chart !== undefined && bytes(joinMarkdown(out, md`\n`).text) + bytes(chart.text) + SUMMARY_TAIL_BYTES <= maxBytes) out.push(chart);
  const { changed } = summary;
  if (changed.organisations > 0) {
    const items = changed.first.map(({ organisation, applied }) => md`- ${markedName(organisation)}: ${plural(applied, 'change')} applied`);
    out.push(md`**Organisations changed (${changed.organisations}):**`, BLANK, ...capped(items, cap, changed.organisations), BLANK);
  }
  const stale = summary.notApplied.filter((r) => r.outcome === 'stale');
  if (stale.length > 0) {
    const items = stale.map((r) => md`- ${markedName(r.address)}: ${r.reason ?? 'changed since the plan'}`);
    out.push(md`**Stale, not written (${stale.length}):** changed on the service since the plan.`, BLANK, ...capped(items, cap), BLANK);
  }
  const failures = summary.notApplied.filter((r) => r.outcome === 'failed');
  if (failures.length === 0) return fitBytes(out, maxBytes);
  out.push(md`#### Failures (${failures.length})`, BLANK);
  // Every failure in full while they fit; the head of the summary is already counted.
  const note = (left: number) => md`_…and ${plural(left, 'more failure')} left out to stay under GitHub's summary limit; see the job log._`;
  let used = bytes(joinMarkdown(out, md`\n`).text) + bytes(note(failures.length).text) + 2;
  let shown = 0;
  for (const failure of failures) {
    const block = failureBlock(failure);
    const size = bytes(joinMarkdown(block, md`\n`).text) + 1;
    if (used + size > maxBytes) break;
    out.push(...block);
    used += size;
    shown += 1;
  }
  if (shown < failures.length) out.push(BLANK, note(failures.length - shown));
  return fitBytes([...out, BLANK], maxBytes);
}

function applyHeadline(s: ApplySummary): string {
  const took = ` (${plural(s.total, 'change')} in ${formatDuration(s.elapsedMs)})`;
  if (s.total === 0) return NO_CHANGES;
  if (s.interrupted) return `Apply interrupted: ${s.applied} applied, ${s.alreadyDone} already done, ${s.failed} failed, ${s.notStarted} not started; run orgform apply again to finish.`;
  if (s.failed > 0) return `Apply finished with ${plural(s.failed, 'failure')}: ${s.applied} applied, ${s.alreadyDone} already done${took}; run orgform apply again to retry what is left.`;
  if (s.stale > 0) return `Apply finished with ${plural(s.stale, 'stale change')} (changed on the service since the plan, not written): ${s.applied} applied, ${s.alreadyDone} already done${took}; run orgform plan again to review them.`;
  return `Apply complete: ${s.applied} applied, ${s.alreadyDone} already done${took}.`;
}

/** The run over time as the job summary draws it (loaded only then), when there is one. */
async function runChart(timeline: RunTimeline | undefined): Promise<Markdown | undefined> {
  if (timeline === undefined || timeline.buckets.length === 0) return undefined;
  return (await import('../../../text/plan/render-run-chart-mermaid.js')).renderRunChartMermaid(timeline);
}

/** Room kept after the chart for the lists and the note that says what was left out. */
const SUMMARY_TAIL_BYTES = 1024;

/** A failure as the log's summary shows it: organisation, address, operation, the Error body. */
function failureBlock(r: ChangeResult): Markdown[] {
  const lines = [md`- **${markedName(r.organisation)}**: ${r.address}`];
  const f = r.failure;
  if (f === undefined) return [...lines, md`  - ${NO_FAILURE_DETAILS}`];
  lines.push(md`  - operation: ${f.operation}${f.status === undefined ? '' : ` (HTTP ${f.status})`}`);
  lines.push(f.serviceCode !== undefined ? md`  - error: ${f.serviceCode}: ${f.serviceMessage ?? ''}` : md`  - error: ${f.message}`);
  if (f.serviceCause !== undefined) lines.push(md`  - cause: ${f.serviceCause}`);
  if (f.note !== undefined && f.serviceCode !== undefined) lines.push(md`  - note: ${f.note}`);
  return lines;
}
