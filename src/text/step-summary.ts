/**
 * The job summary: Markdown that GitHub shows on the run's page when a step appends it to
 * $GITHUB_STEP_SUMMARY (ci/pipeline-output.ts appends; each command's CI view says what). Here its
 * shape, shared by plan's and apply's: lists of organisations capped ("…and N more"), so that a bulk
 * plan of 10,000 organisations does not bury the counts, and the whole within a quarter of GitHub's
 * 1 MiB (a step may run plan and apply); and the summary of a run stopped by its configuration,
 * which plan, apply and validate write alike. Built as lines of Markdown (markdown-escape.ts):
 * outside text cannot get in unescaped. Pure.
 */
import type { ConfigProblem } from '../model/config-problem.js';
import { plural } from './format-value.js';
import { codeSpan, joinMarkdown, md, type Markdown } from './markdown-escape.js';

export interface StepSummaryOptions {
  /** Organisations (and problems) named before "…and N more". */
  maxOrganisations?: number;
  /** The most UTF-8 bytes the summary may take. */
  maxBytes?: number;
}

export const DEFAULT_SUMMARY_ORGANISATIONS = 50;
export const DEFAULT_SUMMARY_BYTES = 256 * 1024;

/** An empty line between the summary's blocks. */
export const BLANK = md``;

/**
 * The summary of a run stopped by its configuration (plan, apply or validate): without it a broken
 * orgs.yaml left the run's page blank, and the problems only in the log and the annotations (which
 * GitHub caps at ten errors a step).
 */
export function renderConfigStepSummary(command: string, problems: readonly ConfigProblem[], options: StepSummaryOptions = {}): string {
  const cap = options.maxOrganisations ?? DEFAULT_SUMMARY_ORGANISATIONS;
  const files = new Set(problems.map((p) => p.file)).size;
  const items = problems.map((p) => md`- ${codeSpan(`${p.file}:${p.line}:${p.col}`)}: ${p.message}`);
  const out = [
    md`### orgform ${command}`,
    BLANK,
    md`**The configuration has ${plural(problems.length, 'problem')} in ${plural(files, 'file')}; nothing was read from or sent to the service.** Fix ${problems.length === 1 ? 'it' : 'them'} and run again; \`orgform validate\` checks the files alone.`,
    BLANK,
    ...capped(items, cap),
    BLANK,
  ];
  return fitBytes(out, options.maxBytes ?? DEFAULT_SUMMARY_BYTES);
}

/** At most `cap` of the items, then how many more of `total` there are (the items may be only the first of them). */
export function capped(items: readonly Markdown[], cap: number, total: number = items.length): Markdown[] {
  const shown = items.slice(0, cap);
  return shown.length >= total ? shown : [...shown, md`- …and ${total - shown.length} more`];
}

export function bytes(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

/** The lines joined; cut at the last whole line under the budget should the caps not have been enough. */
export function fitBytes(lines: readonly Markdown[], maxBytes: number): string {
  const text = joinMarkdown(lines, md`\n`).text + '\n';
  if (bytes(text) <= maxBytes) return text;
  let kept = '';
  let size = 0;
  for (const line of lines) {
    size += bytes(line.text) + 1;
    if (size > maxBytes - 64) break;
    kept += `${line.text}\n`;
  }
  return `${kept}\n_…cut to stay under GitHub's summary limit; see the job log._\n`;
}
