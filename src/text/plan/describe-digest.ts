/**
 * The plan's digest in words: the line under a text plan, the Markdown plan's footer (the short
 * form people compare, and the marker a pipeline reads), and how a fresh plan differs from the one
 * reviewed, as apply says it when it refuses. Pure.
 */
import type { PlanDifference, ValueDifference } from '../../plan/compare-with-reviewed.js';
import type { PlanHazard } from '../../plan/check-plan-safety.js';
import { digestEssence, essenceOf, shortDigest, type ChangeEssence } from '../../plan/plan-digest.js';
import { encodeReviewRecord, reviewMarker } from '../../plan/review-record.js';
import type { Plan } from '../../plan/types.js';
import { terminalSafe } from '../ansi.js';
import { formatName, formatValue, plural } from '../format-value.js';

/** `Plan digest: sha256:…`: under a text plan with changes, for `apply --expect-digest`. */
export function digestLine(digest: string): string {
  return `Plan digest: ${digest}`;
}

/**
 * The end of a Markdown plan: the short digest a reviewer sees, then the marker on the last line
 * (the digest, and the plan's record when it fits in `maxRecord`), which pipelines read to apply
 * only this plan. Its length counts against the comment's.
 */
export function markdownDigestFooter(plan: Plan, maxRecord?: number): string {
  const essence = essenceOf(plan);
  const digest = digestEssence(essence);
  const record = encodeReviewRecord(essence, maxRecord);
  // Written as it is: a digest is `sha256:` and hexadecimal digits, nothing Markdown reads.
  const visible = plan.changes.length === 0 ? '' : `\n<sub>Plan digest \`${shortDigest(digest)}\`</sub>\n`;
  return `${visible}\n${reviewMarker(digest, record)}\n`;
}

/**
 * A Markdown plan made by `render` within `maxLength`, the digest's footer included: the footer is
 * measured first and the plan gets the rest.
 */
export function withDigestFooter(plan: Plan, render: (plan: Plan, options: { maxLength: number }) => string, maxLength: number): string {
  const footer = markdownDigestFooter(plan);
  const body = render(plan, { maxLength: Math.max(0, maxLength - footer.length) });
  return `${body.endsWith('\n') || body === '' ? body : `${body}\n`}${footer}`;
}

/** How many added, gone and changed changes are listed each, at most, before "…and N more". */
export const DIFFERENCE_LISTED = 20;

type NotReviewed = Extract<PlanHazard, { kind: 'not-reviewed' }>;

/** The refusal's first sentence: the plan now is not the one reviewed. */
export function describeNotReviewed(hazard: NotReviewed): string {
  return `The plan now is not the one reviewed: its digest is ${hazard.actual}, the reviewed plan's ${hazard.expected}.`;
}

/** What differs, a line each (indented for a list under the refusal); when the reviewed plan came without its record, that it cannot be said. */
export function describeDifference(hazard: NotReviewed, listed: number = DIFFERENCE_LISTED): string[] {
  const difference = hazard.difference;
  if (difference === undefined) return ['(the reviewed plan came without its record, so what differs cannot be listed: compare the plan above with the one reviewed)'];
  const lines: string[] = [];
  if (difference.service !== undefined) lines.push(`! the service: ${terminalSafe(difference.service.reviewed)} when reviewed, ${terminalSafe(difference.service.now)} now`);
  lines.push(...capped(difference.added, listed, (c) => `+ ${terminalSafe(c.address)}${essenceDetail(c)}: added since the review`, 'added'));
  lines.push(...capped(difference.gone, listed, (c) => `- ${terminalSafe(c.address)}${essenceDetail(c)}: in the reviewed plan, not now`, 'gone'));
  lines.push(
    ...capped(
      difference.changed,
      listed,
      (c) => [`~ ${terminalSafe(c.address)}: changed since the review`, ...c.values.map((v) => `    ${describeValue(v)}`)].join('\n'),
      'changed',
    ),
  );
  return lines;
}

function capped<T>(items: readonly T[], listed: number, line: (item: T) => string, what: string): string[] {
  const shown = items.slice(0, listed).map(line);
  if (items.length > listed) shown.push(`…and ${plural(items.length - listed, 'more change')} ${what}`);
  return shown;
}

/** ` (billingEmail "a" → "b")`: what a billing or set-active change does, as its essence holds it. */
function essenceDetail(change: ChangeEssence): string {
  if (change.kind === 'set-active') return ` (${formatActive(change.activeFrom)} → ${formatName(change.organisation)})`;
  if (change.declared === undefined) return '';
  const fields = Object.entries(change.declared)
    .filter(([field, value]) => change.seen === undefined || change.seen[field as keyof typeof change.seen] !== value)
    .map(([field, value]) => `${field} ${change.seen === undefined ? '(known after accept)' : formatValue(change.seen[field as keyof typeof change.seen] ?? null)} → ${formatValue(value)}`);
  return fields.length === 0 ? '' : ` (${fields.join(', ')})`;
}

const ASPECT: Readonly<Record<ValueDifference['aspect'], string>> = {
  kind: 'the kind of change',
  organisation: 'the organisation written to',
  target: 'the invitation or channel',
  declared: 'to write',
  seen: 'as read when planned',
  knownAfter: 'the accept it waits for',
  activeFrom: 'the organisation active before',
};

/** `billingEmail, as read when planned: "a@x" when reviewed, "b@x" now`. */
function describeValue(value: ValueDifference): string {
  const what = value.field === undefined ? ASPECT[value.aspect] : `${value.field}, ${ASPECT[value.aspect]}`;
  return `${what}: ${shownValue(value.reviewed)} when reviewed, ${shownValue(value.now)} now`;
}

function shownValue(value: string | null | undefined): string {
  return value === undefined ? '(not in the change)' : formatValue(value);
}

function formatActive(id: string | null | undefined): string {
  return id === undefined || id === null ? '(none)' : formatName(id);
}

/** The counts of a difference, for a headline: `1 added, 2 gone, 1 changed`. */
export function differenceCounts(difference: PlanDifference): string {
  return `${difference.added.length} added, ${difference.gone.length} gone, ${difference.changed.length} changed`;
}
