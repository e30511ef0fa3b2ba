/**
 * What orgform adds for the CI service it runs in: in GitHub Actions (GITHUB_ACTIONS=true, no flag
 * needed) annotations for problems, folded groups for long output and the job summary
 * (GITHUB_STEP_SUMMARY); anywhere, the report files asked for with --report. The shell around the
 * pure views (ci/ and each command's views/): it draws the stop-commands token and writes files.
 * Views are loaded only when something asks for them, so a run outside CI pays nothing.
 */
import { randomBytes } from 'node:crypto';
import { appendFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Plan } from '../plan/types.js';
import { PLAIN_FRAME, type LogFrame } from '../text/log-frame.js';
import type { Finding } from '../text/findings.js';
import type { OutputStream } from '../cli-io.js';
import type { CiSettings } from './ci-settings.js';
import { writeFileAtomically } from '../state/write-file-atomically.js';
import { findWorkTree } from '../work-tree.js';

export type ReportKind = 'codequality' | 'gitlab-terraform';

/** One `--report KIND=FILE`. */
export interface ReportSpec {
  kind: ReportKind;
  path: string;
}

export interface PipelineOutput {
  /**
   * How the views frame text in the log: in GitHub, folded in groups (a plan under its verdict,
   * apply's lines under `Applying N changes`) and guarded; elsewhere unchanged.
   */
  frame: LogFrame;
  /** The findings as annotations on `stream` (GitHub only). */
  annotate(findings: readonly Finding[], stream: OutputStream): Promise<void>;
  /**
   * Appends the Markdown that `render` makes to $GITHUB_STEP_SUMMARY, when that is set (else
   * `render` is not even called). A failure is a warning on `stream` and nothing more.
   */
  appendStepSummary(render: () => string | Promise<string>, stream: OutputStream): Promise<void>;
  /**
   * Writes each --report file whole (temp file and rename). Paths inside the report are relative to
   * GitLab's CI_PROJECT_DIR, else the working directory. A report that cannot be written is an
   * error, as for --out: it was asked for by name.
   */
  writeReports(reports: readonly ReportSpec[], content: ReportContent): Promise<void>;
}

/** Where the command runs, and the sealing of orgform's own command lines (set by guardWorkflowCommands). */
export interface PipelineWorld {
  cwd: string;
  workflowCommand?: (line: string) => string;
}

export async function openPipelineOutput(io: PipelineWorld, ci: CiSettings): Promise<PipelineOutput> {
  const gh = ci.githubActions ? await import('./github-annotations.js') : undefined;
  // Unguessable, so that guarded text cannot end the guard by naming it.
  const token = randomBytes(16).toString('hex');
  const root = ci.githubWorkspace ?? io.cwd;
  // orgform's own command lines, sealed so that the guard on the streams lets them through (every
  // other line that could be read as a command is neutralised there: ci/guard-workflow-commands.ts).
  const issue = io.workflowCommand ?? ((line: string) => line);

  const warn = (stream: OutputStream, message: string) => {
    stream.write(gh ? `${issue(gh.formatAnnotation({ level: 'warning', message }))}\n` : `Warning: ${message}\n`);
  };

  return {
    frame: gh
      ? {
          fold: (title, text) => gh.formatGroup(title, text, token, issue),
          open: (title) => gh.openGroup(title, token, issue),
          close: () => gh.closeGroup(token, issue),
          guard: (text) => gh.guardText(text, token, issue),
        }
      : PLAIN_FRAME,
    async annotate(findings, stream) {
      if (!gh || findings.length === 0) return;
      const { workspacePath } = await import('./workspace-path.js');
      const lines = findings.map((f) =>
        issue(
          gh.formatAnnotation({
            level: f.level,
            message: f.message,
            ...(f.file === undefined ? {} : { file: workspacePath(f.file, { cwd: io.cwd, root }), line: f.line, col: f.col }),
          }),
        ),
      );
      stream.write(`${lines.join('\n')}\n`);
    },
    async appendStepSummary(render, stream) {
      const path = ci.githubStepSummary;
      if (path === undefined) return;
      const markdown = await render();
      try {
        // Appended, never replaced: other steps' summaries share the file.
        await appendFile(resolve(io.cwd, path), `${markdown}\n`, 'utf8');
      } catch (err) {
        const reason = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
        warn(stream, `Could not append the job summary to GITHUB_STEP_SUMMARY (${path}): ${reason}. Nothing else is affected.`);
      }
    },
    writeReports: (reports, content) => writeReports(reports, content, { cwd: io.cwd, root: ci.gitlabProjectDir ?? io.cwd }),
  };
}

export interface ReportContent {
  findings: readonly Finding[];
  /** Absent when there is no plan (the configuration could not be loaded): no counts to report. */
  plan?: Pick<Plan, 'changes'>;
  /** Where a finding without a position is placed: the first config file. */
  defaultFile: string;
}

async function writeReports(reports: readonly ReportSpec[], content: ReportContent, io: { cwd: string; root: string }): Promise<void> {
  const tree = reports.length === 0 ? undefined : await findWorkTree(io.cwd);
  for (const report of reports) {
    let text: string;
    switch (report.kind) {
      case 'codequality': {
        const { renderCodeQuality } = await import('./render-codequality.js');
        text = renderCodeQuality(content.findings, { cwd: io.cwd, root: io.root, defaultFile: content.defaultFile });
        break;
      }
      case 'gitlab-terraform': {
        if (content.plan === undefined) continue;
        const { renderGitlabTerraform } = await import('./render-gitlab-terraform.js');
        text = renderGitlabTerraform(content.plan);
        break;
      }
      default: {
        const unreachable: never = report.kind;
        throw new Error(`unknown report ${String(unreachable)}`);
      }
    }
    await writeFileAtomically(resolve(io.cwd, report.path), text, { shown: report.path, option: '--report', tree: tree! });
  }
}
