/**
 * The plan and apply views as a CI job sees them: what the view writes, plus GitHub annotations for
 * problems, the job summary, and plan's --report files. Decorators: they add to a view's output,
 * never change it (the folding and guarding of the log is the view's own, through its LogFrame).
 */
import type { ApplyView } from '../../apply/view.js';
import { applyFindings, configFindings, planFindings } from '../../../ci/findings.js';
import type { PlanView } from '../view.js';
import { renderApplyStepSummary, renderConfigStepSummary, renderPlanStepSummary } from '../../../ci/render-step-summary.js';
import type { CliIO, OutputStream } from '../../../io.js';
import { writeReports, type PipelineOutput, type ReportSpec } from '../../../ci/pipeline-output.js';

/** `log`: the stream annotations go to (standard output for text, else standard error, which carries no document). */
export function withApplyPipeline(view: ApplyView, pipeline: PipelineOutput, log: OutputStream): ApplyView {
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
      await pipeline.appendStepSummary(() => renderApplyStepSummary(summary), log);
    },
  };
}

export interface PlanPipelineOptions {
  log: OutputStream;
  reports: readonly ReportSpec[];
  /** The -f paths as given: where a report places a finding without a position, when there is no plan. */
  files: readonly string[];
}

export function withPlanPipeline(view: PlanView, pipeline: PipelineOutput, io: CliIO, options: PlanPipelineOptions): PlanView {
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
      await writeReports(reports, { findings, defaultFile: options.files[0] ?? 'orgs.yaml' }, io);
    },
    async planChecked(plan, hazards, desired) {
      const findings = planFindings(plan, desired);
      await pipeline.annotate(findings, log);
      await pipeline.appendStepSummary(() => renderPlanStepSummary(plan), log);
      await writeReports(reports, { findings, plan, defaultFile: desired.files[0]?.path ?? 'orgs.yaml' }, io);
      await view.planChecked(plan, hazards, desired);
    },
  };
}
