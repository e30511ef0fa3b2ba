/**
 * Escaping for the Markdown view. Text from the configuration or the service must not end a code
 * fence, open HTML, split a table cell, start a link or emphasis, or add lines.
 */
import { terminalSafe } from './ansi.js';

const HTML: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', '`': '&#96;', '|': '&#124;' };

/** For HTML contexts such as `<summary>`: entities only (Markdown is not parsed there). */
export function escapeHtml(text: string): string {
  return terminalSafe(text).replace(/[&<>"`|]/g, (c) => HTML[c] ?? c);
}

/** For Markdown inline contexts (table cells, list items): entities for HTML, `|` and backticks, backslashes for emphasis and links. */
export function escapeMarkdownInline(text: string): string {
  return neutraliseMentions(terminalSafe(text).replace(/[&<>"`|\\*_[\]~#!]/g, (c) => HTML[c] ?? `\\${c}`));
}

/** `@name` in a comment notifies that user or team: a zero-width joiner keeps it as text. E-mail addresses are left alone. */
export function neutraliseMentions(text: string): string {
  return text.replace(/(^|[^\w.@-])@(?=[A-Za-z0-9])/g, '$1@\u2060');
}

/** A backtick fence longer than any run of backticks inside `body`, so the body can never close it. */
export function codeFence(body: string): string {
  let longest = 0;
  for (const run of body.match(/`+/g) ?? []) longest = Math.max(longest, run.length);
  return '`'.repeat(Math.max(3, longest + 1));
}
