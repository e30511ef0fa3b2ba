/**
 * How the views spell values, and a change on one line (for plans too long for the block view, the
 * apply log's digest, and 100,000 changes greppable by address): shared by the text, Markdown and
 * page views so that they agree. Every piece of outside text is made terminal-safe.
 */
import { escapeInvisibleCharacters, hasInvisibleCharacters, INVISIBLE_NOTE } from '../model/invisible-characters.js';
import type { Action, Change } from '../plan/types.js';
import { paint, terminalSafe, type Style } from './ansi.js';

/** ` (contains invisible characters)` after a value that holds any, so that people look twice; empty otherwise. */
export function invisibleMark(value: string): string {
  return hasInvisibleCharacters(value) ? ` (${INVISIBLE_NOTE})` : '';
}

/**
 * A declared or current billing value: quoted, with control, invisible and bidirectional characters
 * escaped (`"sub\u200B_acme"`) and the value then marked; or `(none)` when absent.
 */
export function formatValue(value: string | null): string {
  return value === null ? '(none)' : escapeInvisibleCharacters(JSON.stringify(value)) + invisibleMark(value);
}

/** A slug or an address as Markdown names it (escaping shows the characters): marked when it holds invisible ones. */
export function markedName(text: string): string {
  return text + invisibleMark(text);
}

/** A slug or id shown as a name (a heading, the active organisation): terminal-safe, and marked like a value. */
export function formatName(name: string): string {
  return terminalSafe(name) + invisibleMark(name);
}

/** A billing field's current value in a change: `(known after accept)` when the plan could not read it. */
export function formatBefore(change: Change, value: string | null): string {
  return change.knownAfter === undefined ? formatValue(value) : KNOWN_AFTER;
}

export const KNOWN_AFTER = '(known after accept)';

/** The organisation active before a set-active change: its slug (as formatName shows it), `(none)`, or `(unknown)` when it was not read. */
export function formatFromActive(fromActive: string | null | undefined): string {
  if (fromActive === undefined) return '(unknown)';
  return fromActive === null ? '(none)' : formatName(fromActive);
}

/** `n organisation` / `n organisations`. */
export function plural(n: number, singular: string, pluralForm = `${singular}s`): string {
  return `${n} ${n === 1 ? singular : pluralForm}`;
}

/** `Requests sent a second`: words that begin a sentence or a heading. */
export function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

type ChangeGroups = { organisations: Array<{ slug: string; id: string; changes: Change[] }>; setActive: Change[] };

/**
 * The plan's changes grouped by organisation in plan order, with set-active changes apart (shown
 * last). A plan is sorted by organisation, set-active last: each group is then a run of it, taken
 * whole (a map of 100,000 groups and a list grown change by change were 15 MB at the very moment
 * a bulk plan is shown, when everything else is still held). Any other order is grouped by slug.
 */
export function groupChanges(changes: readonly Change[]): ChangeGroups {
  const organisations: ChangeGroups['organisations'] = [];
  let start = 0;
  for (let at = 1; at <= changes.length; at++) {
    const previous = changes[at - 1]!;
    const change = changes[at];
    if (change !== undefined && change.kind !== 'set-active' && previous.kind !== 'set-active' && change.organisation.slug === previous.organisation.slug) continue;
    if (previous.kind === 'set-active') break;
    if (change !== undefined && change.kind !== 'set-active' && change.organisation.slug < previous.organisation.slug) return groupBySlug(changes);
    organisations.push({ slug: previous.organisation.slug, id: previous.organisation.id, changes: changes.slice(start, at) });
    start = at;
  }
  const setActive = changes.slice(start);
  return setActive.every((c) => c.kind === 'set-active') ? { organisations, setActive } : groupBySlug(changes);
}

/**
 * The changes in the order groupChanges lists them (by organisation, set-active last), one after
 * another: a sorted plan's own order, without a group per organisation (100,000 of them, about 6 MB
 * while a bulk plan's lines are written); any other order through groupChanges.
 */
export function inOrganisationOrder(changes: readonly Change[]): Iterable<Change> {
  let activeFrom = changes.length;
  for (let at = 0; at < changes.length; at++) {
    const change = changes[at]!;
    if (change.kind === 'set-active') {
      activeFrom = Math.min(activeFrom, at);
      continue;
    }
    const sorted = at >= activeFrom ? false : at === 0 || changes[at - 1]!.organisation.slug <= change.organisation.slug;
    if (!sorted) {
      const groups = groupChanges(changes);
      return [...groups.organisations.flatMap((g) => g.changes), ...groups.setActive];
    }
  }
  return changes;
}

function groupBySlug(changes: readonly Change[]): ChangeGroups {
  const bySlug = new Map<string, { slug: string; id: string; changes: Change[] }>();
  const setActive: Change[] = [];
  for (const change of changes) {
    if (change.kind === 'set-active') {
      setActive.push(change);
      continue;
    }
    const group = bySlug.get(change.organisation.slug);
    if (group) group.changes.push(change);
    else bySlug.set(change.organisation.slug, { slug: change.organisation.slug, id: change.organisation.id, changes: [change] });
  }
  return { organisations: [...bySlug.values()], setActive };
}

export const ACTION_MARKER: Readonly<Record<Action, { symbol: string; style: Style }>> = {
  accept: { symbol: '+', style: 'green' },
  update: { symbol: '~', style: 'yellow' },
  delete: { symbol: '-', style: 'red' },
};

/** `~ organisations.acme.billing: billingEmail "old@acme.test" → "new@acme.test", customerID (none) → "cus_1"`, unindented. */
export function formatChangeLine(change: Change, color: boolean): string {
  const { symbol, style } = ACTION_MARKER[change.action];
  const marker = paint(symbol, style, color);
  const note = change.display.note === undefined ? '' : ` — note: ${terminalSafe(change.display.note)}`;
  if (change.kind === 'set-active') {
    const from = formatFromActive(change.display.fromActive);
    return `${marker} activeOrganisation: ${from} → ${formatName(change.organisation.slug)}${note}`;
  }
  const fields = (change.display.fields ?? []).map((f) => `${f.field} ${terminalSafe(formatBefore(change, f.before))} → ${terminalSafe(formatValue(f.after))}`);
  return `${marker} ${terminalSafe(change.address)}${fields.length > 0 ? `: ${fields.join(', ')}` : ''}${note}`;
}
