/**
 * The problems a pipeline shows next to the code, in one shape for every CI format: configuration
 * problems (always at a file position) and plan problems (an organisation that could not be read,
 * placed at its key in orgs.yaml when the desired state says where that is). GitHub annotations and
 * GitLab's Code Quality report are both rendered from these.
 */
import type { DesiredState, SourcePosition } from '../model/desired-state.js';
import type { ConfigProblem } from '../model/config-problem.js';
import type { ApplySummary } from '../executor/events.js';
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

/**
 * GitHub shows at most ten error annotations of a step; past that one warning says how many more
 * there are and where they all are, rather than ten failures standing for thousands.
 */
export const MAX_APPLY_FINDINGS = 10;

/** One error per failed change of an apply (its operation, status and the service's Error body), then how many more. */
export function applyFindings(summary: Pick<ApplySummary, 'notApplied'>, max: number = MAX_APPLY_FINDINGS): Finding[] {
  const failed = summary.notApplied.filter((r) => r.outcome === 'failed');
  const shown = failed.slice(0, max).map((r): Finding => {
    const f = r.failure;
    const status = f?.status === undefined ? '' : ` (HTTP ${f.status})`;
    const error = f === undefined ? 'no details were recorded' : f.serviceCode !== undefined ? `${f.serviceCode}: ${f.serviceMessage ?? ''}` : f.message;
    return { check: 'apply', level: 'error', message: `${r.address} failed${f === undefined ? '' : ` in ${f.operation}${status}`}: ${error}` };
  });
  if (failed.length > max) shown.push({ check: 'apply', level: 'warning', message: `…and ${failed.length - max} more failed changes: every failure is in the job summary and the log.` });
  return shown;
}
