/**
 * The views of slug checks: a table for people (slug, available, reasons, then a summary line) and
 * JSON for scripts. Pure. Slugs come from the user and messages from the service, so the table never
 * lets either write control sequences to the terminal, nor hide or reorder characters (a slug that
 * holds invisible ones is shown escaped and marked).
 */
import { paint, terminalSafe, type Style } from '../../../text/ansi.js';
import { formatName } from '../../../text/format-value.js';
import type { SlugCheck, SlugStatus } from '../check-slugs.js';

/** Longer slugs overflow their column rather than push every reason off the screen. */
const MAX_SLUG_COLUMN = 40;

const SHOWN: Readonly<Record<SlugStatus, { text: string; style: Style }>> = {
  available: { text: 'yes', style: 'green' },
  unavailable: { text: 'no', style: 'red' },
  invalid: { text: 'invalid', style: 'red' },
  error: { text: 'error', style: 'yellow' },
};

function width(text: string): number {
  return [...text].length;
}

function pad(text: string, to: number): string {
  return text + ' '.repeat(Math.max(0, to - width(text)));
}

export function summariseSlugChecks(checks: readonly SlugCheck[]): string {
  const count = (status: SlugStatus) => checks.filter((c) => c.status === status).length;
  const parts = [
    `${count('available')} available`,
    `${count('unavailable')} unavailable`,
    ...(count('invalid') > 0 ? [`${count('invalid')} invalid`] : []),
    ...(count('error') > 0 ? [`${count('error')} could not be checked`] : []),
  ];
  return `${checks.length} slug${checks.length === 1 ? '' : 's'} checked: ${parts.join(', ')}.`;
}

/** The table's columns, fixed from the slugs before any is checked, so that rows can be written as they come. */
export interface SlugTable {
  header: string;
  row(check: SlugCheck): string;
}

export function slugTable(slugs: readonly string[], options: { color: boolean }): SlugTable {
  const slugWidth = Math.min(MAX_SLUG_COLUMN, Math.max(width('SLUG'), ...slugs.map((s) => width(formatName(s)))));
  const statusWidth = Math.max(width('AVAILABLE'), ...Object.values(SHOWN).map((s) => s.text.length));
  return {
    header: paint(`${pad('SLUG', slugWidth)}  ${pad('AVAILABLE', statusWidth)}  REASONS`, 'bold', options.color).trimEnd(),
    row(check) {
      const reasons = terminalSafe(check.status === 'error' ? (check.error ?? '') : check.messages.join(' '));
      const shown = SHOWN[check.status];
      const status = reasons === '' ? shown.text : pad(shown.text, statusWidth);
      return `${pad(formatName(check.slug), slugWidth)}  ${paint(status, shown.style, options.color)}${reasons === '' ? '' : `  ${reasons}`}`;
    },
  };
}

/** The whole table at once: the header, a row a slug, then the summary line. */
export function renderSlugTable(checks: readonly SlugCheck[], options: { color: boolean }): string {
  const table = slugTable(checks.map((c) => c.slug), options);
  return [table.header, ...checks.map((c) => table.row(c)), '', summariseSlugChecks(checks)].join('\n') + '\n';
}

export function renderSlugJson(checks: readonly SlugCheck[]): string {
  const slugs = checks.map((c) => ({
    slug: c.slug,
    status: c.status,
    available: c.status === 'available' ? true : c.status === 'error' ? null : false,
    messages: c.messages,
    ...(c.error !== undefined && { error: c.error }),
  }));
  return JSON.stringify({ slugs }, null, 2) + '\n';
}
