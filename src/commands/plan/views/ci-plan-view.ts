/**
 * The plan view as a CI job sees it: what the view writes, plus GitHub annotations for problems,
 * the job summary, and the --report files. A decorator: it adds to the view's output, never changes
 * it (the folding and guarding of the log is the view's own, through its LogFrame). The job
 * summary's words are here; ci/pipeline-output.ts writes them where the CI service reads them.
 */
import type { PlanView } from '../view.js';
import type { OutputStream } from '../../../cli-io.js';
import type { PipelineOutput, ReportSpec } from '../../../ci/pipeline-output.js';
import { summarisePlan, type Plan } from '../../../plan/types.js';
import { configFindings, planFindings } from '../../../text/findings.js';
import { groupChanges, markedName, plural } from '../../../text/format-value.js';
import { md, type Markdown } from '../../../text/markdown-escape.js';
import { planHeadline, PROBLEMS_MISSING } from '../../../text/plan/plan-headline.js';
import { digestLine } from '../../../text/plan/describe-digest.js';
import { digestPlan } from '../../../plan/plan-digest.js';
import { BLANK, capped, DEFAULT_SUMMARY_BYTES, DEFAULT_SUMMARY_ORGANISATIONS, fitBytes, renderConfigStepSummary, type StepSummaryOptions } from '../../../text/step-summary.js';

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

/** The plan's job summary: the counts by action, the organisations changed and the problems, each list capped. */
export function renderPlanStepSummary(plan: Plan, options: StepSummaryOptions = {}): string {
  const cap = options.maxOrganisations ?? DEFAULT_SUMMARY_ORGANISATIONS;
  const s = summarisePlan(plan);
  const notes = [
    s.unchanged > 0 ? `${s.unchanged} unchanged` : '',
    plan.journaled.length > 0 ? `${plan.journaled.length} already done (journal)` : '',
    s.problems > 0 ? `⚠️ ${plural(s.problems, 'problem')}` : '',
  ].filter(Boolean);
  const out: Markdown[] = [md`### orgform plan`, BLANK, md`**${planHeadline(plan)}**${notes.length > 0 ? ` · ${notes.join(' · ')}` : ''}`, BLANK];

  if (plan.changes.length > 0) {
    out.push(md`| Action | Changes |`, md`| --- | ---: |`, md`| + accept | ${s.accept} |`, md`| ~ update | ${s.change} |`, md`| - delete | ${s.remove} |`, BLANK);
    // Whole: what `apply --expect-digest` (the Action's expect-digest input) takes.
    out.push(md`${digestLine(digestPlan(plan))}`, BLANK);
    const grouped = groupChanges(plan.changes);
    const items = grouped.organisations.map((g) => md`- ${markedName(g.slug)}: ${plural(g.changes.length, 'change')}`);
    // The count heads exactly the bullets under it: the active organisation is the user's, not an organisation's change.
    if (items.length > 0) out.push(md`**Organisations changed (${grouped.organisations.length}):**`, BLANK, ...capped(items, cap), BLANK);
    for (const change of grouped.setActive) out.push(md`**Active organisation:** → ${markedName(change.organisation.slug)}`, BLANK);
  }
  if (plan.problems.length > 0) {
    const items = plan.problems.map((p) => md`- ${markedName(p.organisation ?? p.address)}: ${p.message}`);
    out.push(md`**Problems (${plan.problems.length}):** ${PROBLEMS_MISSING}`, BLANK, ...capped(items, cap), BLANK);
  }
  return fitBytes(out, options.maxBytes ?? DEFAULT_SUMMARY_BYTES);
}
