/**
 * The apply view as a CI job sees it: what the view writes, plus GitHub annotations for problems
 * and the job summary. A decorator: it adds to the view's output, never changes it (the folding and
 * guarding of the log is the view's own, through its LogFrame).
 */
import type { ApplyView } from '../view.js';
import { applyFindings, configFindings, planFindings } from '../../../ci/findings.js';
import { renderApplyStepSummary, renderConfigStepSummary } from '../../../ci/render-step-summary.js';
import type { OutputStream } from '../../../cli-io.js';
import type { PipelineOutput } from '../../../ci/pipeline-output.js';

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
