/**
 * One change on one line, for plans too long for the block view and for the apply log's digest:
 * the marker, the address, and what the change does (billing fields before → after, the active
 * organisation's move, the note). One line, so that a log of 100,000 changes stays greppable by
 * address. Every piece of outside text is made terminal-safe.
 */
import type { Action, Change } from '../plan/types.js';
import { paint, terminalSafe, type Style } from './ansi.js';
import { formatBefore, formatFromActive, formatName, formatValue } from './format-value.js';

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
