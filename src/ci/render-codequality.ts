/**
 * GitLab's Code Quality report (`artifacts:reports:codequality`), which puts each problem on the
 * merge request's diff and in its widget. The format is GitLab's subset of CodeClimate's
 * (docs.gitlab.com/ci/testing/code_quality/#code-quality-report-format): a JSON array of
 * `{description, check_name, fingerprint, severity, location: {path, lines: {begin}}}`, the path
 * relative to the repository without `./`, and no byte order mark. Pure.
 */
import { createHash } from 'node:crypto';
import { terminalSafe } from '../text/ansi.js';
import type { Finding, FindingCheck } from '../text/findings.js';
import { workspacePath, type WorkspaceRoots } from './workspace-path.js';

export type CodeQualitySeverity = 'info' | 'minor' | 'major' | 'critical' | 'blocker';

export interface CodeQualityIssue {
  description: string;
  check_name: string;
  fingerprint: string;
  severity: CodeQualitySeverity;
  location: { path: string; lines: { begin: number } };
}

export interface CodeQualityOptions extends WorkspaceRoots {
  /** Where a finding without a position is placed (GitLab requires a path): the first config file. */
  defaultFile: string;
}

/**
 * A configuration problem stops validate, plan and apply alike: a blocker. An organisation that
 * could not be read leaves only that organisation out of the plan, and a change that failed only
 * itself: critical. Warnings are minor.
 */
function severityOf(finding: Finding): CodeQualitySeverity {
  if (finding.level === 'warning') return 'minor';
  const bySeverity: Readonly<Record<FindingCheck, CodeQualitySeverity>> = { config: 'blocker', plan: 'critical', apply: 'critical' };
  return bySeverity[finding.check];
}

export function codeQualityIssues(findings: readonly Finding[], options: CodeQualityOptions): CodeQualityIssue[] {
  const seen = new Map<string, number>();
  return findings.map((finding) => {
    const path = workspacePath(finding.file ?? options.defaultFile, options);
    const checkName = `orgform/${finding.check}`;
    const description = terminalSafe(finding.message);
    // GitLab keeps one finding per fingerprint, and compares them between pipelines: the hash leaves
    // the line out (an edit above a problem must not make it "new"), and counts repeats instead.
    const key = `${checkName}\u0000${path}\u0000${description}`;
    const occurrence = seen.get(key) ?? 0;
    seen.set(key, occurrence + 1);
    const fingerprint = createHash('sha256').update(`${key}\u0000${occurrence}`).digest('hex').slice(0, 32);
    const begin = finding.file !== undefined && finding.line !== undefined && finding.line > 0 ? finding.line : 1;
    return { description, check_name: checkName, fingerprint, severity: severityOf(finding), location: { path, lines: { begin } } };
  });
}

/** The report's text: a JSON array (empty when nothing is wrong, so that GitLab sees it resolved). */
export function renderCodeQuality(findings: readonly Finding[], options: CodeQualityOptions): string {
  return `${JSON.stringify(codeQualityIssues(findings, options), null, 2)}\n`;
}
