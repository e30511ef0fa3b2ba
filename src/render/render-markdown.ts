/**
 * The pull-request comment view of a plan: a summary line, problems, a table per organisation and
 * folded diffs. Always shorter than `maxLength` (GitHub refuses comments over 65,536 characters):
 * when the whole would not fit, details go first, then table rows and problems, each saying what was
 * left out.
 */
import { summarisePlan, type Change, type Plan } from '../plan/types.js';
import { terminalSafe } from './ansi.js';
import { formatBefore, formatFromActive, formatValue, groupChanges, plural } from './format-value.js';
import { codeFence, escapeHtml, escapeMarkdownInline as md } from './markdown-escape.js';

export const DEFAULT_MARKDOWN_MAX_LENGTH = 65_000;

export interface MarkdownOptions {
  maxLength?: number;
}

interface Group {
  label: string;
  changes: Change[];
}

export function renderMarkdown(plan: Plan, options: MarkdownOptions = {}): string {
  const max = options.maxLength ?? DEFAULT_MARKDOWN_MAX_LENGTH;
  const grouped = groupChanges(plan.changes);
  const groups: Group[] = [
    ...grouped.organisations.map((g) => ({ label: g.slug, changes: g.changes })),
    ...(grouped.setActive.length > 0 ? [{ label: 'activeOrganisation', changes: grouped.setActive }] : []),
  ];
  const head = summaryLine(plan) + '\n';
  const problems = plan.problems.map((p) => `- **${md(p.organisation ?? p.address)}**: ${md(p.message)}\n`);
  const problemsHead = problems.length === 0 ? '' : '\n### ⚠️ Problems\n\nThese could not be read; their changes are missing from this plan.\n\n';
  const rows = groups.map((g) => `| ${md(g.label)} | ${g.changes.length} | ${actionsCell(g)} |\n`);
  const tableHead = rows.length === 0 ? '' : '\n| Organisation | Changes | Actions |\n| --- | ---: | --- |\n';
  const details = groups.map(detailsBlock);

  const full = head + problemsHead + problems.join('') + tableHead + rows.join('') + details.join('');
  if (full.length <= max) return full;

  const orgGroups = grouped.organisations.length;
  const reason = max === DEFAULT_MARKDOWN_MAX_LENGTH ? "GitHub's 65,536-character comment limit" : `the ${max}-character limit`;
  const detailsNote = (shown: number): string => {
    const left = Math.max(0, orgGroups - shown);
    const active = shown < groups.length && grouped.setActive.length > 0 ? ' and the active organisation change' : '';
    const what = left > 0 ? `${plural(left, 'organisation')}${active}` : 'the active organisation change';
    return `\n_Details for ${what} left out to stay under ${reason}; run orgform plan locally or see the job log._\n`;
  };
  const problemsNote = (shown: number): string => `- _…and ${plural(problems.length - shown, 'more problem')} left out; see the job log._\n`;
  const rowsNote = (shown: number): string => `\n_${plural(rows.length - shown, 'more row')} left out of this table._\n`;

  let budget = max - head.length - (groups.length > 0 ? detailsNote(0).length : 0);
  const reserveForTable = tableHead.length + (rows.length > 0 ? rowsNote(0).length : 0);
  const keptProblems = fit(problems, budget - reserveForTable - problemsHead.length, problemsNote);
  const problemsPart = problemsHead + keptProblems.text;
  budget -= problemsPart.length;
  const keptRows = fit(rows, budget - tableHead.length, rowsNote);
  const tablePart = keptRows.shown > 0 || rows.length === 0 ? tableHead + keptRows.text : `\n_The table (${plural(rows.length, 'row')}) was left out._\n`;
  budget -= tablePart.length;
  const keptDetails = fit(details, budget, () => '');
  const omitted = keptDetails.shown < groups.length ? detailsNote(keptDetails.shown) : '';

  const out = head + problemsPart + tablePart + keptDetails.text + omitted;
  return out.length <= max ? out : cut(out, max);
}

function summaryLine(plan: Plan): string {
  const s = summarisePlan(plan);
  const parts = [
    plan.changes.length > 0
      ? `${s.change} to change, ${s.remove} to remove, ${s.accept} to accept`
      : s.problems > 0
        ? 'No changes in the organisations that could be read'
        : 'No changes. Your organisations match the configuration.',
  ];
  if (s.unchanged > 0) parts.push(`${s.unchanged} unchanged`);
  if (plan.journaled.length > 0) parts.push(`${plan.journaled.length} already done (journal)`);
  if (s.problems > 0) parts.push(`⚠️ ${plural(s.problems, 'problem')}`);
  return `**orgform plan:** ${parts.join(' · ')}`;
}

const TABLE_ACTION: Readonly<Record<Change['kind'], (n: number) => string>> = {
  billing: () => '~ billing',
  'accept-invitation': (n) => `+ accept ${plural(n, 'invitation')}`,
  'revoke-invitation': (n) => `- revoke ${plural(n, 'invitation')}`,
  'remove-channel': (n) => `- remove ${plural(n, 'notification channel')}`,
  'set-active': () => '~ set active',
};

function actionsCell(group: Group): string {
  const counts = new Map<Change['kind'], number>();
  for (const c of group.changes) counts.set(c.kind, (counts.get(c.kind) ?? 0) + 1);
  const active = group.changes.find((c) => c.kind === 'set-active');
  if (active) return `~ set active: ${md(formatFromActive(active.display.fromActive))} → ${md(active.organisation.slug)}`;
  return [...counts].map(([kind, n]) => TABLE_ACTION[kind](n)).join(', ');
}

function diffLines(change: Change): string[] {
  const safe = terminalSafe;
  const note = change.display.note === undefined ? [] : [`      # ${safe(change.display.note)}`];
  switch (change.kind) {
    case 'set-active':
      return [`~ activeOrganisation: ${safe(formatFromActive(change.display.fromActive))} → ${safe(change.organisation.slug)}`, ...note];
    case 'billing':
      return [
        `~ ${safe(change.address)}`,
        ...(change.display.fields ?? []).flatMap((f) => [`-     ${f.field}: ${safe(formatBefore(change, f.before))}`, `+     ${f.field}: ${safe(formatValue(f.after))}`]),
        ...note,
      ];
    default:
      return [`${change.action === 'accept' ? '+' : '-'} ${safe(change.address)}`, ...note];
  }
}

function detailsBlock(group: Group): string {
  const body = group.changes.flatMap(diffLines).join('\n');
  const fence = codeFence(body);
  const summary = `${escapeHtml(group.label)} — ${plural(group.changes.length, 'change')}`;
  return `\n<details><summary>${summary}</summary>\n\n${fence}diff\n${body}\n${fence}\n\n</details>\n`;
}

/**
 * The longest prefix of `items` that fits in `budget` together with the note for what was left out
 * (reserved at its longest, `note(0)`, unless the last item is the one being added).
 */
function fit(items: readonly string[], budget: number, note: (shown: number) => string): { text: string; shown: number } {
  const reserve = note(0).length;
  let text = '';
  let shown = 0;
  for (const item of items) {
    const rest = shown + 1 < items.length ? reserve : 0;
    if (text.length + item.length + rest > budget) break;
    text += item;
    shown += 1;
  }
  return { text: shown < items.length ? text + note(shown) : text, shown };
}

/** Last resort for absurdly small limits: cut, without leaving half a surrogate pair. */
function cut(text: string, max: number): string {
  const sliced = text.slice(0, Math.max(0, max));
  return /[\uD800-\uDBFF]$/.test(sliced) ? sliced.slice(0, -1) : sliced;
}
