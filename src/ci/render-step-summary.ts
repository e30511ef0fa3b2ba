/**
 * The job summary: Markdown that GitHub shows on the run's page when a step appends it to
 * $GITHUB_STEP_SUMMARY. For plan, the counts by action, the organisations changed and the problems;
 * for apply, the counts by outcome, the organisations changed and every failure in full. Pure.
 *
 * Lists of organisations are capped ("…and N more"): a bulk plan of 10,000 organisations must not
 * bury the counts. GitHub refuses a step's summary over 1 MiB, and a step may run plan and apply,
 * so one summary stays within a quarter of that; failures past it are counted, not shown.
 */
import type { ApplySummary, ChangeResult } from '../executor/events.js';
import type { ConfigProblem } from '../model/config-problem.js';
import { summarisePlan, type Plan } from '../plan/types.js';
import { groupChanges, invisibleMark, plural } from '../text/format-value.js';
import { joinMarkdown, md, type Markdown } from '../text/markdown-escape.js';
import { formatDuration } from '../text/format-duration.js';

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

/** The summary is built as lines of Markdown (markdown-escape.ts): outside text cannot get in unescaped. */
const BLANK = md``;

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
    const grouped = groupChanges(plan.changes);
    const items = grouped.organisations.map((g) => md`- ${name(g.slug)}: ${plural(g.changes.length, 'change')}`);
    // The count heads exactly the bullets under it: the active organisation is the user's, not an organisation's change.
    if (items.length > 0) out.push(md`**Organisations changed (${grouped.organisations.length}):**`, BLANK, ...capped(items, cap), BLANK);
    for (const change of grouped.setActive) out.push(md`**Active organisation:** → ${name(change.organisation.slug)}`, BLANK);
  }
  if (plan.problems.length > 0) {
    const items = plan.problems.map((p) => md`- ${name(p.organisation ?? p.address)}: ${p.message}`);
    out.push(md`**Problems (${plan.problems.length}):** these could not be read; their changes are missing from this plan.`, BLANK, ...capped(items, cap), BLANK);
  }
  return fitBytes(out, options.maxBytes ?? DEFAULT_SUMMARY_BYTES);
}

/**
 * The summary of a run stopped by its configuration (plan, apply or validate): without it a broken
 * orgs.yaml left the run's page blank, and the problems only in the log and the annotations (which
 * GitHub caps at ten errors a step).
 */
export function renderConfigStepSummary(command: string, problems: readonly ConfigProblem[], options: StepSummaryOptions = {}): string {
  const cap = options.maxOrganisations ?? DEFAULT_SUMMARY_ORGANISATIONS;
  const files = new Set(problems.map((p) => p.file)).size;
  const items = problems.map((p) => md`- \`${p.file}:${p.line}:${p.col}\`: ${p.message}`);
  const out = [
    md`### orgform ${command}`,
    BLANK,
    md`**The configuration has ${plural(problems.length, 'problem')} in ${plural(files, 'file')}; nothing was read from or sent to the service.** Fix ${problems.length === 1 ? 'it' : 'them'} and run again; \`orgform validate\` checks the files alone.`,
    BLANK,
    ...capped(items, cap),
    BLANK,
  ];
  return fitBytes(out, options.maxBytes ?? DEFAULT_SUMMARY_BYTES);
}

export function renderApplyStepSummary(summary: ApplySummary, options: StepSummaryOptions = {}): string {
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
  const { changed } = summary;
  if (changed.organisations > 0) {
    const items = changed.first.map(({ organisation, applied }) => md`- ${name(organisation)}: ${plural(applied, 'change')} applied`);
    out.push(md`**Organisations changed (${changed.organisations}):**`, BLANK, ...capped(items, cap, changed.organisations), BLANK);
  }

  const stale = summary.notApplied.filter((r) => r.outcome === 'stale');
  if (stale.length > 0) {
    const items = stale.map((r) => md`- ${name(r.address)}: ${r.reason ?? 'changed since the plan'}`);
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

/** A slug or an address as a name: marked when it holds invisible characters (escaping shows them). */
function name(text: string): string {
  return text + invisibleMark(text);
}

function applyHeadline(s: ApplySummary): string {
  const took = ` (${plural(s.total, 'change')} in ${formatDuration(s.elapsedMs)})`;
  if (s.total === 0) return 'No changes. Your organisations match the configuration.';
  if (s.interrupted) return `Apply interrupted: ${s.applied} applied, ${s.alreadyDone} already done, ${s.failed} failed, ${s.notStarted} not started; run orgform apply again to finish.`;
  if (s.failed > 0) return `Apply finished with ${plural(s.failed, 'failure')}: ${s.applied} applied, ${s.alreadyDone} already done${took}; run orgform apply again to retry what is left.`;
  if (s.stale > 0) return `Apply finished with ${plural(s.stale, 'stale change')} (changed on the service since the plan, not written): ${s.applied} applied, ${s.alreadyDone} already done${took}; run orgform plan again to review them.`;
  return `Apply complete: ${s.applied} applied, ${s.alreadyDone} already done${took}.`;
}

/** A failure as the log's summary shows it: organisation, address, operation, the Error body. */
function failureBlock(r: ChangeResult): Markdown[] {
  const lines = [md`- **${name(r.organisation)}**: ${r.address}`];
  const f = r.failure;
  if (f === undefined) return [...lines, md`  - no details were recorded`];
  lines.push(md`  - operation: ${f.operation}${f.status === undefined ? '' : ` (HTTP ${f.status})`}`);
  lines.push(f.serviceCode !== undefined ? md`  - error: ${f.serviceCode}: ${f.serviceMessage ?? ''}` : md`  - error: ${f.message}`);
  if (f.serviceCause !== undefined) lines.push(md`  - cause: ${f.serviceCause}`);
  if (f.note !== undefined && f.serviceCode !== undefined) lines.push(md`  - note: ${f.note}`);
  return lines;
}

/** At most `cap` of the items, then how many more of `total` there are (the items may be only the first of them). */
function capped(items: readonly Markdown[], cap: number, total: number = items.length): Markdown[] {
  const shown = items.slice(0, cap);
  return shown.length >= total ? shown : [...shown, md`- …and ${total - shown.length} more`];
}

function bytes(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

/** The lines joined; cut at the last whole line under the budget should the caps not have been enough. */
function fitBytes(lines: readonly Markdown[], maxBytes: number): string {
  const text = joinMarkdown(lines, md`\n`).text + '\n';
  if (bytes(text) <= maxBytes) return text;
  let kept = '';
  let size = 0;
  for (const line of lines) {
    size += bytes(line.text) + 1;
    if (size > maxBytes - 64) break;
    kept += `${line.text}\n`;
  }
  return `${kept}\n_…cut to stay under GitHub's summary limit; see the job log._\n`;
}
