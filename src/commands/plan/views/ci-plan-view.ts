/**
 * The plan view as a CI job sees it: what the view writes, plus GitHub annotations for problems,
 * the job summary, and the --report files. A decorator: it adds to the view's output, never changes
 * it (the folding and guarding of the log is the view's own, through its LogFrame). The job
 * summary's words are here; ci/pipeline-output.ts writes them where the CI service reads them.
 */
import type { PlanView } from '../view.js';
import type { OutputStream } from '../../../cli-io.js';
import type { PipelineOutput, ReportSpec } from '../../../ci/pipeline-output.js';
import type { Plan } from '../../../plan/types.js';
import { configFindings, planFindings } from '../../../text/findings.js';
import { renderGroupedMarkdown } from '../../../text/plan/render-grouped-markdown.js';
import { digestLine } from '../../../text/plan/describe-digest.js';
import { digestPlan } from '../../../plan/plan-digest.js';
import { DEFAULT_SUMMARY_BYTES, renderConfigStepSummary, type StepSummaryOptions } from '../../../text/step-summary.js';

export interface PlanPipelineOptions {
  log: OutputStream;
  reports: readonly ReportSpec[];
  /** The -f paths as given: where a report places a finding without a position, when there is no plan. */
  files: readonly string[];
  /** --page-url: the job summary links the plan page there too. */
  pageUrl?: string;
}

export function withPlanPipeline(view: PlanView, pipeline: PipelineOutput, options: PlanPipelineOptions): PlanView {
  const { log, reports } = options;
  return {
    ...view,
    async configRejected(problems) {
      await view.configRejected?.(problems);
      if (problems.length === 0) return;
      const findings = configFindings(problems);
      await pipeline.annotate(findings, log);
      await pipeline.appendStepSummary(() => renderConfigStepSummary('plan', problems), log);
      // No counts without a plan: only the Code Quality report is written.
      await pipeline.writeReports(reports, { findings, defaultFile: options.files[0] ?? 'orgs.yaml' });
    },
    async planChecked(plan, hazards, desired) {
      const findings = planFindings(plan, desired);
      await pipeline.annotate(findings, log);
      await pipeline.appendStepSummary(() => renderPlanStepSummary(plan, options.pageUrl === undefined ? {} : { pageUrl: options.pageUrl }), log);
      await pipeline.writeReports(reports, { findings, plan, defaultFile: desired.files[0]?.path ?? 'orgs.yaml' });
      await view.planChecked(plan, hazards, desired);
    },
  };
}

/**
 * The plan's job summary: the plan's verdict, then the same change said once, as the comment says
 * it (render-grouped-markdown.ts), then the digest whole (what `apply --expect-digest`, the
 * Action's expect-digest input, takes), within the summary's budget: a UTF-8 byte is at most a
 * third of a UTF-16 unit's worth, so a third of the budget in characters always fits.
 */
export function renderPlanStepSummary(plan: Plan, options: StepSummaryOptions & { pageUrl?: string } = {}): string {
  const digest = plan.changes.length === 0 ? '' : `\n${digestLine(digestPlan(plan))}\n`;
  const maxLength = Math.floor((options.maxBytes ?? DEFAULT_SUMMARY_BYTES) / 3) - digest.length;
  const grouped = renderGroupedMarkdown(plan, { jobSummary: true, maxLength, ...(options.pageUrl === undefined ? {} : { pageUrl: options.pageUrl }) });
  return `${grouped}${digest}`;
}
