/**
 * The plan as apply shows it for review: whole on a terminal, and a digest in a long log (more
 * than COMPACT_THRESHOLD changes): the counts by action and kind, the same change said once (the
 * first groups and single changes of each kind and field), and where to see all of them. There it is the apply's record, not its review: the whole plan is
 * what `orgform plan` is for (and what was reviewed), and in a CI log 100,000 changes listed before
 * the apply starts bury everything that follows. Text only, so that a text apply loads neither the
 * JSON nor the Markdown renderer. Pure.
 */
import type { ChangeKind } from '../../model/change-kind.js';
import type { Action, Change, Plan } from '../../plan/types.js';
import { paint, terminalSafe } from '../ansi.js';
import { ACTION_MARKER, plural } from '../format-value.js';
import { renderGroupedChangeLines } from './render-grouped-change-lines.js';
import { closingLines, COMPACT_THRESHOLD, problemsHeading, renderText } from './render-text.js';

export interface ReviewOptions {
  /** Whether the text goes to a terminal (the whole plan) or a log (a digest past the threshold). */
  tty: boolean;
  color: boolean;
  compactAbove?: number;
}

export function renderPlanForReview(plan: Plan, options: ReviewOptions): string {
  if (!options.tty && plan.changes.length > (options.compactAbove ?? COMPACT_THRESHOLD)) return renderPlanDigest(plan, { color: false });
  // Whether to colour is the caller's to say (a terminal, or FORCE_COLOR in a CI log).
  return renderText(plan, { color: options.color });
}

export interface PlanDigestOptions {
  color: boolean;
  /** How many groups and single changes per kind and field are listed before "… and N more"; default DIGEST_FIRST_CHANGES. */
  firstChanges?: number;
}

/** Enough to see what kind of change this is and that the values are the intended ones. */
export const DIGEST_FIRST_CHANGES = 5;
/** Problems listed before "… and N more". */
const DIGEST_FIRST_PROBLEMS = 10;

/** In the order the counts are shown: the order of the legend. */
const ACTIONS: readonly Action[] = ['accept', 'update', 'delete'];

/** Each kind counted in words under its action, in the order apply runs them within an organisation. */
const KIND_NOUN: Readonly<Record<ChangeKind, readonly [singular: string, plural: string]>> = {
  'accept-invitation': ['invitation to accept', 'invitations to accept'],
  billing: ['billing update', 'billing updates'],
  'revoke-invitation': ['invitation to revoke', 'invitations to revoke'],
  'remove-channel': ['notification channel to remove', 'notification channels to remove'],
  'set-active': ['change of active organisation', 'changes of active organisation'],
};
const KINDS = Object.keys(KIND_NOUN) as ChangeKind[];

export function renderPlanDigest(plan: Plan, options: PlanDigestOptions): string {
  const { color } = options;
  const first = Math.max(0, options.firstChanges ?? DIGEST_FIRST_CHANGES);
  const bold = (s: string): string => paint(s, 'bold', color);
  const lines: string[] = [`${bold('orgform plan')} for ${terminalSafe(plan.baseUrl)}`, ''];

  if (plan.changes.length > 0) {
    lines.push(`orgform will perform ${plural(plan.changes.length, 'change')}:`, ...countLines(plan.changes, color), '');
    lines.push('The changes, the same change said once:', ...renderGroupedChangeLines(plan.changes, { color, maxGroups: first, maxSingles: first }), '');
    lines.push(
      'See every change with `orgform plan` (same files and options), or save them with `orgform plan --out FILE` and apply exactly those with `orgform apply FILE`.',
      '',
    );
  }

  if (plan.problems.length > 0) {
    lines.push(bold(problemsHeading(plan.problems.length)));
    for (const p of plan.problems.slice(0, DIGEST_FIRST_PROBLEMS)) {
      lines.push(`  ${paint('!', 'red', color)} ${terminalSafe(p.organisation ?? p.address)}: ${terminalSafe(p.message)}`);
    }
    if (plan.problems.length > DIGEST_FIRST_PROBLEMS) lines.push(`  … and ${plan.problems.length - DIGEST_FIRST_PROBLEMS} more (\`orgform plan\` lists them all).`);
    lines.push('');
  }

  lines.push(...closingLines(plan, bold));
  return lines.join('\n') + '\n';
}

/** `  ~ update  30000: 29999 billing updates, 1 change of active organisation`, one line per action present. */
function countLines(changes: readonly Change[], color: boolean): string[] {
  const byAction = new Map<Action, Map<ChangeKind, number>>();
  for (const change of changes) {
    const kinds = byAction.get(change.action) ?? new Map<ChangeKind, number>();
    kinds.set(change.kind, (kinds.get(change.kind) ?? 0) + 1);
    byAction.set(change.action, kinds);
  }
  const rows = ACTIONS.flatMap((action) => {
    const kinds = byAction.get(action);
    if (kinds === undefined) return [];
    const total = [...kinds.values()].reduce((a, b) => a + b, 0);
    const words = KINDS.flatMap((kind) => {
      const n = kinds.get(kind);
      return n === undefined ? [] : [`${n} ${KIND_NOUN[kind][n === 1 ? 0 : 1]}`];
    });
    return [{ action, total, words }];
  });
  const width = Math.max(...rows.map((r) => String(r.total).length));
  const actionWidth = Math.max(...rows.map((r) => r.action.length));
  return rows.map(({ action, total, words }) => {
    const { symbol, style } = ACTION_MARKER[action];
    return `  ${paint(symbol, style, color)} ${action.padEnd(actionWidth)}  ${String(total).padStart(width)}: ${words.join(', ')}`;
  });
}
