/**
 * The pull-request comment of a plan that is always complete: every change accounted for, the same
 * change said once (group-same-changes.ts), within the forge's length limit. A heading per kind and
 * field says how many organisations it changes; under it a row per group (what it does, how many,
 * the first organisations by name) and a row per single change. When the whole does not fit, rows
 * are left out, single changes before groups, and each section says how many it left out and links
 * the plan page, which has every change by organisation: per-organisation detail may be left out,
 * never a change. (Only a limit too small for the headings themselves, a few hundred characters,
 * cuts the text short.)
 *
 * Every outside value goes through the `md` tag (markdown-escape.ts), and nothing here is written in
 * a code block: so `](` + PLAN_PAGE_PLACEHOLDER can only be this module's own links, which the
 * GitHub Action fills in once the page's address is known (an artifact's URL comes after the plan:
 * pipeline/sticky-comment.mjs's linkPlanPage); where it is known before, `pageUrl` says it.
 */
import { summarisePlan, type Plan } from '../../plan/types.js';
import { ACTION_MARKER, formatName, invisibleMark, plural } from '../format-value.js';
import { joinMarkdown, markdownLink, md, type Markdown } from '../markdown-escape.js';
import { describeGroupChange, describeOrganisations, NAMES_PER_GROUP, sectionCounts, sectionNotes, sectionTitle } from './describe-change-group.js';
import { groupSameChanges, type ChangeGroup, type ChangeSection } from './group-same-changes.js';
import { NO_CHANGES, NO_CHANGES_READ, planCounts, planHeadline, PROBLEMS_MISSING } from './plan-headline.js';

/** GitHub refuses a comment longer than this; GitLab a note longer than GITLAB_NOTE_LIMIT. */
export const GITHUB_COMMENT_LIMIT = 65_536;
export const GITLAB_NOTE_LIMIT = 1_000_000;
/** The default: GitHub's limit, less room for the sticky comment's marker and footer (pipeline/sticky-comment.mjs). */
export const DEFAULT_GROUPED_MARKDOWN_LENGTH = 65_000;
/** In GitLab CI: GitLab's limit, less the same room. */
export const GITLAB_GROUPED_MARKDOWN_LENGTH = GITLAB_NOTE_LIMIT - (GITHUB_COMMENT_LIMIT - DEFAULT_GROUPED_MARKDOWN_LENGTH);

/** Where the plan page's links point until the page's address is known (pipeline/sticky-comment.mjs's PLAN_PAGE_PLACEHOLDER). */
export const PLAN_PAGE_PLACEHOLDER = '#orgform-plan-page';
/**
 * The longest address the placeholder is replaced with (pipeline/sticky-comment.mjs refuses a longer
 * one): the room each placeholder link keeps, so that the comment stays within its limit once linked.
 * An artifact's address in a repository of the longest owner and name GitHub allows is about 230.
 */
export const PLAN_PAGE_URL_MAX_LENGTH = 300;

export interface GroupedMarkdownOptions {
  maxLength?: number;
  /** The plan page's address (http or https); without it, the links point at PLAN_PAGE_PLACEHOLDER. */
  pageUrl?: string;
  /** Organisations named per group (default NAMES_PER_GROUP). */
  names?: number;
  /**
   * The job summary's form: under a `### orgform plan` heading, the verdict in bold, each kind and
   * field one heading level down, rows left out "to fit the job summary"; and without `pageUrl`, the
   * page named by the command that writes it rather than linked.
   */
  jobSummary?: boolean;
}

/** How the comment and the job summary differ (GroupedMarkdownOptions.jobSummary). */
interface Form {
  head: (plan: Plan, sections: readonly ChangeSection[]) => Markdown;
  level: Markdown;
  fits: string;
  link: Markdown;
  /** What each link may grow by once the placeholder is replaced (PLAN_PAGE_URL_MAX_LENGTH). */
  linkGrowth: number;
}

function formOf(options: GroupedMarkdownOptions): Form {
  if (options.jobSummary !== true) {
    const linkGrowth = options.pageUrl === undefined ? PLAN_PAGE_URL_MAX_LENGTH - PLAN_PAGE_PLACEHOLDER.length : 0;
    return { head: (plan, sections) => md`**orgform plan:** ${headline(plan, sections)}\n`, level: md`###`, fits: 'the comment', link: pageLink(options.pageUrl), linkGrowth };
  }
  const link = options.pageUrl === undefined ? md`the plan page (\`orgform show PLANFILE --format html\`)` : pageLink(options.pageUrl);
  const head = (plan: Plan, sections: readonly ChangeSection[]): Markdown => {
    const rest = headline(plan, sections, { verdict: false });
    return md`### orgform plan\n\n**${planHeadline(plan)}**${rest.length > 0 ? md` · ${rest}` : EMPTY}\n`;
  };
  return { head, level: md`####`, fits: 'the job summary', link, linkGrowth: 0 };
}

/** A list of Markdown pieces made as they are asked for: a plan of 100,000 single changes shows a few hundred. */
interface Items {
  count: number;
  at(index: number): Markdown;
}

interface SectionParts {
  section: ChangeSection;
  head: Markdown;
  groups: Items;
  singles: Items;
  keptGroupRows: Markdown[];
  keptSingleRows: Markdown[];
  keptGroups: number;
  keptSingles: number;
  /** The organisations of the groups kept (a group's count). */
  keptInGroups: number;
}

const EMPTY = md``;
/** Rows that do not fit, one after another, after which no more are tried. */
const MAX_MISSES = 100;
const TABLE_HEAD = md`| Change | Organisations |\n| --- | --- |\n`;

export function renderGroupedMarkdown(plan: Plan, options: GroupedMarkdownOptions = {}): string {
  const max = options.maxLength ?? DEFAULT_GROUPED_MARKDOWN_LENGTH;
  const form = formOf(options);
  const { link } = form;
  const names = options.names ?? NAMES_PER_GROUP;
  const grouped = groupSameChanges(plan.changes);
  const head = form.head(plan, grouped.sections);
  const footer = plan.changes.length > 0 || plan.problems.length > 0 ? md`\n_Every change by organisation, with filters: ${link}._\n` : EMPTY;
  const problems: Items = { count: plan.problems.length, at: (i) => problemLine(plan.problems[i]!) };
  const problemsHead = problems.count === 0 ? EMPTY : md`\n${form.level} ⚠️ Problems (${problems.count})\n\n${PROBLEMS_MISSING}\n\n`;
  const problemsNote = (left: number) => md`- _…and ${plural(left, 'more problem')}: see ${link}._\n`;
  const sections = sectionParts(grouped.sections, names, form.level);
  const glance = overview(grouped.sections);

  const fixed = [head, glance, problemsHead, footer, ...sections.map((s) => s.head)].reduce((n, m) => n + m.length, 0);
  // Room for each section's table heads, its fold and its note at its longest (everything left out).
  const notes = sections.reduce((n, s) => n + leftOutNote(s.section, { groups: s.groups.count, inGroups: s.section.items, singles: s.singles.count }, form).length + 2 * TABLE_HEAD.length + fold(s.singles.count).length, 0);
  // Room for the links to grow: the footer's, each section's note's and the problems' note's.
  const links = (footer.length > 0 ? 1 : 0) + sections.length + (problems.count > 0 ? 1 : 0);
  const budget = max - fixed - notes - links * form.linkGrowth;
  // Problems first (their changes are missing: a reviewer must see that), up to half of what is left.
  const keptProblems = fitPrefix(problems, Math.max(0, Math.floor(budget / 2)) - problemsNote(problems.count).length);
  fillRows(sections, budget - keptProblems.reduce((n, m) => n + m.length, 0));

  const left = problems.count - keptProblems.length;
  const out = joinMarkdown([
    head,
    glance,
    problemsHead,
    ...keptProblems,
    left > 0 ? problemsNote(left) : EMPTY,
    ...sections.flatMap((s) => {
      const inGroups = s.section.groups.reduce((n, g) => n + g.members.length, 0);
      const left = { groups: s.groups.count - s.keptGroups, inGroups: inGroups - s.keptInGroups, singles: s.singles.count - s.keptSingles };
      return [s.head, ...table(s.keptGroupRows), ...foldedSingles(s.keptSingleRows, s.singles.count, s.keptGroupRows.length > 0), left.groups + left.singles > 0 ? leftOutNote(s.section, left, form) : EMPTY];
    }),
    footer,
  ]).text;
  return out.length <= max ? out : cut(out, max);
}

/**
 * Every group, then the single changes, while they fit in `budget`: a group says more per
 * character. Each pass takes the sections' rows in turn (the first row of each, then the second…),
 * so that when not all fit, every kind and field shows some of its own rather than the first taking
 * all the room. A row too long to fit (a long value from the service) leaves out itself, not every
 * row after it; a run of misses ends the search, so that 100,000 single changes are not all made to
 * find room for none.
 */
function fillRows(sections: SectionParts[], budget: number): void {
  let misses = 0;
  for (const pass of ['groups', 'singles'] as const) {
    const rows = Math.max(0, ...sections.map((s) => s[pass].count));
    for (let i = 0; i < rows && misses < MAX_MISSES; i++) {
      for (const section of sections) {
        if (i >= section[pass].count || misses >= MAX_MISSES) continue;
        const row = section[pass].at(i);
        if (row.length > budget) {
          misses += 1;
          continue;
        }
        misses = 0;
        budget -= row.length;
        keep(section, pass, i, row);
      }
    }
  }
}

function keep(section: SectionParts, pass: 'groups' | 'singles', index: number, row: Markdown): void {
  if (pass === 'singles') {
    section.keptSingleRows.push(row);
    section.keptSingles += 1;
  } else {
    section.keptGroupRows.push(row);
    section.keptGroups += 1;
    section.keptInGroups += section.section.groups[index]!.members.length;
  }
}

function pageLink(url: string | undefined): Markdown {
  return markdownLink('the plan page', url ?? PLAN_PAGE_PLACEHOLDER);
}

/** `2 to change, 2 to remove, 1 to accept · said in … · 2 unchanged · …`; without the verdict, what follows it. */
function headline(plan: Plan, sections: readonly ChangeSection[], options: { verdict: boolean } = { verdict: true }): Markdown {
  const s = summarisePlan(plan);
  const groups = sections.reduce((n, x) => n + x.groups.length, 0);
  const singles = sections.reduce((n, x) => n + x.singles.length, 0);
  const parts: string[] = [];
  if (options.verdict) parts.push(plan.changes.length > 0 ? planCounts(s) : s.problems > 0 ? NO_CHANGES_READ : NO_CHANGES);
  if (groups > 0) parts.push(`said in ${plural(groups, 'group')} of the same change${singles > 0 ? ` and ${plural(singles, 'single change')}` : ''}`);
  if (s.unchanged > 0) parts.push(`${s.unchanged} unchanged`);
  if (plan.journaled.length > 0) parts.push(`${plan.journaled.length} already done (journal)`);
  if (s.problems > 0) parts.push(`⚠️ ${plural(s.problems, 'problem')}`);
  return md`${parts.join(' · ')}`;
}

function problemLine(p: Plan['problems'][number]): Markdown {
  const name = p.organisation ?? p.address;
  return md`- **${name + invisibleMark(name)}**: ${p.message}\n`;
}

/** Each section's heading and notes, its rows made as asked. */
function sectionParts(sections: readonly ChangeSection[], names: number, level: Markdown): SectionParts[] {
  return sections.map((section) => {
    const marker = ACTION_MARKER[section.action].symbol;
    const notes = sectionNotes(section);
    const head = joinMarkdown([md`\n${level} ${marker} ${sectionTitle(section)} — ${sectionCounts(section)}\n\n`, ...notes.map((n) => md`> ${n}\n`), notes.length > 0 ? md`\n` : EMPTY]);
    return {
      section,
      head,
      groups: { count: section.groups.length, at: (i) => groupRow(section.groups[i]!, names) },
      singles: { count: section.singles.length, at: (i) => singleRow(section.singles[i]!) },
      keptGroupRows: [],
      keptSingleRows: [],
      keptGroups: 0,
      keptSingles: 0,
      keptInGroups: 0,
    };
  });
}

function table(rows: readonly Markdown[]): Markdown[] {
  return rows.length === 0 ? [] : [TABLE_HEAD, ...rows];
}

/** More single changes than this in a section are folded, so that the groups stay in view. */
const SINGLES_UNFOLDED = 5;

const foldOpen = (singles: number): Markdown => md`<details><summary>${plural(singles, 'single change')}</summary>\n\n`;
const FOLD_CLOSE = md`\n</details>\n`;
/** Between a section's groups and its single changes. */
const GAP = md`\n`;

/** What a section's single changes take besides their rows, at the most: a gap, and the fold when there are many. */
function fold(singles: number): Markdown {
  return joinMarkdown([GAP, ...(singles > SINGLES_UNFOLDED ? [foldOpen(singles), FOLD_CLOSE] : [])]);
}

function foldedSingles(rows: readonly Markdown[], singles: number, afterGroups: boolean): Markdown[] {
  if (rows.length === 0) return [];
  const gap = afterGroups ? [GAP] : [];
  if (singles <= SINGLES_UNFOLDED) return [...gap, ...table(rows)];
  return [...gap, foldOpen(singles), ...table(rows), FOLD_CLOSE];
}

/** Every kind and field in one table, before their sections: what the plan does at a glance, never left out. */
function overview(sections: readonly ChangeSection[]): Markdown {
  if (sections.length === 0) return EMPTY;
  const rows = sections.map((s) => md`| ${ACTION_MARKER[s.action].symbol} ${sectionTitle(s)} | ${s.items} | ${s.organisations} | ${s.groups.length} | ${s.singles.length} |\n`);
  return joinMarkdown([md`\n| Kind and field | Changes | Organisations | Groups | Single changes |\n| --- | ---: | ---: | ---: | ---: |\n`, ...rows]);
}

function groupRow(group: ChangeGroup, names: number): Markdown {
  return md`| ${describeGroupChange(group)} | **${group.members.length}**: ${describeOrganisations(group, names)} |\n`;
}

function singleRow(single: ChangeGroup): Markdown {
  return md`| ${describeGroupChange(single)} | ${formatName(single.organisations[0] ?? '')} |\n`;
}

/** `_5 groups (1200 organisations) and 30 single changes of this section are left out to fit the comment: every one is on [the plan page](…)._` */
function leftOutNote(section: ChangeSection, left: { groups: number; inGroups: number; singles: number }, form: Pick<Form, 'fits' | 'link'>): Markdown {
  const parts = [
    ...(left.groups > 0 ? [`${plural(left.groups, 'group')} (${plural(left.inGroups, 'organisation')})`] : []),
    ...(left.singles > 0 ? [plural(left.singles, 'single change')] : []),
  ];
  const are = left.groups + left.singles === 1 ? 'is' : 'are';
  return md`\n_${parts.join(' and ')} of ${sectionTitle(section)} ${are} left out to fit ${form.fits}: every one is on ${form.link}._\n`;
}

/** The longest prefix of `items` within `budget`. */
function fitPrefix(items: Items, budget: number): Markdown[] {
  const kept: Markdown[] = [];
  let length = 0;
  for (let i = 0; i < items.count; i++) {
    const item = items.at(i);
    if (length + item.length > budget) break;
    length += item.length;
    kept.push(item);
  }
  return kept;
}

/** Last resort for limits too small for the headings: cut, without leaving half a surrogate pair. */
function cut(text: string, max: number): string {
  const sliced = text.slice(0, Math.max(0, max));
  return /[\uD800-\uDBFF]$/.test(sliced) ? sliced.slice(0, -1) : sliced;
}
