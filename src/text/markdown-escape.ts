/**
 * Markdown for GitHub (pull-request comments, job summaries) built so that outside text cannot be
 * forgotten unescaped: a view writes Markdown only as `Markdown` values, made by the `md` tag, in
 * which the template's own text is trusted and every interpolated string is escaped. A string cannot
 * reach the output any other way but through `codeBlock`, whose body GitHub shows as written.
 *
 * Escaping (escapeMarkdown, one function for every place): text from the configuration or the
 * service must not open HTML, end a code span, split a table cell, start a link, emphasis or math,
 * add lines, hide or reorder characters, notify anyone or link anything:
 * - control, invisible and bidirectional characters are shown as escapes (`\n`, `\u200B`, `\u202E`);
 * - characters with a meaning in Markdown or HTML become numeric character references, which
 *   CommonMark never reads as syntax and which are the same text inline and inside HTML such as
 *   `<summary>` (where backslash escapes would show);
 * - what GitHub would turn into a notification or a link gets a zero-width space
 *   (`&#8203;`) where it breaks the pattern: `@name` after anything but a letter, digit or `_`
 *   (GitHub's mention filter takes `.@x`, `-@x` and `@@x`; `ops@acme.example` is an e-mail
 *   address), `#123` (also `owner/repo#123`), `GH-123`, `https://`, `www.`, and GitLab's references,
 *   which it finds in the text after character references are read: `!12` (merge request), `&3`
 *   (epic), `$4` (snippet), `%v1` and `~bug` (milestone, label); and `:name:`, which GitHub and
 *   GitLab show as an emoji in place of the text. This is Renovate's way; text that
 *   looks like a commit SHA is left alone (a link to a commit notifies no one).
 * Code blocks need none of this: GitHub neither parses nor links inside them.
 */
import { terminalSafe } from './ansi.js';

/** Made only in this module (the constructor is private, and `make` is not exported). */
let make: (text: string) => Markdown;

/** Text that is Markdown already: made only by `md`, `joinMarkdown`, `codeBlock` and escapeMarkdown. */
export class Markdown {
  static {
    make = (text) => new Markdown(text);
  }

  private constructor(readonly text: string) {}

  get length(): number {
    return this.text.length;
  }

  toString(): string {
    return this.text;
  }
}

const ENTITY: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
  '`': '&#96;',
  '|': '&#124;',
  '\\': '&#92;',
  '*': '&#42;',
  _: '&#95;',
  '[': '&#91;',
  ']': '&#93;',
  '~': '&#126;',
  '!': '&#33;',
  $: '&#36;',
};

const ZERO_WIDTH_SPACE = '&#8203;';

/**
 * One pass over the text, so that what is inserted is never matched again: a character with a
 * meaning, or the place in a mention, reference or link where a zero-width space goes.
 */
const SPECIAL = /([!&$%~])(?=\d|(?<=[%~])[\w"])|[&<>"'`|\\*_[\]~!$]|(?<!\w)@(?=[\w.])|#(?=\d)|(?<=\bGH)-(?=\d)|:(?=\/\/|[\w+-]+:)|(?<=\bwww)\./gi;

/** Outside text as Markdown, safe in a table cell, a list item, a heading or HTML such as `<summary>`. */
export function escapeMarkdown(text: string): Markdown {
  return make(
    terminalSafe(text).replace(SPECIAL, (c: string, sigil: string | undefined) =>
      // A GitLab reference's sigil is both: a character reference, and a zero-width space after it.
      sigil !== undefined ? `${ENTITY[sigil] ?? sigil}${ZERO_WIDTH_SPACE}` : (ENTITY[c] ?? `${c}${ZERO_WIDTH_SPACE}`),
    ),
  );
}

/** Markdown from a template: its own text as written, each `${value}` escaped unless it is Markdown already. */
export function md(strings: TemplateStringsArray, ...values: ReadonlyArray<Markdown | string | number>): Markdown {
  let text = strings[0]!;
  values.forEach((value, i) => {
    text += value instanceof Markdown ? value.text : typeof value === 'number' ? String(value) : escapeMarkdown(value).text;
    text += strings[i + 1]!;
  });
  return make(text);
}

export function joinMarkdown(parts: readonly Markdown[], separator: Markdown = EMPTY): Markdown {
  return make(parts.map((p) => p.text).join(separator.text));
}

const EMPTY = make('');

/**
 * A fenced code block (` ```diff `): each line terminal-safe (one line stays one line), nothing else
 * escaped, since GitHub shows a code block as written. The fence is longer than any run of
 * backticks inside, so the body can never close it.
 */
export function codeBlock(info: string, lines: readonly string[]): Markdown {
  const body = lines.map((line) => terminalSafe(line)).join('\n');
  let longest = 0;
  for (const run of body.match(/`+/g) ?? []) longest = Math.max(longest, run.length);
  const fence = '`'.repeat(Math.max(3, longest + 1));
  return make(`${fence}${terminalSafe(info)}\n${body}\n${fence}`);
}

/**
 * An inline code span (`` `orgs_a.yaml:3:5` ``): the text shown as written, on one line
 * (terminal-safe), since neither Markdown nor character references reach inside a code span, nor
 * do mentions, references or links. Its delimiter is longer than any run of backticks inside, with
 * a space inside each end where the text starts or ends with a backtick or a space (CommonMark
 * takes one off each end). Not for a table cell: GitHub splits a row at `|` even in a code span.
 */
export function codeSpan(text: string): Markdown {
  const body = terminalSafe(text);
  if (body === '') return EMPTY;
  let longest = 0;
  for (const run of body.match(/`+/g) ?? []) longest = Math.max(longest, run.length);
  const fence = '`'.repeat(longest + 1);
  const pad = /^[` ]|[` ]$/.test(body) ? ' ' : '';
  return make(`${fence}${pad}${body}${pad}${fence}`);
}

/** Why `url` cannot be a link's target, or undefined when it can: an http or https URL of printable ASCII. */
export function describeBadLinkTarget(url: string): string | undefined {
  if (/^[\x21-\x7e]+$/.test(url) && /^https?:\/\/[^/?#]+/i.test(url)) return undefined;
  return `it must be an http or https URL of printable ASCII, not ${JSON.stringify(url)}`;
}

/**
 * `url` as a link's target: an http or https URL (checked: throws otherwise) or a fragment of the
 * caller's own (`#name`), with what could end a link target percent-encoded.
 */
export function linkTarget(url: string): string {
  const bad = /^#[\w-]+$/.test(url) ? undefined : describeBadLinkTarget(url);
  if (bad !== undefined) throw new Error(`A link's target: ${bad}`);
  return url.replace(/[()<>"'`\\]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** `[text](url)`: the text escaped unless it is Markdown already, the target as linkTarget makes it. */
export function markdownLink(text: Markdown | string, url: string): Markdown {
  return make(`[${text instanceof Markdown ? text.text : escapeMarkdown(text).text}](${linkTarget(url)})`);
}
