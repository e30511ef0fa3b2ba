/**
 * The problems a pipeline shows next to the code, in one shape for every CI format: configuration
 * problems (always at a file position) and plan problems (an organisation that could not be read,
 * placed at its key in orgs.yaml when the desired state says where that is), as plan, apply and
 * validate word them. ci/ renders GitHub annotations and GitLab's Code Quality report from these;
 * apply's failures are its own view's (commands/apply/views/ci-apply-view.ts).
 */
import type { DesiredState, SourcePosition } from '../model/desired-state.js';
import type { ConfigProblem } from '../model/config-problem.js';
import type { Plan } from '../plan/types.js';

export type FindingCheck = 'config' | 'plan' | 'apply';

export interface Finding {
  check: FindingCheck;
  level: 'error' | 'warning';
  message: string;
  /** As the loader recorded it (the path given with -f, or inside a directory given with -f). */
  file?: string;
  line?: number;
  col?: number;
}

export function configFindings(problems: readonly ConfigProblem[]): Finding[] {
  return problems.map((p) => ({ check: 'config', level: 'error', message: p.message, file: p.file, line: p.line, col: p.col }));
}

/**
 * One finding per plan problem. Its message often starts with the same `FILE:LINE:COL: ` that the
 * finding carries as its position; that prefix is dropped so the annotation does not say it twice.
 */
export function planFindings(plan: Pick<Plan, 'problems'>, desired: Pick<DesiredState, 'organisations' | 'activeOrganisation'> | undefined): Finding[] {
  const bySlug = new Map((desired?.organisations ?? []).map((o) => [o.slug, o.source] as const));
  return plan.problems.map((p) => {
    const source: SourcePosition | undefined = p.organisation === null ? desired?.activeOrganisation?.source : bySlug.get(p.organisation);
    const subject = p.organisation === null ? 'activeOrganisation' : `organisation "${p.organisation}"`;
    if (source === undefined) return { check: 'plan', level: 'error', message: `${subject}: ${p.message}` };
    const prefix = `${source.file}:${source.line}:${source.col}: `;
    const message = p.message.startsWith(prefix) ? p.message.slice(prefix.length) : p.message;
    return { check: 'plan', level: 'error', message, file: source.file, line: source.line, col: source.col };
  });
}
