/**
 * The words for a group of the same change (group-same-changes.ts), shared by the grouped text,
 * the grouped Markdown and the plan page so that they say it alike. Plain text: values are spelled
 * as the text plan spells them (quoted, invisible characters escaped and marked), and each view
 * escapes the result for where it goes (the terminal, Markdown, HTML).
 */
import { formatFromActive, formatName, formatValue, KNOWN_AFTER } from '../format-value.js';
import type { ChangeKind } from '../../model/change-kind.js';
import type { ChangeGroup, ChangeSection, NoteCount, OldValue, SectionSummary } from './group-same-changes.js';

/** How many organisations a group names before "and N more", unless told otherwise. */
export const NAMES_PER_GROUP = 3;

/** How many old values a group of the same new value names before "and N more". */
const OLD_VALUES_SHOWN = 3;

const KIND_TITLE: Readonly<Record<ChangeKind, string>> = {
  'accept-invitation': 'Invitations to accept',
  billing: 'Billing',
  'revoke-invitation': 'Invitations to revoke',
  'remove-channel': 'Notification channels to remove',
  'set-active': 'Active organisation',
};

/** A kind in a table's cell or a filter's choice: `revoke invitation`. */
export const KIND_LABEL: Readonly<Record<ChangeKind, string>> = {
  'accept-invitation': 'accept invitation',
  billing: 'billing',
  'revoke-invitation': 'revoke invitation',
  'remove-channel': 'remove channel',
  'set-active': 'set active',
};

/** `Billing: platformID`, `Invitations to revoke`: a section's heading (only billing has several fields). */
export function sectionTitle(section: Pick<ChangeSection, 'kind' | 'field'>): string {
  return section.kind === 'billing' && section.field !== 'billing' ? `${KIND_TITLE.billing}: ${section.field}` : KIND_TITLE[section.kind];
}

/** How a count is written: as the text plan writes it (`1000`), or with separators on a page (`1,000`). */
export type CountFormat = (n: number) => string;

/** With separators, as a page writes counts: `100,000`. */
export const thousands: CountFormat = (n) => n.toLocaleString('en');

/** `n thing` / `n things`, the count written by `format`. */
export function counted(n: number, singular: string, format: CountFormat = String): string {
  return `${format(n)} ${n === 1 ? singular : `${singular}s`}`;
}

/** A section whole (groupSameChanges) or cut to what a view shows (summariseSameChanges). */
type AnySection = ChangeSection | SectionSummary;

/** `300 organisations: 3 groups and 2 single changes`, `108 changes in 74 organisations: 108 single changes`. */
export function sectionCounts(section: AnySection, format: CountFormat = String): string {
  const groups = 'groupCount' in section ? section.groupCount : section.groups.length;
  const singles = 'singleCount' in section ? section.singleCount : section.singles.length;
  const parts = [...(groups > 0 ? [counted(groups, 'group', format)] : []), ...(singles > 0 ? [counted(singles, 'single change', format)] : [])];
  const where =
    section.organisations === section.items
      ? counted(section.items, 'organisation', format)
      : `${counted(section.items, 'change', format)} in ${counted(section.organisations, 'organisation', format)}`;
  return `${where}: ${parts.join(' and ')}`;
}

/**
 * The notes of a section's changes, each once (`cannot be checked before apply: …`): as it is when
 * every change has it, and otherwise said of the changes it is about.
 */
export function sectionNotes(section: AnySection): string[] {
  const notes = 'notes' in section ? section.notes : noteCounts(section);
  return notes.map(({ note, items, known }) => {
    if (items === section.items) return note;
    return known === 0 ? `${KNOWN_AFTER} means: ${note}` : `some of these changes: ${note}`;
  });
}

/** Each note of a whole section's members, in the order they first carry it, with how many do and how many of those had a known old value. */
function noteCounts(section: ChangeSection): NoteCount[] {
  const notes = new Map<string, NoteCount>();
  for (const group of [...section.groups, ...section.singles]) {
    for (const member of group.members) {
      const note = member.change.display.note;
      if (note === undefined) continue;
      let count = notes.get(note);
      if (count === undefined) notes.set(note, (count = { note, items: 0, known: 0 }));
      count.items += 1;
      if (member.before.known) count.known += 1;
    }
  }
  return [...notes.values()];
}

/** An old value as the text plan shows it: quoted and marked, `(none)`, or what stands for not known yet. */
function formatOld(group: Pick<ChangeGroup, 'kind'>, before: OldValue): string {
  if (group.kind === 'set-active') return formatFromActive(before.known ? before.value : undefined);
  if (!before.known) return KNOWN_AFTER;
  return group.kind === 'billing' ? formatValue(before.value) : formatName(before.value ?? '');
}

/**
 * What the group's members do, without saying where: `"plat_legacy" → "plat_bulk_1"`, `inv_2`,
 * `acme → globex`; for the same new value from several old ones `(none) ×2, "cus_1" ×1 → "cus_new"`,
 * and past a few of them `40 values ((none) ×2, "cus_1" ×1, "cus_2" ×1 and 37 more) → "cus_new"`.
 */
export function describeGroupChange(group: ChangeGroup): string {
  switch (group.kind) {
    case 'accept-invitation':
      return formatName(group.after ?? '');
    case 'revoke-invitation':
    case 'remove-channel':
      return formatOld(group, group.befores[0]!.before);
    case 'set-active':
    case 'billing': {
      const after = group.kind === 'billing' ? formatValue(group.after) : formatName(group.after ?? '');
      if (group.befores.length === 1) return `${formatOld(group, group.befores[0]!.before)} → ${after}`;
      const shown = group.befores.slice(0, OLD_VALUES_SHOWN).map((b) => `${formatOld(group, b.before)} ×${b.count}`).join(', ');
      const more = group.befores.length - OLD_VALUES_SHOWN;
      return more > 0 ? `${group.befores.length} values (${shown} and ${more} more) → ${after}` : `${shown} → ${after}`;
    }
    default: {
      const unreachable: never = group.kind;
      throw new Error(`unknown change kind ${String(unreachable)}`);
    }
  }
}

/** `acme, globex and 98 more`: the first organisations of a group by name (as the text plan shows a name), then how many more. */
export function describeOrganisations(group: Pick<ChangeGroup, 'organisations'>, names: number = NAMES_PER_GROUP, format: CountFormat = String): string {
  const shown = group.organisations.slice(0, Math.max(0, names)).map(formatName);
  const more = group.organisations.length - shown.length;
  if (shown.length === 0) return counted(more, 'organisation', format);
  return more > 0 ? `${shown.join(', ')} and ${format(more)} more` : shown.join(', ');
}
