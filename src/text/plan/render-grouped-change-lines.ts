/**
 * The changes of a plan for the terminal, the same change said once (group-same-changes.ts): a
 * heading per kind and field with its counts, then a line per group (what it does, how many
 * organisations, the first of them by name) and a line per single change. The lines stand where
 * the text plan lists its changes; its head, problems and closing line stay the text plan's.
 * Every piece of outside text is terminal-safe (describe-change-group.ts spells it so). Pure.
 */
import type { Change } from '../../plan/types.js';
import { paint, terminalSafe } from '../ansi.js';
import { ACTION_MARKER, formatName, plural } from '../format-value.js';
import { describeGroupChange, describeOrganisations, NAMES_PER_GROUP, sectionCounts, sectionNotes, sectionTitle } from './describe-change-group.js';
import { groupSameChanges, type ChangeGroup } from './group-same-changes.js';

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
  for (const section of groupSameChanges(changes).sections) {
    const { symbol, style } = ACTION_MARKER[section.action];
    lines.push(`  ${paint(symbol, style, color)} ${paint(sectionTitle(section), 'bold', color)} — ${sectionCounts(section)}`);
    const notes = sectionNotes(section);
    for (const note of notes) lines.push(`      ${paint(`note: ${terminalSafe(note)}`, 'dim', color)}`);
    const groups = section.groups.slice(0, options.maxGroups ?? section.groups.length);
    for (const group of groups) lines.push(`      ${groupLine(group, names)}`);
    const moreGroups = section.groups.slice(groups.length);
    if (moreGroups.length > 0) {
      const organisations = moreGroups.reduce((n, g) => n + g.members.length, 0);
      lines.push(`      … and ${plural(moreGroups.length, 'more group')} (${plural(organisations, 'organisation')})`);
    }
    const singles = section.singles.slice(0, options.maxSingles ?? section.singles.length);
    for (const single of singles) lines.push(`      ${formatName(single.organisations[0] ?? '')}: ${describeGroupChange(single)}`);
    const moreSingles = section.singles.length - singles.length;
    if (moreSingles > 0) lines.push(`      … and ${plural(moreSingles, 'more single change')}`);
  }
  return lines;
}

/** `"plat_legacy" → "plat_bulk_1": 100 organisations (acme, globex, hooli and 97 more)`. */
function groupLine(group: ChangeGroup, names: number): string {
  const count = plural(group.members.length, 'organisation');
  return names > 0 ? `${describeGroupChange(group)}: ${count} (${describeOrganisations(group, names)})` : `${describeGroupChange(group)}: ${count}`;
}
