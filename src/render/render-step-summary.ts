/**
 * The job summary: Markdown that GitHub shows on the run's page when a step appends it to
 * $GITHUB_STEP_SUMMARY. For plan, the counts by action, the organisations changed and the problems;
 * for apply, the counts by outcome, the organisations changed and every failure in full. Pure.
 *
 * Lists of organisations are capped ("…and N more"): a bulk plan of 10,000 organisations must not
 * bury the counts. GitHub refuses a step's summary over 1 MiB, and a step may run plan and apply,
 * so one summary stays within a quarter of that; failures past it are counted, not shown.
 */
import type { ApplySummary, ChangeResult } from '../apply/events.js';
import { summarisePlan, type Plan } from '../plan/types.js';
import { groupChanges, plural } from './format-value.js';
import { escapeMarkdownInline as md } from './markdown-escape.js';
import { formatDuration } from './render-apply.js';

export interface StepSummaryOptions {
  /** Organisations (and problems) named before "…and N more". */
  maxOrganisations?: number;
  /** The most UTF-8 bytes the summary may take. */
  maxBytes?: number;
}

export const DEFAULT_SUMMARY_ORGANISATIONS = 50;
export const DEFAULT_SUMMARY_BYTES = 256 * 1024;

/** The plan's verdict in one line: also the title of the plan's group in the log. */
export function planHeadline(plan: Plan): string {
  const s = summarisePlan(plan);
  if (plan.changes.length > 0) return `Plan: ${s.change} to change, ${s.remove} to remove, ${s.accept} to accept.`;
  if (s.problems > 0) return 'No changes in the organisations that could be read.';
  return 'No changes. Your organisations match the configuration.';
}

export function renderPlanStepSummary(plan: Plan, options: StepSummaryOptions = {}): string {
  const cap = options.maxOrganisations ?? DEFAULT_SUMMARY_ORGANISATIONS;
  const s = summarisePlan(plan);
  const notes = [
    s.unchanged > 0 ? `${s.unchanged} unchanged` : '',
    plan.journaled.length > 0 ? `${plan.journaled.length} already done (journal)` : '',
    s.problems > 0 ? `⚠️ ${plural(s.problems, 'problem')}` : '',
  ].filter(Boolean);
  const out = ['### orgform plan', '', `**${md(planHeadline(plan))}**${notes.length > 0 ? ` · ${notes.join(' · ')}` : ''}`, ''];

  if (plan.changes.length > 0) {
    out.push('| Action | Changes |', '| --- | ---: |', `| + accept | ${s.accept} |`, `| ~ update | ${s.change} |`, `| - delete | ${s.remove} |`, '');
    const grouped = groupChanges(plan.changes);
    const items = grouped.organisations.map((g) => `- ${md(g.slug)}: ${plural(g.changes.length, 'change')}`);
    for (const change of grouped.setActive) items.push(`- activeOrganisation → ${md(change.organisation.slug)}`);
    out.push(`**Organisations changed (${grouped.organisations.length}):**`, '', ...capped(items, cap), '');
  }
  if (plan.problems.length > 0) {
    const items = plan.problems.map((p) => `- ${md(p.organisation ?? p.address)}: ${md(p.message)}`);
    out.push(`**Problems (${plan.problems.length}):** these could not be read; their changes are missing from this plan.`, '', ...capped(items, cap), '');
  }
  return fitBytes(out, options.maxBytes ?? DEFAULT_SUMMARY_BYTES);
}

export function renderApplyStepSummary(summary: ApplySummary, options: StepSummaryOptions = {}): string {
  const cap = options.maxOrganisations ?? DEFAULT_SUMMARY_ORGANISATIONS;
  const maxBytes = options.maxBytes ?? DEFAULT_SUMMARY_BYTES;
  const out = ['### orgform apply', '', `**${md(applyHeadline(summary))}**`, ''];
  if (summary.total === 0) return out.join('\n') + '\n';

  out.push(
    '| Outcome | Changes |',
    '| --- | ---: |',
    `| ✓ applied | ${summary.applied} |`,
    `| ✓ already done | ${summary.alreadyDone} |`,
    `| – skipped | ${summary.skipped} |`,
    `| – not started | ${summary.notStarted} |`,
    `| ✗ failed | ${summary.failed} |`,
    '',
  );
  const { changed } = summary;
  if (changed.organisations > 0) {
    const items = changed.first.map(({ organisation, applied }) => `- ${md(organisation)}: ${plural(applied, 'change')} applied`);
    out.push(`**Organisations changed (${changed.organisations}):**`, '', ...capped(items, cap, changed.organisations), '');
  }

  const failures = summary.notApplied.filter((r) => r.outcome === 'failed');
  if (failures.length === 0) return fitBytes(out, maxBytes);
  out.push(`#### Failures (${failures.length})`, '');
  // Every failure in full while they fit; the head of the summary is already counted.
  const note = (left: number) => `_…and ${plural(left, 'more failure')} left out to stay under GitHub's summary limit; see the job log._`;
  let used = bytes(out.join('\n')) + bytes(note(failures.length)) + 2;
  let shown = 0;
  for (const failure of failures) {
    const block = failureBlock(failure).join('\n') + '\n';
    if (used + bytes(block) > maxBytes) break;
    out.push(...failureBlock(failure));
    used += bytes(block);
    shown += 1;
  }
  if (shown < failures.length) out.push('', note(failures.length - shown));
  return fitBytes([...out, ''], maxBytes);
}

function applyHeadline(s: ApplySummary): string {
  const took = ` (${plural(s.total, 'change')} in ${formatDuration(s.elapsedMs)})`;
  if (s.total === 0) return 'No changes. Your organisations match the configuration.';
  if (s.interrupted) return `Apply interrupted: ${s.applied} applied, ${s.alreadyDone} already done, ${s.failed} failed, ${s.notStarted} not started; run orgform apply again to finish.`;
  if (s.failed > 0) return `Apply finished with ${plural(s.failed, 'failure')}: ${s.applied} applied, ${s.alreadyDone} already done${took}; run orgform apply again to retry what is left.`;
  return `Apply complete: ${s.applied} applied, ${s.alreadyDone} already done${took}.`;
}

/** A failure as the log's summary shows it: organisation, address, operation, the Error body. */
function failureBlock(r: ChangeResult): string[] {
  const lines = [`- **${md(r.organisation)}**: ${md(r.address)}`];
  const f = r.failure;
  if (f === undefined) return [...lines, '  - no details were recorded'];
  lines.push(`  - operation: ${md(f.operation)}${f.status === undefined ? '' : ` (HTTP ${f.status})`}`);
  lines.push(f.serviceCode !== undefined ? `  - error: ${md(f.serviceCode)}: ${md(f.serviceMessage ?? '')}` : `  - error: ${md(f.message)}`);
  if (f.serviceCause !== undefined) lines.push(`  - cause: ${md(f.serviceCause)}`);
  if (f.note !== undefined && f.serviceCode !== undefined) lines.push(`  - note: ${md(f.note)}`);
  return lines;
}

/** At most `cap` of the items, then how many more of `total` there are (the items may be only the first of them). */
function capped(items: readonly string[], cap: number, total: number = items.length): string[] {
  const shown = items.slice(0, cap);
  return shown.length >= total ? shown : [...shown, `- …and ${total - shown.length} more`];
}

function bytes(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

/** The lines joined; cut at the last whole line under the budget should the caps not have been enough. */
function fitBytes(lines: readonly string[], maxBytes: number): string {
  const text = lines.join('\n') + '\n';
  if (bytes(text) <= maxBytes) return text;
  let kept = '';
  let size = 0;
  for (const line of lines) {
    size += bytes(line) + 1;
    if (size > maxBytes - 64) break;
    kept += `${line}\n`;
  }
  return `${kept}\n_…cut to stay under GitHub's summary limit; see the job log._\n`;
}
