/**
 * The pull-request comment view of a plan: a summary line, problems, a table per organisation and
 * folded diffs. Always shorter than `maxLength` (GitHub refuses comments over 65,536 characters):
 * when the whole would not fit, details go first, then table rows and problems, each saying what was
 * left out.
 */
import { summarisePlan, type Change, type Plan } from '../../plan/types.js';
import { formatBefore, formatFromActive, formatName, formatValue, groupChanges, markedName, plural } from '../format-value.js';
import { codeBlock, joinMarkdown, md, type Markdown } from '../markdown-escape.js';
import { NO_CHANGES, NO_CHANGES_READ, planCounts, PROBLEMS_MISSING } from './plan-headline.js';

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
  const head = md`${summaryLine(plan)}\n`;
  // Made as they are needed: a plan of 100,000 organisations shows a few hundred of them.
  const problems: Items = { count: plan.problems.length, at: (i) => problemLine(plan.problems[i]!) };
  const problemsHead = problems.count === 0 ? EMPTY : md`\n### ⚠️ Problems\n\n${PROBLEMS_MISSING}\n\n`;
  const rows: Items = { count: groups.length, at: (i) => tableRow(groups[i]!) };
  const tableHead = rows.count === 0 ? EMPTY : md`\n| Organisation | Changes | Actions |\n| --- | ---: | --- |\n`;
  const details: Items = { count: groups.length, at: (i) => detailsBlock(groups[i]!) };

  const full = whole([head, problemsHead, problems, tableHead, rows, details], max);
  if (full !== undefined) return full.text;

  const orgGroups = grouped.organisations.length;
  const reason = max === DEFAULT_MARKDOWN_MAX_LENGTH ? md`GitHub's 65,536-character comment limit` : md`the ${max}-character limit`;
  const detailsNote = (left: number, activeLeft: boolean): Markdown => {
    const active = activeLeft ? ' and the active organisation change' : '';
    const what = left > 0 ? `${plural(left, 'organisation')}${active}` : 'the active organisation change';
    return md`\n_Details for ${what} left out to stay under ${reason}; run orgform plan locally or see the job log._\n`;
  };
  const problemsNote = (shown: number): Markdown => md`- _…and ${plural(problems.count - shown, 'more problem')} left out; see the job log._\n`;
  const rowsNote = (shown: number): Markdown => md`\n_${plural(rows.count - shown, 'more row')} left out of this table._\n`;

  let budget = max - head.length - (groups.length > 0 ? detailsNote(orgGroups, grouped.setActive.length > 0).length : 0);
  const reserveForTable = tableHead.length + (rows.count > 0 ? rowsNote(0).length : 0);
  const keptProblems = fit(problems, budget - reserveForTable - problemsHead.length, problemsNote);
  const problemsPart = joinMarkdown([problemsHead, keptProblems.markdown]);
  budget -= problemsPart.length;
  const keptRows = fit(rows, budget - tableHead.length, rowsNote);
  const tablePart =
    keptRows.shown > 0 || rows.count === 0 ? joinMarkdown([tableHead, keptRows.markdown]) : md`\n_The table (${plural(rows.count, 'row')}) was left out._\n`;
  budget -= tablePart.length;
  const keptDetails = fitEach(details, budget);
  const leftOrgs = orgGroups - keptDetails.kept.slice(0, orgGroups).filter(Boolean).length;
  const activeLeft = grouped.setActive.length > 0 && !keptDetails.kept[orgGroups];
  const omitted = leftOrgs > 0 || activeLeft ? detailsNote(leftOrgs, activeLeft) : EMPTY;

  const out = joinMarkdown([head, problemsPart, tablePart, keptDetails.markdown, omitted]).text;
  return out.length <= max ? out : cut(out, max);
}

const EMPTY = md``;

/** A list of Markdown pieces made one at a time, as they are asked for. */
interface Items {
  count: number;
  at(index: number): Markdown;
}

/** Everything, when it all fits in `max`; undefined as soon as it is clear it does not. */
function whole(parts: ReadonlyArray<Markdown | Items>, max: number): Markdown | undefined {
  const kept: Markdown[] = [];
  let length = 0;
  for (const part of parts) {
    const count = 'count' in part ? part.count : 1;
    for (let i = 0; i < count; i++) {
      const piece = 'count' in part ? part.at(i) : part;
      length += piece.length;
      if (length > max) return undefined;
      kept.push(piece);
    }
  }
  return joinMarkdown(kept);
}

function problemLine(p: Plan['problems'][number]): Markdown {
  return md`- **${markedName(p.organisation ?? p.address)}**: ${p.message}\n`;
}

function tableRow(g: Group): Markdown {
  return md`| ${markedName(g.label)} | ${g.changes.length} | ${actionsCell(g)} |\n`;
}

function summaryLine(plan: Plan): Markdown {
  const s = summarisePlan(plan);
  const parts = [plan.changes.length > 0 ? planCounts(s) : s.problems > 0 ? NO_CHANGES_READ : NO_CHANGES];
  if (s.unchanged > 0) parts.push(`${s.unchanged} unchanged`);
  if (plan.journaled.length > 0) parts.push(`${plan.journaled.length} already done (journal)`);
  if (s.problems > 0) parts.push(`⚠️ ${plural(s.problems, 'problem')}`);
  return md`**orgform plan:** ${parts.join(' · ')}`;
}

const TABLE_ACTION: Readonly<Record<Change['kind'], (n: number) => Markdown>> = {
  billing: () => md`~ billing`,
  'accept-invitation': (n) => md`+ accept ${plural(n, 'invitation')}`,
  'revoke-invitation': (n) => md`- revoke ${plural(n, 'invitation')}`,
  'remove-channel': (n) => md`- remove ${plural(n, 'notification channel')}`,
  'set-active': () => md`~ set active`,
};

function actionsCell(group: Group): Markdown {
  const counts = new Map<Change['kind'], number>();
  for (const c of group.changes) counts.set(c.kind, (counts.get(c.kind) ?? 0) + 1);
  const active = group.changes.find((c) => c.kind === 'set-active');
  if (active) return md`~ set active: ${formatFromActive(active.display.fromActive)} → ${formatName(active.organisation.slug)}`;
  return joinMarkdown(
    [...counts].map(([kind, n]) => TABLE_ACTION[kind](n)),
    md`, `,
  );
}

/** The diff's lines, as the text plan spells them; codeBlock makes each terminal-safe. */
function diffLines(change: Change): string[] {
  const note = change.display.note === undefined ? [] : [`      # ${change.display.note}`];
  switch (change.kind) {
    case 'set-active':
      return [`~ activeOrganisation: ${formatFromActive(change.display.fromActive)} → ${formatName(change.organisation.slug)}`, ...note];
    case 'billing':
      return [
        `~ ${change.address}`,
        ...(change.display.fields ?? []).flatMap((f) => [`-     ${f.field}: ${formatBefore(change, f.before)}`, `+     ${f.field}: ${formatValue(f.after)}`]),
        ...note,
      ];
    default:
      return [`${change.action === 'accept' ? '+' : '-'} ${change.address}`, ...note];
  }
}

function detailsBlock(group: Group): Markdown {
  return md`\n<details><summary>${markedName(group.label)} — ${plural(group.changes.length, 'change')}</summary>\n\n${codeBlock('diff', group.changes.flatMap(diffLines))}\n\n</details>\n`;
}

/**
 * The longest prefix of `items` that fits in `budget` together with the note for what was left out
 * (reserved at its longest, `note(0)`, unless the last item is the one being added).
 */
function fit(items: Items, budget: number, note: (shown: number) => Markdown): { markdown: Markdown; shown: number } {
  const reserve = note(0).length;
  const kept: Markdown[] = [];
  let length = 0;
  for (let i = 0; i < items.count; i++) {
    const item = items.at(i);
    const rest = i + 1 < items.count ? reserve : 0;
    if (length + item.length + rest > budget) break;
    length += item.length;
    kept.push(item);
  }
  const shown = kept.length;
  return { markdown: shown < items.count ? joinMarkdown([...kept, note(shown)]) : joinMarkdown(kept), shown };
}

/**
 * The items that fit in `budget`, each on its own: one organisation whose diff is too long (a long
 * value from the service) leaves out its own details, not those of every organisation after it.
 * Gives up after a run of items that do not fit, so that a plan of 100,000 organisations does not
 * make every diff to find room for none.
 */
function fitEach(items: Items, budget: number): { markdown: Markdown; kept: boolean[] } {
  const kept: boolean[] = [];
  const parts: Markdown[] = [];
  let length = 0;
  let misses = 0;
  for (let i = 0; i < items.count && misses < 100; i++) {
    const item = items.at(i);
    const fits = length + item.length <= budget;
    kept.push(fits);
    if (fits) {
      length += item.length;
      parts.push(item);
      misses = 0;
    } else {
      misses += 1;
    }
  }
  return { markdown: joinMarkdown(parts), kept };
}

/** Last resort for absurdly small limits: cut, without leaving half a surrogate pair. */
function cut(text: string, max: number): string {
  const sliced = text.slice(0, Math.max(0, max));
  return /[\uD800-\uDBFF]$/.test(sliced) ? sliced.slice(0, -1) : sliced;
}
