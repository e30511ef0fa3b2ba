/**
 * The changes of a plan for the terminal, the same change said once (group-same-changes.ts: its
 * summary, which gathers only the groups shown): a heading per kind and field with its counts, then
 * a line per group (what it does, how many organisations, the first of them by name) and a line per
 * single change. The lines stand where
 * the text plan lists its changes; its head, problems and closing line stay the text plan's.
 * Every piece of outside text is terminal-safe (describe-change-group.ts spells it so). Pure.
 */
import type { Change } from '../../plan/types.js';
import { paint, terminalSafe } from '../ansi.js';
import { ACTION_MARKER, formatName, plural } from '../format-value.js';
import { describeGroupChange, describeOrganisations, NAMES_PER_GROUP, sectionCounts, sectionNotes, sectionTitle } from './describe-change-group.js';
import { summariseSameChanges, type ChangeGroup } from './group-same-changes.js';

export interface GroupedLinesOptions {
  color: boolean;
  /** Organisations named per group before "and N more" (default NAMES_PER_GROUP). */
  names?: number;
  /** Groups listed per section before "… and N more groups" (default all). */
  maxGroups?: number;
  /** Single changes listed per section before "… and N more single changes" (default all). */
  maxSingles?: number;
}

/** The lines, unindented by the caller's standard (two spaces, as the text plan indents its changes), without line ends. */
export function renderGroupedChangeLines(changes: readonly Change[], options: GroupedLinesOptions): string[] {
  const { color } = options;
  const names = options.names ?? NAMES_PER_GROUP;
  const lines: string[] = [];
  const maxGroups = options.maxGroups ?? Infinity;
  const maxSingles = options.maxSingles ?? Infinity;
  for (const section of summariseSameChanges(changes, { maxGroups, maxSingles })) {
    const { symbol, style } = ACTION_MARKER[section.action];
    lines.push(`  ${paint(symbol, style, color)} ${paint(sectionTitle(section), 'bold', color)} — ${sectionCounts(section)}`);
    const notes = sectionNotes(section);
    for (const note of notes) lines.push(`      ${paint(`note: ${terminalSafe(note)}`, 'dim', color)}`);
    for (const group of section.groups) lines.push(`      ${groupLine(group, names)}`);
    const moreGroups = section.groupCount - section.groups.length;
    if (moreGroups > 0) lines.push(`      … and ${plural(moreGroups, 'more group')} (${plural(section.moreGroupItems, 'organisation')})`);
    for (const single of section.singles) lines.push(`      ${formatName(single.organisations[0] ?? '')}: ${describeGroupChange(single)}`);
    const moreSingles = section.singleCount - section.singles.length;
    if (moreSingles > 0) lines.push(`      … and ${plural(moreSingles, 'more single change')}`);
  }
  return lines;
}

/** `"plat_legacy" → "plat_bulk_1": 100 organisations (acme, globex, hooli and 97 more)`. */
function groupLine(group: ChangeGroup, names: number): string {
  const count = plural(group.members.length, 'organisation');
  return names > 0 ? `${describeGroupChange(group)}: ${count} (${describeOrganisations(group, names)})` : `${describeGroupChange(group)}: ${count}`;
}
