/**
 * The plan view as a CI job sees it: what the view writes, plus GitHub annotations for problems,
 * the job summary, and the --report files. A decorator: it adds to the view's output, never changes
 * it (the folding and guarding of the log is the view's own, through its LogFrame).
 */
import { configFindings, planFindings } from '../../../ci/findings.js';
import type { PlanView } from '../view.js';
import { renderConfigStepSummary, renderPlanStepSummary } from '../../../ci/render-step-summary.js';
import type { OutputStream } from '../../../cli-io.js';
import type { PipelineOutput, ReportSpec } from '../../../ci/pipeline-output.js';

export interface PlanPipelineOptions {
  log: OutputStream;
  reports: readonly ReportSpec[];
  /** The -f paths as given: where a report places a finding without a position, when there is no plan. */
  files: readonly string[];
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
      await pipeline.appendStepSummary(() => renderPlanStepSummary(plan), log);
      await pipeline.writeReports(reports, { findings, plan, defaultFile: desired.files[0]?.path ?? 'orgs.yaml' });
      await view.planChecked(plan, hazards, desired);
    },
  };
}
