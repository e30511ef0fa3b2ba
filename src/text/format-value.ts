/** How the views spell values: shared by the text and Markdown views so that they agree. */
import { escapeInvisibleCharacters, hasInvisibleCharacters, INVISIBLE_NOTE } from '../model/invisible-characters.js';
import type { Change } from '../plan/types.js';
import { terminalSafe } from './ansi.js';

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

/** The plan's changes grouped by organisation in plan order, with set-active changes apart (shown last). */
export function groupChanges(changes: readonly Change[]): { organisations: Array<{ slug: string; id: string; changes: Change[] }>; setActive: Change[] } {
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
