/** How the views spell values: shared by the text and Markdown views so that they agree. */
import type { Change } from '../plan/types.js';

/** A declared or current billing value: quoted (control characters escaped), or `(none)` when absent. */
export function formatValue(value: string | null): string {
  return value === null ? '(none)' : JSON.stringify(value);
}

/** A billing field's current value in a change: `(known after accept)` when the plan could not read it. */
export function formatBefore(change: Change, value: string | null): string {
  return change.knownAfter === undefined ? formatValue(value) : KNOWN_AFTER;
}

export const KNOWN_AFTER = '(known after accept)';

/** The organisation active before a set-active change: its slug, `(none)`, or `(unknown)` when it was not read. */
export function formatFromActive(fromActive: string | null | undefined): string {
  if (fromActive === undefined) return '(unknown)';
  return fromActive === null ? '(none)' : fromActive;
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
