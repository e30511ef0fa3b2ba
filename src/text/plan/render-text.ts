/**
 * The human view of a plan, Terraform-like: one block per organisation with changes, field-level
 * billing diffs, notes, then problems, counts and the closing `Plan: …` line. Pure and deterministic.
 * Above COMPACT_THRESHOLD changes, one line per change instead of blocks: still every change (plan
 * is what gets reviewed), but a quarter of the lines, and each line names its address (grep finds
 * it); then, above the closing line where a terminal leaves the reader, the same changes grouped
 * (render-grouped-change-lines.ts): the patterns of a bulk plan, each said once.
 */
import { summarisePlan, type Action, type Change, type Plan } from '../../plan/types.js';
import { paint, terminalSafe } from '../ansi.js';
import { planHeadline } from './plan-headline.js';
import { digestLine } from './describe-digest.js';
import { digestPlan } from '../../plan/plan-digest.js';
import { renderGroupedChangeLines } from './render-grouped-change-lines.js';
import { ACTION_MARKER as MARKER, formatBefore, formatChangeLine, formatFromActive, formatName, formatValue, groupChanges, inOrganisationOrder, plural } from '../format-value.js';

/**
 * Above this many changes a plan is too long to read block by block and an apply log too long to
 * read line by line: `plan` prints one line per change, and apply in a log (not a terminal, not
 * --format json) shows a digest of the plan and progress lines instead of a line per change.
 * At or below it, both print what they always did, so small plans and demos keep their shape.
 */
export const COMPACT_THRESHOLD = 50;

/** Above the grouped changes of a long plan, whose every change is listed one line each just before. */
const GROUPED_HEADING = 'The same changes, each said once (every change is listed above):';

/**
 * Groups and single changes listed per kind and field under GROUPED_HEADING: the big patterns whole,
 * a few of the rest (every one of them is listed above).
 */
const GROUPED_CAPS = { maxGroups: 20, maxSingles: 5 };

export interface TextOptions {
  color: boolean;
}

export function renderText(plan: Plan, options: TextOptions): string {
  return [...renderTextPieces(plan, options)].join('');
}

/**
 * Lines gathered before a piece is handed over: large enough to write efficiently, small enough to
 * hold little, and to stay under V8's large-object size (128 KB): a piece of 2,000 lines (about
 * 240 KB) was a large object, which only a full collection frees (12 MB of them at the end of a
 * plan of 100,000 changes).
 */
const LINES_PER_PIECE = 500;

/**
 * The same text in pieces of whole lines, so that a plan of 100,000 changes can be written as it is
 * rendered instead of held whole (its text is over 10 MB, its lines several times that).
 */
export function* renderTextPieces(plan: Plan, options: TextOptions): Generator<string> {
  const { color } = options;
  const bold = (s: string): string => paint(s, 'bold', color);
  let lines: string[] = [`${bold('orgform plan')} for ${terminalSafe(plan.baseUrl)}`, ''];
  const piece = (): string => {
    const text = `${lines.join('\n')}\n`;
    lines = [];
    return text;
  };

  if (plan.changes.length > 0) {
    lines.push(
      'orgform will perform the following actions:',
      `  ${legend('accept', color)}   ${legend('update', color)}   ${legend('delete', color)}`,
      '',
    );
    if (plan.changes.length > COMPACT_THRESHOLD) {
      // In the same order as the blocks: by organisation, the active organisation last.
      for (const change of inOrganisationOrder(plan.changes)) {
        lines.push(`  ${formatChangeLine(change, color)}`);
        if (lines.length >= LINES_PER_PIECE) yield piece();
      }
      lines.push('', bold(GROUPED_HEADING), ...renderGroupedChangeLines(plan.changes, { color, ...GROUPED_CAPS }), '');
    } else {
      const groups = groupChanges(plan.changes);
      for (const group of groups.organisations) {
        lines.push(`  ${bold(`# ${formatName(group.slug)}`)} (${formatName(group.id)})`);
        for (const change of group.changes) lines.push(...changeLines(change, color));
        lines.push('');
        if (lines.length >= LINES_PER_PIECE) yield piece();
      }
      for (const change of groups.setActive) {
        lines.push(...changeLines(change, color), '');
      }
    }
  }

  if (plan.problems.length > 0) {
    lines.push(bold(problemsHeading(plan.problems.length)));
    for (const p of plan.problems) {
      lines.push(`  ${paint('!', 'red', color)} ${terminalSafe(p.organisation ?? p.address)}: ${terminalSafe(p.message)}`);
    }
    lines.push('');
  }

  lines.push(...closingLines(plan, bold));
  yield piece();
}

/**
 * What needs nothing (unchanged, journaled), then, when there are changes, the plan's digest (what
 * `apply --expect-digest` takes), then the plan line: the end of the full plan and of the digest.
 */
export function closingLines(plan: Plan, bold: (text: string) => string): string[] {
  const summary = summarisePlan(plan);
  const counts: string[] = [];
  if (summary.unchanged > 0) counts.push(`${plural(summary.unchanged, 'organisation')} unchanged.`);
  if (plan.journaled.length > 0) {
    counts.push(`${plural(plan.journaled.length, 'one-shot change')} already done according to the journal, not planned again.`);
  }
  const digest = plan.changes.length > 0 ? [digestLine(digestPlan(plan))] : [];
  return [...(counts.length > 0 ? [...counts, ''] : []), ...digest, bold(closingLine(plan))];
}

/** The heading of the problems, in the text plan and its digest. */
export function problemsHeading(count: number): string {
  return `Problems (${count}): their changes are missing from this plan`;
}

/** `Plan: 2 to change, 2 to remove, 1 to accept.` or why there is nothing to do; also the digest's last line. */
export function closingLine(plan: Plan): string {
  const s = summarisePlan(plan);
  if (plan.changes.length === 0 && s.problems > 0) {
    return `No changes. ${plural(s.problems, 'problem')} (see above): what could not be read was not compared.`;
  }
  return planHeadline(plan);
}

function legend(action: Action, color: boolean): string {
  const { symbol, style } = MARKER[action];
  return `${paint(symbol, style, color)} ${action}`;
}

/** The change's own line, its field diffs and its note; every piece of outside text made terminal-safe. */
function changeLines(change: Change, color: boolean): string[] {
  const { symbol, style } = MARKER[change.action];
  const marker = paint(symbol, style, color);
  const detail = '      ';
  if (change.kind === 'set-active') {
    const from = formatFromActive(change.display.fromActive);
    const head = `  ${marker} activeOrganisation: ${from} → ${formatName(change.organisation.slug)}`;
    return change.display.note === undefined ? [head] : [head, `${detail}note: ${terminalSafe(change.display.note)}`];
  }
  const lines = [`  ${marker} ${terminalSafe(change.address)}`];
  for (const f of change.display.fields ?? []) {
    lines.push(`${detail}${f.field}: ${terminalSafe(formatBefore(change, f.before))} → ${terminalSafe(formatValue(f.after))}`);
  }
  if (change.display.note !== undefined) lines.push(`${detail}note: ${terminalSafe(change.display.note)}`);
  return lines;
}
