/**
 * `orgform validate [-f PATH]...`: checks the config files offline. No network at all: nothing
 * here imports the client, and the loader reads only the files named.
 */
import { loadConfig } from '../config/load-config.js';
import { countProblems, formatProblem } from '../config/format-problem.js';
import { terminalSafe } from '../text/ansi.js';
import type { DesiredState } from '../model/desired-state.js';
import type { CliIO, ExitCode } from '../cli-io.js';
import { jobCheckout, type CiSettings } from '../ci/ci-settings.js';
import type { ReportSpec } from '../ci/pipeline-output.js';
import type { ConfigVariables } from '../config/interpolate.js';

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** `a`, `a and b`, `a, b and c`. */
function listed(parts: readonly string[]): string {
  return parts.length <= 1 ? (parts[0] ?? '') : `${parts.slice(0, -1).join(', ')} and ${parts.at(-1)}`;
}

/**
 * What the files declare, counted as declarations: validate reads no service, so it cannot know
 * which of them would change anything (a file that plans nothing still declares its billing).
 */
export function summarise(state: DesiredState): string {
  const count = (pick: (o: DesiredState['organisations'][number]) => number) => state.organisations.reduce((n, o) => n + pick(o), 0);
  const billing = count((o) => (o.billing === undefined ? 0 : 1));
  const accepts = count((o) => o.invitations.accept.length);
  const revocations = count((o) => o.invitations.revoke.length);
  const removals = count((o) => o.notificationChannels.remove.length);
  const declared = [
    ...(billing > 0 ? [`billing for ${billing}`] : []),
    ...(accepts > 0 ? [`${plural(accepts, 'invitation')} to accept`] : []),
    ...(revocations > 0 ? [`${plural(revocations, 'invitation')} to revoke`] : []),
    ...(removals > 0 ? [`${plural(removals, 'notification channel')} to remove`] : []),
    ...(state.activeOrganisation === undefined ? [] : [`${state.activeOrganisation.slug} as the active organisation`]),
  ];
  return (
    `Valid: ${plural(state.organisations.length, 'organisation')} in ${plural(state.files.length, 'file')}, ` +
    `declaring ${declared.length === 0 ? 'nothing beyond the organisations' : listed(declared)}. ` +
    'No service was read: orgform plan shows what would change.'
  );
}

export async function run(options: Record<string, unknown>, io: CliIO, _args: string[], settings: { ci: CiSettings; config: ConfigVariables }): Promise<ExitCode> {
  const files = Array.isArray(options.file) ? options.file.map(String) : [];
  const reports = (Array.isArray(options.report) ? options.report : []) as ReportSpec[];
  const result = await loadConfig(files, { cwd: io.cwd, variables: settings.config, checkout: jobCheckout(settings.ci) });
  const { openPipelineOutput } = await import('../ci/pipeline-output.js');
  const pipeline = await openPipelineOutput(io, settings.ci);
  const { configFindings } = await import('../text/findings.js');
  const warned = configFindings(result.warnings).map((finding) => ({ ...finding, level: 'warning' as const }));
  const findings = [...(result.ok ? [] : configFindings(result.problems)), ...warned];
  await pipeline.writeReports(reports, { findings, defaultFile: files[0] ?? 'orgs.yaml' });
  // Messages quote values: invisible and bidirectional characters in them are shown as escapes.
  // The listings quote the file's own text: guarded, so that it cannot issue a workflow command.
  if (result.warnings.length > 0) {
    io.stderr.write(pipeline.frame.guard(result.warnings.map((w) => `${terminalSafe(formatProblem({ ...w, message: `warning: ${w.message}` }))}\n`).join('')));
  }
  if (result.ok) {
    await pipeline.annotate(warned, io.stderr);
    io.stdout.write(`${terminalSafe(summarise(result.state))}\n`);
    return 0;
  }
  const lines = result.problems.map((p) => terminalSafe(formatProblem(p)));
  const fileCount = new Set(result.problems.map((p) => p.file)).size;
  io.stderr.write(pipeline.frame.guard(`${lines.join('\n')}\n${countProblems(result.problems.length)} in ${fileCount} ${fileCount === 1 ? 'file' : 'files'}.\n`));
  await pipeline.annotate(findings, io.stderr);
  const { renderConfigStepSummary } = await import('../text/step-summary.js');
  await pipeline.appendStepSummary(() => renderConfigStepSummary('validate', result.problems), io.stderr);
  return 1;
}
