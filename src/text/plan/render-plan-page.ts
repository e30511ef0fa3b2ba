/**
 * The whole plan as one self-contained HTML page (`plan --format html`): the summary and what stands
 * in the way of applying it, the problems, the same change said once (group-same-changes.ts), and
 * every change by organisation in a table filtered by organisation, kind, field, action and mark.
 * Values are spelled as the text plan spells them (quoted, control, invisible and bidirectional
 * characters escaped) and marked as it marks them; changes that cannot be checked before apply, and
 * those of a saved plan gone stale, carry their reason. Pure: Plan → string.
 */
import { escapeInvisibleCharacters, hasInvisibleCharacters, INVISIBLE_NOTE } from '../../model/invisible-characters.js';
import { organisationAddress } from '../../model/address.js';
import type { PlanSafety } from '../../plan/check-plan-safety.js';
import { summarisePlan, type Change, type Plan } from '../../plan/types.js';
import { terminalSafe } from '../ansi.js';
import { ACTION_MARKER, formatName } from '../format-value.js';
import { counted, describeGroupChange, KIND_LABEL, sectionCounts, sectionNotes, sectionTitle, thousands } from './describe-change-group.js';
import { groupSameChanges, type ChangeGroup, type ChangeItem, type ChangeSection, type GroupedChanges, type OldValue } from './group-same-changes.js';
import { html, type Html } from './html.js';
import { renderPageDocument, type PageCell, type PageMark, type PageTable } from './page-document.js';
import { renderTableSection } from './page-table.js';
import { planCounts, planHeadline, PROBLEMS_MISSING } from './plan-headline.js';

export interface PlanPageOptions {
  /** What the plan's checks found (a stale saved plan, problems, the change budget), as the plan view is given it. */
  safety?: PlanSafety;
}

/** Groups shown per section; the rest are found with the filters. */
const GROUPS_SHOWN = 200;
/** Single changes shown per section; the rest are a button away. */
const SINGLES_SHOWN = 5;
/** Organisations named per group on the page. */
const NAMES_SHOWN = 8;


/** The table's columns, in the order of each row's cells. */
const COLUMNS: Array<PageTable['columns'][number] & { width?: number }> = [
  { label: 'Organisation', type: 'name', width: 15 },
  { label: 'Action', type: 'action', width: 9 },
  { label: 'Kind', type: 'text', width: 11 },
  { label: 'Field', type: 'code', width: 11 },
  { label: 'From', type: 'code', width: 19 },
  { label: 'To', type: 'code', width: 19 },
  { label: 'Marks', type: 'text', width: 16 },
  { label: 'Id', type: 'text', hidden: true },
  { label: 'Group', type: 'text', hidden: true },
];
const GROUP_COLUMN = 8;

export function renderPlanPage(plan: Plan, options: PlanPageOptions = {}): string {
  const grouped = groupSameChanges(plan.changes);
  const marks = new Marks();
  const table = planTable(plan, grouped, marks, staleByAddress(plan, options.safety));
  const kinds = [...new Set(plan.changes.map((c) => KIND_LABEL[c.kind]))];
  const fields = [...new Set(grouped.sections.map((s) => s.field))];
  const body = html`<header>
<h1>orgform plan</h1>
<p class="muted">for <code>${terminalSafe(plan.baseUrl)}</code></p>
</header>
${summary(plan)}
${hazards(plan, options.safety)}
${problems(plan)}
${groupsSection(grouped)}
${renderTableSection({
  id: 'every-change',
  heading: 'Every change',
  intro: html`<p>${counted(plan.changes.length, 'change', thousands)} in ${counted(table.rows.length, 'row', thousands)}: one row per change, and a billing change one row per field it changes. Filter them, or show one group from above.</p>`,
  what: 'the changes',
  controls: [
    { id: 'organisation', label: 'Organisation', type: 'search', placeholder: 'slug or id' },
    { id: 'action', label: 'Action', type: 'select', options: (['accept', 'update', 'delete'] as const).filter((a) => plan.changes.some((c) => c.action === a)).map(actionText) },
    { id: 'kind', label: 'Kind', type: 'select', options: kinds },
    { id: 'field', label: 'Field', type: 'select', options: fields },
    { id: 'marks', label: 'Marked', type: 'search', placeholder: 'invisible, cannot be checked…' },
  ],
  headings: COLUMNS.flatMap((c) => (c.width === undefined ? [] : [[c.label, c.width] as const])),
})}`;
  return renderPageDocument({ title: `orgform plan: ${planWords(plan)}`, body, table });
}

function actionText(action: Change['action']): string {
  return `${ACTION_MARKER[action].symbol} ${action}`;
}

function planWords(plan: Plan): string {
  const s = summarisePlan(plan);
  return plan.changes.length > 0 ? planCounts(s) : 'no changes';
}

function summary(plan: Plan): Html {
  const s = summarisePlan(plan);
  const items: Array<[number, string]> = [
    [s.change, 'to change'],
    [s.remove, 'to remove'],
    [s.accept, 'to accept'],
    [s.unchanged, 'unchanged'],
    ...(plan.journaled.length > 0 ? [[plan.journaled.length, 'already done (journal)'] as [number, string]] : []),
    ...(s.problems > 0 ? [[s.problems, s.problems === 1 ? 'problem' : 'problems'] as [number, string]] : []),
  ];
  const verdict = plan.changes.length > 0 ? '' : planHeadline(plan);
  return html`<ul class="summary" aria-label="Summary">${items.map(([n, what]) => html`<li><span class="n">${thousands(n)}</span> ${what}</li>`)}</ul>
${verdict === '' ? html`` : html`<p><strong>${verdict}</strong></p>`}`;
}

/** What stands in the way of applying this plan, as the plan's checks found it. */
function hazards(plan: Plan, safety: PlanSafety | undefined): Html {
  return html`${(safety?.hazards ?? []).map((h) => {
    switch (h.kind) {
      case 'stale':
        return html`<div class="banner bad" role="alert"><strong>This saved plan is stale:</strong> what it was made from changed since, so apply refuses it. Run orgform plan again.<ul>${h.changed.map((r) => html`<li>${terminalSafe(r)}</li>`)}</ul></div>`;
      case 'incomplete':
        return html`<div class="banner warn"><strong>This plan is incomplete:</strong> ${counted(h.problems.length, 'organisation', thousands)} could not be read (see Problems), so apply refuses it.</div>`;
      case 'not-reviewed':
        return html`<div class="banner bad" role="alert"><strong>Not the reviewed plan:</strong> its digest is ${h.actual}, not ${h.expected}, so apply refuses it.</div>`;
      case 'over-budget':
        return html`<div class="banner warn"><strong>Over budget:</strong> ${counted(h.changes, 'change', thousands)}, more than --max-changes ${h.maxChanges}; apply refuses it.</div>`;
      default: {
        const unreachable: never = h;
        throw new Error(`unknown hazard ${JSON.stringify(unreachable)}`);
      }
    }
  })}${plan.journaled.length > 0 ? html`<p class="muted">${counted(plan.journaled.length, 'one-shot change', thousands)} already done according to the journal, not planned again.</p>` : html``}`;
}

function problems(plan: Plan): Html {
  if (plan.problems.length === 0) return html``;
  return html`<section aria-labelledby="problems-heading">
<h2 id="problems-heading">Problems (${thousands(plan.problems.length)})</h2>
<p>${PROBLEMS_MISSING}</p>
<ul>${plan.problems.map((p) => html`<li><strong>${terminalSafe(p.organisation ?? p.address)}</strong>: ${terminalSafe(p.message)}</li>`)}</ul>
</section>`;
}

function groupsSection(grouped: GroupedChanges): Html {
  if (grouped.items === 0) return html``;
  let next = 0;
  const sections = grouped.sections.map((section, index) => {
    const first = next;
    next += section.groups.length;
    return sectionBlock(section, index, first);
  });
  return html`<section aria-labelledby="groups-heading">
<h2 id="groups-heading">The same change, said once</h2>
<p>Changes that set the same field to the same value are one group, whatever their organisations and old values; the others are single changes.</p>
${overview(grouped)}
${sections}
</section>`;
}

/** Each kind and field on one line, linked to its section: what the plan does at a glance. */
function overview(grouped: GroupedChanges): Html {
  const rows = grouped.sections.map(
    (s, i) =>
      html`<tr><td><span class="act act-${s.action}">${ACTION_MARKER[s.action].symbol}</span> <a href="#section-${i}">${sectionTitle(s)}</a></td><td class="num">${thousands(s.items)}</td><td class="num">${thousands(s.organisations)}</td><td class="num">${thousands(s.groups.length)}</td><td class="num">${thousands(s.singles.length)}</td></tr>\n`,
  );
  return html`<table class="overview"><caption>At a glance</caption><thead><tr><th scope="col">Kind and field</th><th scope="col" class="num">Changes</th><th scope="col" class="num">Organisations</th><th scope="col" class="num">Groups</th><th scope="col" class="num">Single changes</th></tr></thead><tbody>
${rows}</tbody></table>`;
}

function sectionBlock(section: ChangeSection, index: number, firstGroup: number): Html {
  const title = sectionTitle(section);
  const notes = sectionNotes(section);
  const groups = section.groups.slice(0, GROUPS_SHOWN);
  const singles = section.singles.slice(0, SINGLES_SHOWN);
  const rows = [
    ...groups.map((group, i) => {
      const change = describeGroupChange(group);
      const n = thousands(group.members.length);
      return html`<tr><td><code>${change}</code></td><td class="num">${n}</td><td>${names(group, NAMES_SHOWN)}</td><td><button type="button" data-group="g${firstGroup + i}" data-label="${title}: ${change}">Show these ${n}</button></td></tr>\n`;
    }),
    ...singles.map((single) => html`<tr><td><code>${describeGroupChange(single)}</code></td><td class="num">1</td><td>${names(single, 1)}</td><td></td></tr>\n`),
  ];
  const moreGroups = section.groups.length - groups.length;
  const moreSingles = section.singles.length - singles.length;
  return html`<h3 id="section-${index}"><span class="act act-${section.action}">${ACTION_MARKER[section.action].symbol}</span> ${title} <span class="muted">— ${sectionCounts(section, thousands)}</span></h3>
${notes.length > 0 ? html`<ul class="notes">${notes.map((n) => html`<li>${terminalSafe(n)}</li>`)}</ul>` : html``}
<table class="groups"><thead><tr><th scope="col">Change</th><th scope="col" class="num">Organisations</th><th scope="col">Which</th><th scope="col"><span class="visually-hidden">In the table</span></th></tr></thead><tbody>
${rows}</tbody></table>
${moreGroups > 0 ? html`<p>…and ${counted(moreGroups, 'more group', thousands)}: choose ${section.field} in the filters below.</p>` : html``}
${moreSingles > 0 ? html`<p>…and ${counted(moreSingles, 'more single change', thousands)}. <button type="button" data-group="s${index}" data-label="${title}: the single changes">Show all ${thousands(section.singles.length)} single changes</button></p>` : html``}`;
}

/** The first organisations by name, each kept whole on its line, then how many more. */
function names(group: ChangeGroup, shown: number): Html {
  const more = group.organisations.length - Math.min(shown, group.organisations.length);
  const list = group.organisations.slice(0, shown).map((slug, i) => html`${i > 0 ? ', ' : ''}<span class="name">${formatName(slug)}</span>`);
  return html`${list}${more > 0 ? ` and ${thousands(more)} more` : ''}`;
}

/** The marks of the page, each label once (a cell refers to them by index). */
class Marks {
  readonly list: PageMark[] = [];
  private readonly index = new Map<string, number>();

  of(label: string, tone: PageMark['tone']): number {
    const key = `${tone} ${label}`;
    let i = this.index.get(key);
    if (i === undefined) {
      i = this.list.push({ label, tone }) - 1;
      this.index.set(key, i);
    }
    return i;
  }
}

/** The stale hazard's reasons by the address they start with (an organisation's, or activeOrganisation). */
function staleByAddress(plan: Plan, safety: PlanSafety | undefined): Map<string, string[]> {
  const reasons = safety?.hazards.flatMap((h) => (h.kind === 'stale' ? h.changed : [])) ?? [];
  const out = new Map<string, string[]>();
  if (reasons.length === 0) return out;
  const addresses = new Set(plan.changes.map((c) => (c.kind === 'set-active' ? 'activeOrganisation' : organisationAddress(c.organisation.slug))));
  for (const reason of reasons) {
    const address = /^(.*?)(?:: |\.billing\.)/.exec(reason)?.[1];
    if (address !== undefined && addresses.has(address)) out.set(address, [...(out.get(address) ?? []), reason]);
  }
  return out;
}

function planTable(plan: Plan, grouped: GroupedChanges, marks: Marks, stale: Map<string, string[]>): PageTable {
  // Each change's items with their group's key, gathered from the groups (not made again: 100,000 of them).
  const itemsByChange = new Map<Change, Array<{ item: ChangeItem; key: string }>>();
  const add = (item: ChangeItem, key: string) => {
    const list = itemsByChange.get(item.change);
    if (list === undefined) itemsByChange.set(item.change, [{ item, key }]);
    else list.push({ item, key });
  };
  let g = 0;
  grouped.sections.forEach((section, s) => {
    for (const group of section.groups) {
      const key = `g${g++}`;
      for (const m of group.members) add(m, key);
    }
    for (const single of section.singles) for (const m of single.members) add(m, `s${s}`);
  });
  const rows: PageCell[][] = [];
  for (const change of plan.changes) {
    const address = change.kind === 'set-active' ? 'activeOrganisation' : organisationAddress(change.organisation.slug);
    const staleMarks = (stale.get(address) ?? []).map((r) => marks.of(`changed since the plan: ${terminalSafe(r)}`, 'bad'));
    // The note's first clause (`cannot be checked before apply`): the whole note is said above, under its kind.
    const noteMark = change.display.note === undefined ? [] : [marks.of(terminalSafe(change.display.note.split(': ')[0]!), 'info')];
    const items = itemsByChange.get(change) ?? [];
    // In the order the change shows its fields, as the text plan lists them.
    if (items.length > 1) {
      const order = (change.display.fields ?? []).map((f) => f.field as string);
      items.sort((a, b) => order.indexOf(a.item.field) - order.indexOf(b.item.field));
    }
    for (const { item, key } of items) {
      rows.push([
        nameCell(change.organisation.slug, marks),
        actionText(change.action),
        KIND_LABEL[change.kind],
        item.field,
        oldCell(item, marks),
        newCell(item, marks),
        noteMark.length + staleMarks.length === 0 ? '' : ['', ...noteMark, ...staleMarks],
        PLAIN.test(change.organisation.id) ? change.organisation.id : terminalSafe(change.organisation.id),
        key,
      ]);
    }
  }
  return {
    columns: COLUMNS.map(({ width: _width, ...column }) => column),
    rows,
    marks: marks.list,
    filters: [
      { id: 'organisation', type: 'search', columns: [0, 7] },
      { id: 'action', type: 'select', column: 1 },
      { id: 'kind', type: 'select', column: 2 },
      { id: 'field', type: 'select', column: 3 },
      // Every column that carries marks: a name or a value holding invisible characters, and the notes.
      { id: 'marks', type: 'marks', columns: [0, 4, 5, 6] },
    ],
    groupColumn: GROUP_COLUMN,
    noun: ['row', 'rows'],
    pageSize: 500,
  };
}

/** Printable ASCII, with no `"` or `\\`: as it is after any escaping (the common case, tested first: 100,000 rows). */
const PLAIN = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

function nameCell(name: string, marks: Marks): PageCell {
  if (PLAIN.test(name)) return name;
  return hasInvisibleCharacters(name) ? [terminalSafe(name), marks.of(INVISIBLE_NOTE, 'warn')] : terminalSafe(name);
}

/** A billing value quoted as the text plan quotes it; an id or slug as a name. */
function valueCell(value: string, quoted: boolean, marks: Marks): PageCell {
  if (PLAIN.test(value)) return quoted ? `"${value}"` : value;
  const text = quoted ? escapeInvisibleCharacters(JSON.stringify(value)) : terminalSafe(value);
  return hasInvisibleCharacters(value) ? [text, marks.of(INVISIBLE_NOTE, 'warn')] : text;
}

function oldCell(item: ChangeItem, marks: Marks): PageCell {
  const before: OldValue = item.before;
  const kind = item.change.kind;
  if (kind === 'accept-invitation') return '';
  if (!before.known) return kind === 'set-active' ? '(unknown)' : '(known after accept)';
  return before.value === null ? '(none)' : valueCell(before.value, kind === 'billing', marks);
}

function newCell(item: ChangeItem, marks: Marks): PageCell {
  if (item.after === null) return item.change.kind === 'billing' ? '(none)' : '';
  return valueCell(item.after, item.change.kind === 'billing', marks);
}
