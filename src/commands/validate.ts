/**
 * `orgform validate [-f PATH]...`: checks the config files offline. No network at all: nothing
 * here imports the client, and the loader reads only the files named.
 */
import { loadConfig } from '../config/load-config.js';
import { countProblems, formatProblem } from '../config/format-problem.js';
import { terminalSafe } from '../text/ansi.js';
import type { DesiredState } from '../model/desired-state.js';
import type { CliIO, ExitCode } from '../io.js';
import type { ReportSpec } from '../ci/pipeline-output.js';

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

export function summarise(state: DesiredState): string {
  const billing = state.organisations.filter((o) => o.billing !== undefined).length;
  const accepts = state.organisations.reduce((n, o) => n + o.invitations.accept.length, 0);
  const revocations = state.organisations.reduce((n, o) => n + o.invitations.revoke.length, 0);
  const removals = state.organisations.reduce((n, o) => n + o.notificationChannels.remove.length, 0);
  const changes = billing + accepts + revocations + removals;
  return (
    `Valid: ${plural(state.organisations.length, 'organisation')}, ${plural(changes, 'change')} declared ` +
    `(${billing} billing, ${plural(accepts, 'accept')}, ${plural(revocations, 'revocation')}, ${plural(removals, 'channel removal')}) ` +
    `in ${state.files.length} ${state.files.length === 1 ? 'file' : 'files'}.`
  );
}

export async function run(options: Record<string, unknown>, io: CliIO, _args: string[]): Promise<ExitCode> {
  const files = Array.isArray(options.file) ? options.file.map(String) : [];
  const reports = (Array.isArray(options.report) ? options.report : []) as ReportSpec[];
  const result = await loadConfig(files, { cwd: io.cwd, env: io.env });
  const { openPipelineOutput, writeReports } = await import('../ci/pipeline-output.js');
  const pipeline = await openPipelineOutput(io);
  const { configFindings } = await import('../ci/findings.js');
  const warned = configFindings(result.warnings).map((finding) => ({ ...finding, level: 'warning' as const }));
  const findings = [...(result.ok ? [] : configFindings(result.problems)), ...warned];
  await writeReports(reports, { findings, defaultFile: files[0] ?? 'orgs.yaml' }, io);
  // Messages quote values: invisible and bidirectional characters in them are shown as escapes.
  // The listings quote the file's own text: guarded, so that it cannot issue a workflow command.
  if (result.warnings.length > 0) {
    io.stderr.write(pipeline.frame.guard(result.warnings.map((w) => `${terminalSafe(formatProblem({ ...w, message: `warning: ${w.message}` }))}\n`).join('')));
  }
  if (result.ok) {
    await pipeline.annotate(warned, io.stderr);
    io.stdout.write(`${summarise(result.state)}\n`);
    return 0;
  }
  const lines = result.problems.map((p) => terminalSafe(formatProblem(p)));
  const fileCount = new Set(result.problems.map((p) => p.file)).size;
  io.stderr.write(pipeline.frame.guard(`${lines.join('\n')}\n${countProblems(result.problems.length)} in ${fileCount} ${fileCount === 1 ? 'file' : 'files'}.\n`));
  await pipeline.annotate(findings, io.stderr);
  const { renderConfigStepSummary } = await import('../ci/render-step-summary.js');
  await pipeline.appendStepSummary(() => renderConfigStepSummary('validate', result.problems), io.stderr);
  return 1;
}
