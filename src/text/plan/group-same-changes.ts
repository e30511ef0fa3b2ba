/**
 * The plan's changes said once per thing they do: changes that make the same change (the same
 * kind, the same field, the same new value) are one group, whatever organisation they are in. Pure
 * and deterministic; the text, Markdown and page views of a bulk plan are built on it.
 *
 * What is grouped is a change's *items*: a billing change is one item per field it changes (one
 * organisation's billing can change its platformID with a hundred others and its e-mail alone); every
 * other change is one item. So, precisely:
 * - every item is a member of exactly one group: a change of any kind but billing is in exactly one
 *   group, and a billing change is in exactly as many groups as it has fields shown, never twice in one;
 * - per kind, the groups' counts add up to the kind's items, and the distinct changes over a kind's
 *   groups are exactly the plan's changes of that kind (so the plan's totals: a billing change counts
 *   once there, however many fields it has).
 *
 * Items are the same when their kind, field and new value are equal, compared exactly (code unit
 * for code unit, never normalised): a value holding an invisible character is never merged with its
 * visible look-alike. Their old values may differ (a value, none, or not known before an accept): a
 * group keeps each old value with its count. A removal's new value is nothing for every removal, so
 * removals are the same only when they remove the same thing (the same old value).
 */
import { BILLING_FIELDS } from '../../model/billing.js';
import { KIND_ORDER, type ChangeKind } from '../../model/change-kind.js';
import type { Action, Change } from '../../plan/types.js';

/** What an item changes: a billing field, or the thing a one-shot change is about. */
export type ItemField = (typeof BILLING_FIELDS)[number] | 'invitation' | 'notificationChannel' | 'activeOrganisation' | 'billing';

/** An old value: a value, none, or not known before apply (billing of an organisation being joined). */
export type OldValue = { known: true; value: string | null } | { known: false };

export interface ChangeItem {
  change: Change;
  field: ItemField;
  before: OldValue;
  /** The new value; null for a removal. */
  after: string | null;
}

export interface ChangeGroup {
  kind: ChangeKind;
  action: Action;
  field: ItemField;
  after: string | null;
  /** The members' notes (`cannot be checked before apply: …`), each once, in order of first appearance. */
  notes: string[];
  /** The distinct old values and how many members had each: most first, then in order of first appearance. */
  befores: Array<{ before: OldValue; count: number }>;
  /** In plan order. */
  members: ChangeItem[];
  /** The members' organisations (slugs), each once, in plan order. */
  organisations: string[];
}

/** The groups of one kind and field: those of several members first (most first), then the single changes in plan order. */
export interface ChangeSection {
  kind: ChangeKind;
  action: Action;
  field: ItemField;
  groups: ChangeGroup[];
  singles: ChangeGroup[];
  /** Items in the section: the sum of its groups' and singles' member counts. */
  items: number;
  /** The organisations of its items, each counted once (fewer than the items when one organisation revokes two invitations). */
  organisations: number;
}

export interface GroupedChanges {
  /**
   * The sections with groups first, then those of single changes only (a reviewer reads the big
   * patterns first); within each, by kind in apply order (model/change-kind.ts), then by field.
   */
  sections: ChangeSection[];
  /** Every item of the plan: the sum over the sections. */
  items: number;
}

const FIELD_ORDER: readonly ItemField[] = ['billing', ...BILLING_FIELDS, 'invitation', 'notificationChannel', 'activeOrganisation'];

/** The items of one change: a billing change's fields shown (one item, field `billing`, should it show none), or the change itself. */
export function itemsOf(change: Change): ChangeItem[] {
  switch (change.kind) {
    case 'billing': {
      const fields = change.display.fields ?? [];
      const known = change.knownAfter === undefined;
      if (fields.length === 0) return [{ change, field: 'billing', before: known ? { known, value: null } : { known }, after: null }];
      return fields.map((f) => ({ change, field: f.field, before: known ? { known, value: f.before } : { known }, after: f.after }));
    }
    case 'accept-invitation':
      return [{ change, field: 'invitation', before: { known: true, value: null }, after: change.targetId ?? null }];
    case 'revoke-invitation':
      return [{ change, field: 'invitation', before: { known: true, value: change.targetId ?? null }, after: null }];
    case 'remove-channel':
      return [{ change, field: 'notificationChannel', before: { known: true, value: change.targetId ?? null }, after: null }];
    case 'set-active': {
      const from = change.display.fromActive;
      return [{ change, field: 'activeOrganisation', before: from === undefined ? { known: false } : { known: true, value: from }, after: change.organisation.slug }];
    }
    default: {
      const unreachable: never = change.kind;
      throw new Error(`unknown change kind ${String(unreachable)}`);
    }
  }
}

/**
 * The exact identity of what an item does. Only its last part is outside text (the new value, or a
 * removal's old value), each behind a letter that says which: no two different items share a key.
 */
function sameKey(item: ChangeItem): string {
  const what = item.change.action === 'delete' ? `r${oldKey(item.before)}` : item.after === null ? 'n' : `a${item.after}`;
  return `${item.change.kind} ${item.field} ${what}`;
}

/** An old value as a key: `?` not known, `n` none, `v` and the value. */
function oldKey(before: OldValue): string {
  return before.known ? (before.value === null ? 'n' : `v${before.value}`) : '?';
}

export function groupSameChanges(changes: readonly Change[]): GroupedChanges {
  const byKey = new Map<string, GroupBuilder>();
  for (const change of changes) {
    for (const item of itemsOf(change)) {
      const key = sameKey(item);
      const builder = byKey.get(key);
      if (builder === undefined) byKey.set(key, new GroupBuilder(item));
      else builder.add(item);
    }
  }
  return sectionsOf([...byKey.values()].map((b) => b.group));
}

/** One group as it is gathered: its organisations and old values found again by key, not by search (groups of 100,000). */
class GroupBuilder {
  readonly group: ChangeGroup;
  // Made with the second member: most groups of a bulk plan are single changes, tens of thousands of them.
  private slugs: Set<string> | undefined;
  private olds: Map<string, { before: OldValue; count: number }> | undefined;

  constructor(first: ChangeItem) {
    const { change } = first;
    const note = change.display.note;
    this.group = {
      kind: change.kind,
      action: change.action,
      field: first.field,
      after: first.after,
      notes: note === undefined ? [] : [note],
      befores: [{ before: first.before, count: 1 }],
      members: [first],
      organisations: [change.organisation.slug],
    };
  }

  add(item: ChangeItem): void {
    const group = this.group;
    group.members.push(item);
    this.slugs ??= new Set(group.organisations);
    const slug = item.change.organisation.slug;
    if (!this.slugs.has(slug)) {
      this.slugs.add(slug);
      group.organisations.push(slug);
    }
    const note = item.change.display.note;
    if (note !== undefined && !group.notes.includes(note)) group.notes.push(note);
    this.olds ??= new Map(group.befores.map((b) => [oldKey(b.before), b]));
    const key = oldKey(item.before);
    const old = this.olds.get(key);
    if (old) old.count += 1;
    else {
      const entry = { before: item.before, count: 1 };
      this.olds.set(key, entry);
      group.befores.push(entry);
    }
  }
}

function sectionsOf(groups: ChangeGroup[]): GroupedChanges {
  const bySection = new Map<string, { section: ChangeSection; slugs: Set<string> }>();
  for (const group of groups) {
    group.befores.sort((a, b) => b.count - a.count);
    const key = `${group.kind} ${group.field}`;
    let entry = bySection.get(key);
    if (entry === undefined) {
      entry = { section: { kind: group.kind, action: group.action, field: group.field, groups: [], singles: [], items: 0, organisations: 0 }, slugs: new Set() };
      bySection.set(key, entry);
    }
    const { section, slugs } = entry;
    (group.members.length > 1 ? section.groups : section.singles).push(group);
    section.items += group.members.length;
    for (const slug of group.organisations) slugs.add(slug);
    section.organisations = slugs.size;
  }
  const sections = [...bySection.values()].map((e) => e.section);
  sortSections(sections, (x) => x.groups.length > 0);
  for (const section of sections) section.groups.sort(byCountThenValue);
  return { sections, items: sections.reduce((n, s) => n + s.items, 0) };
}

/** Most members first; among equals, by new value, then (removals) by old value (a new value of none before the empty one), in code unit order: the same whatever the input order. */
/** GroupedChanges' order: the sections with groups first, then those of single changes only; within each, by kind in apply order, then by field. */
function sortSections<T extends { kind: ChangeKind; field: ItemField }>(sections: T[], hasGroups: (section: T) => boolean): void {
  const singlesOnly = (x: T) => (hasGroups(x) ? 0 : 1);
  sections.sort((a, b) => singlesOnly(a) - singlesOnly(b) || KIND_ORDER[a.kind] - KIND_ORDER[b.kind] || FIELD_ORDER.indexOf(a.field) - FIELD_ORDER.indexOf(b.field));
}

function byCountThenValue(a: ChangeGroup, b: ChangeGroup): number {
  return b.members.length - a.members.length || compare(a.after ?? '', b.after ?? '') || compare(groupKey(a), groupKey(b));
}

/** sameKey's last part for a group: the same for all its members. */
function groupKey(group: ChangeGroup): string {
  return valueKey(group.action, sameValue(group.members[0]!));
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** A note of a section's changes (`cannot be checked before apply: …`): on how many of its items, and how many of those had an old value known. */
export interface NoteCount {
  note: string;
  items: number;
  known: number;
}

/**
 * A section as a view that shows only its first groups and single changes sees it: the same
 * counts as groupSameChanges' section, the groups and singles shown whole, the rest counted.
 */
export interface SectionSummary extends Omit<ChangeSection, 'groups' | 'singles'> {
  /** The first `maxGroups` groups, in the section's order. */
  groups: ChangeGroup[];
  /** The first `maxSingles` single changes, in plan order. */
  singles: ChangeGroup[];
  groupCount: number;
  singleCount: number;
  /** The members of the groups not shown. */
  moreGroupItems: number;
  /** The section's notes, in the order the section's members first carry them. */
  notes: NoteCount[];
}

/** A removal's key when it removes nothing known, and any item's when its value is none. */
const NONE = Symbol('none');
const UNKNOWN = Symbol('unknown');
type SameValue = string | typeof NONE | typeof UNKNOWN;

/**
 * groupSameChanges' sections, each cut to its first `maxGroups` groups and `maxSingles` single
 * changes, without holding a group per item: a bulk plan's grouped lines (the text plan and apply's)
 * then cost a count per distinct change, not an object per item (a plan of 100,000 changes, each
 * its own e-mail, made 100,000 groups, about 47 MB of peak RSS). Two passes over the changes: the
 * first counts the items of each distinct change, the second gathers only the groups shown.
 */
export function summariseSameChanges(changes: readonly Change[], caps: { maxGroups: number; maxSingles: number }): SectionSummary[] {
  const tallies = new Map<string, SectionTally>();
  const bySlug = sortedBySlug(changes);
  for (const change of changes) {
    for (const item of itemsOf(change)) {
      const sectionKey = `${change.kind} ${item.field}`;
      let tally = tallies.get(sectionKey);
      if (tally === undefined) tallies.set(sectionKey, (tally = new SectionTally(item, bySlug)));
      tally.count(item);
    }
  }
  for (const tally of tallies.values()) tally.rank(caps);
  for (let position = 0; position < changes.length; position += 1) {
    for (const item of itemsOf(changes[position]!)) tallies.get(`${item.change.kind} ${item.field}`)!.gather(item, position);
  }
  const sections = [...tallies.values()].map((t) => t.summary());
  sortSections(sections, (x) => x.groupCount > 0);
  return sections;
}

/** Whether the changes come in order of their organisation's slug (a plan's do): each organisation's items of a section are then one run. */
function sortedBySlug(changes: readonly Change[]): boolean {
  for (let i = 1; i < changes.length; i += 1) if (changes[i - 1]!.organisation.slug > changes[i]!.organisation.slug) return false;
  return true;
}

/** What is the same across a section's items: the new value, or for a removal the thing removed (sameKey within a section). */
function sameValue(item: ChangeItem): SameValue {
  if (item.change.action === 'delete') return item.before.known ? (item.before.value ?? NONE) : UNKNOWN;
  return item.after ?? NONE;
}

/** One section's items as they are counted, then its shown groups gathered. */
class SectionTally {
  private readonly kind: ChangeKind;
  private readonly action: Action;
  private readonly field: ItemField;
  private items = 0;
  /** The organisations counted: by the runs of a plan sorted by slug, else in a set (100,000 slugs, 2–4 MB). */
  private organisations = 0;
  private lastSlug: string | undefined;
  private readonly slugs: Set<string> | undefined;
  /** Items per distinct value, in order of first appearance; after `rank`, the value's place among the section's groups then singles. */
  private readonly values = new Map<SameValue, number>();
  private groupCount = 0;
  private singleCount = 0;
  private moreGroupItems = 0;
  private caps = { maxGroups: 0, maxSingles: 0 };
  private readonly shown = new Map<SameValue, GroupBuilder>();
  private readonly notes = new Map<string, NoteCount & { rank: number; at: number }>();

  constructor(first: ChangeItem, sortedBySlug: boolean) {
    if (!sortedBySlug) this.slugs = new Set();
    this.kind = first.change.kind;
    this.action = first.change.action;
    this.field = first.field;
  }

  count(item: ChangeItem): void {
    this.items += 1;
    const slug = item.change.organisation.slug;
    if (this.slugs !== undefined) this.slugs.add(slug);
    else if (slug !== this.lastSlug) this.organisations += 1;
    this.lastSlug = slug;
    const value = sameValue(item);
    this.values.set(value, (this.values.get(value) ?? 0) + 1);
  }

  /** Places each value as groupSameChanges lists its groups: those of several items in byCountThenValue's order, then the singles in plan order. */
  rank(caps: { maxGroups: number; maxSingles: number }): void {
    this.caps = caps;
    const groups: Array<[SameValue, number]> = [];
    for (const [value, count] of this.values) if (count > 1) groups.push([value, count]);
    // The singles in plan order, before the groups are placed (a place is a number too), without a
    // list of them (most of a bulk plan's changes).
    let singles = 0;
    for (const [value, count] of this.values) if (count === 1) this.values.set(value, groups.length + singles++);
    groups.sort(([va, a], [vb, b]) => b - a || compare(afterOf(this.action, va), afterOf(this.action, vb)) || compare(valueKey(this.action, va), valueKey(this.action, vb)));
    groups.forEach(([value, count], place) => {
      this.values.set(value, place);
      if (place >= caps.maxGroups) this.moreGroupItems += count;
    });
    this.groupCount = groups.length;
    this.singleCount = singles;
  }

  private isShown(rank: number): boolean {
    return rank < this.groupCount ? rank < this.caps.maxGroups : rank - this.groupCount < this.caps.maxSingles;
  }

  /** The second pass: an item joins its group if that is shown, and its note is counted. */
  gather(item: ChangeItem, position: number): void {
    const value = sameValue(item);
    const rank = this.values.get(value)!;
    if (this.isShown(rank)) {
      const builder = this.shown.get(value);
      if (builder === undefined) this.shown.set(value, new GroupBuilder(item));
      else builder.add(item);
    }
    const note = item.change.display.note;
    if (note === undefined) return;
    let entry = this.notes.get(note);
    if (entry === undefined) this.notes.set(note, (entry = { note, items: 0, known: 0, rank, at: position }));
    entry.items += 1;
    if (item.before.known) entry.known += 1;
    // First carried where groupSameChanges lists members: by the group's place, then in plan order.
    if (rank < entry.rank || (rank === entry.rank && position < entry.at)) {
      entry.rank = rank;
      entry.at = position;
    }
  }

  summary(): SectionSummary {
    const built = [...this.shown.entries()].sort(([a], [b]) => this.values.get(a)! - this.values.get(b)!).map(([, b]) => b.group);
    for (const group of built) group.befores.sort((a, b) => b.count - a.count);
    const notes = [...this.notes.values()].sort((a, b) => a.rank - b.rank || a.at - b.at).map(({ note, items, known }) => ({ note, items, known }));
    return {
      kind: this.kind,
      action: this.action,
      field: this.field,
      items: this.items,
      organisations: this.slugs?.size ?? this.organisations,
      groups: built.filter((g) => g.members.length > 1),
      singles: built.filter((g) => g.members.length === 1),
      groupCount: this.groupCount,
      singleCount: this.singleCount,
      moreGroupItems: this.moreGroupItems,
      notes,
    };
  }
}

/** A group's new value as byCountThenValue compares it (a removal's is none). */
function afterOf(action: Action, value: SameValue): string {
  return action === 'delete' || typeof value !== 'string' ? '' : value;
}

/** What tells apart two groups of a section with the same count and new value: their sameKey's last part. */
function valueKey(action: Action, value: SameValue): string {
  if (action !== 'delete') return typeof value === 'string' ? `a${value}` : 'n';
  return value === UNKNOWN ? 'r?' : value === NONE ? 'rn' : `rv${value}`;
}
