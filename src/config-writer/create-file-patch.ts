/**
 * One file's change as `git diff` writes it (`diff --git a/PATH b/PATH`, `---`/`+++`, three lines
 * of context), so that the output of `export --diff` goes straight to `git apply`, `patch -p1` or a
 * pull request. Pure.
 *
 * The patch is built from the edits, which export knows (it changed the values itself), in time
 * linear in the file: a diff of the two texts has no bound on its edit script, and a renewal that
 * changes every subscriptionID of a bulk file makes it worse than quadratic (docs/performance.md).
 */
import { formatPatch, type StructuredPatchHunk } from 'diff';

/** `before.slice(start, end)` replaced by `text`. */
export interface TextEdit {
  start: number;
  end: number;
  text: string;
}

const CONTEXT = 3;

/**
 * `path` is relative to where the patch will be applied, with `/` separators; names that git
 * would quote (non-ASCII, quotes, control characters) are quoted the way git does. `after` is the
 * edits made to `before` (in order, none overlapping), or the changed text itself, compared line by
 * line (findLineEdits). Nothing at all when nothing changed.
 */
export function createFilePatch(path: string, before: string, after: string | readonly TextEdit[]): string {
  const edits = typeof after === 'string' ? findLineEdits(before, after) : after;
  const hunks = buildHunks(new LineIndex(before), edits);
  if (hunks.length === 0) return '';
  return formatPatch({ oldFileName: `a/${path}`, newFileName: `b/${path}`, oldHeader: undefined, newHeader: undefined, hunks, isGit: true });
}

/** `before` with `edits` made (in order, none overlapping). */
export function applyEdits(before: string, edits: readonly TextEdit[]): string {
  let text = '';
  let at = 0;
  for (const edit of edits) {
    text += before.slice(at, edit.start) + edit.text;
    at = edit.end;
  }
  return text + before.slice(at);
}

/**
 * The edits that turn `before` into `after`, whole lines each, in linear time: the lines both
 * start and end with are kept; between them, texts with as many lines are compared line by line
 * (each run of differing lines is an edit, which is what changing values in place gives), and
 * otherwise the lines between are one edit.
 */
export function findLineEdits(before: string, after: string): TextEdit[] {
  if (before === after) return [];
  const old = new LineIndex(before);
  const next = new LineIndex(after);
  let head = 0;
  while (head < old.count && head < next.count && old.line(head) === next.line(head)) head++;
  let tail = 0;
  while (tail < old.count - head && tail < next.count - head && old.line(old.count - 1 - tail) === next.line(next.count - 1 - tail)) tail++;
  const oldEnd = old.count - tail;
  const newEnd = next.count - tail;
  if (oldEnd !== newEnd) return [{ start: old.start(head), end: old.start(oldEnd), text: after.slice(next.start(head), next.start(newEnd)) }];
  const edits: TextEdit[] = [];
  for (let i = head; i < oldEnd; ) {
    if (old.line(i) === next.line(i)) {
      i++;
      continue;
    }
    let j = i + 1;
    while (j < oldEnd && old.line(j) !== next.line(j)) j++;
    edits.push({ start: old.start(i), end: old.start(j), text: after.slice(next.start(i), next.start(j)) });
    i = j;
  }
  return edits;
}

/** Where each line of a text starts; a line keeps its line break, as in `git diff`. */
class LineIndex {
  private readonly starts: number[] = [0];

  constructor(readonly text: string) {
    for (let at = text.indexOf('\n'); at >= 0; at = text.indexOf('\n', at + 1)) this.starts.push(at + 1);
    // A text that ends with a line break has no line after it.
    if (this.starts[this.starts.length - 1] === text.length) this.starts.pop();
  }

  get count(): number {
    return this.starts.length;
  }

  /** Where line `i` (0-based) starts; the text's length past the last line. */
  start(i: number): number {
    return i < this.starts.length ? this.starts[i]! : this.text.length;
  }

  /** The line that holds `offset`; `count` for the end of a text that ends with a line break (or is empty). */
  lineOf(offset: number): number {
    if (offset >= this.text.length && (this.text.length === 0 || this.text.endsWith('\n'))) return this.count;
    let lo = 0;
    let hi = this.starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (this.starts[mid]! <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  /** The lines that `edit` touches, from..to (exclusive); from === to for an insertion at the end. */
  linesOf(edit: TextEdit): { from: number; to: number } {
    const from = this.lineOf(edit.start);
    const last = edit.end > edit.start ? this.lineOf(edit.end - 1) : from;
    return { from, to: Math.min(this.count, last + 1) };
  }

  line(i: number): string {
    return this.text.slice(this.start(i), this.start(i + 1));
  }
}

/** Whole lines `from`..`to` (exclusive) of the old text, replaced by `lines`. */
interface LineChange {
  from: number;
  to: number;
  lines: string[];
}

/** The edits as changes of whole lines: edits on the same or adjacent lines are one change; lines a change leaves as they were are not in it. */
function toLineChanges(old: LineIndex, edits: readonly TextEdit[]): LineChange[] {
  const changes: LineChange[] = [];
  for (let i = 0; i < edits.length; ) {
    const { from } = old.linesOf(edits[i]!);
    let { to } = old.linesOf(edits[i]!);
    let text = old.text.slice(old.start(from), edits[i]!.start);
    let end = edits[i]!.start;
    // Edits on the same line or on the next are one change, as a diff shows a run of changed lines.
    for (; i < edits.length && (edits[i]!.start === end || old.lineOf(edits[i]!.start) <= to); i++) {
      text += old.text.slice(end, edits[i]!.start) + edits[i]!.text;
      end = edits[i]!.end;
      to = Math.max(to, old.linesOf(edits[i]!).to);
    }
    text += old.text.slice(end, old.start(to));
    const change = trimUnchanged(old, { from, to, lines: splitLines(text) });
    if (change !== undefined) changes.push(change);
  }
  return changes;
}

function splitLines(text: string): string[] {
  const index = new LineIndex(text);
  const lines: string[] = [];
  for (let i = 0; i < index.count; i++) lines.push(index.line(i));
  return lines;
}

/** Without the lines it starts and ends with that are the same as before; undefined when none changed. */
function trimUnchanged(old: LineIndex, change: LineChange): LineChange | undefined {
  let { from, to } = change;
  let first = 0;
  let last = change.lines.length;
  while (from < to && first < last && old.line(from) === change.lines[first]) (from++, first++);
  while (from < to && first < last && old.line(to - 1) === change.lines[last - 1]) (to--, last--);
  if (from === to && first === last) return undefined;
  return { from, to, lines: change.lines.slice(first, last) };
}

/**
 * The hunks of the patch, as jsdiff's structuredPatch builds them: up to three lines of context on
 * each side, and changes closer than twice that in one hunk. Lines are written without their line
 * break; a line without one (the last, in a file that does not end with one) is followed by
 * "\ No newline at end of file".
 */
function buildHunks(old: LineIndex, edits: readonly TextEdit[]): StructuredPatchHunk[] {
  const changes = toLineChanges(old, edits);
  const hunks: StructuredPatchHunk[] = [];
  let shift = 0; // a line's number in the new text minus its number in the old, before the change at hand
  for (let c = 0; c < changes.length; ) {
    const from = Math.max(0, changes[c]!.from - CONTEXT);
    const lines: string[] = [];
    let at = from;
    let added = 0;
    let removed = 0;
    for (;;) {
      const change = changes[c]!;
      for (; at < change.from; at++) lines.push(` ${old.line(at)}`);
      for (; at < change.to; at++, removed++) lines.push(`-${old.line(at)}`);
      for (const line of change.lines) lines.push(`+${line}`);
      added += change.lines.length;
      c++;
      if (c >= changes.length || changes[c]!.from - change.to > 2 * CONTEXT) break;
    }
    for (const until = Math.min(old.count, at + CONTEXT); at < until; at++) lines.push(` ${old.line(at)}`);
    hunks.push({ oldStart: from + 1, oldLines: at - from, newStart: from + 1 + shift, newLines: at - from - removed + added, lines: withoutLineBreaks(lines) });
    shift += added - removed;
  }
  return hunks;
}

function withoutLineBreaks(lines: readonly string[]): string[] {
  const out: string[] = [];
  for (const line of lines) {
    if (line.endsWith('\n')) out.push(line.slice(0, -1));
    else out.push(line, '\\ No newline at end of file');
  }
  return out;
}
