/**
 * The summary `export -f` writes to standard error, whatever goes to standard output (the patch,
 * or the file): what differs, value by value, and what was done about it, so that a person sees
 * the drift at a glance and a script's output stays the patch alone. Pure.
 */
import { terminalSafe } from '../text/ansi.js';
import { invisibleMark } from '../text/format-value.js';
import { quoteYamlString } from './format-yaml-string.js';
import type { ValueChange } from './update-document.js';

export interface UpdateOutcome {
  /** As given (relative to the working directory, or as read from a directory). */
  path: string;
  changes: readonly ValueChange[];
  warnings: readonly string[];
}

export interface DescribeOptions {
  /** What became of the changes: the files were rewritten, a patch printed, or the document printed (or written to --out). */
  mode: 'write' | 'diff' | 'print';
  /** Organisations you belong to that no file declares (left alone). */
  undeclared: number;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** A value as YAML would quote it, invisible and bidirectional characters escaped (`\u200B`, still valid YAML) and the value marked. */
function show(value: string): string {
  return terminalSafe(quoteYamlString(value)) + invisibleMark(value);
}

export function describeUpdates(outcomes: readonly UpdateOutcome[], options: DescribeOptions): string[] {
  const lines: string[] = [];
  for (const outcome of outcomes) {
    if (outcome.changes.length === 0) continue;
    lines.push(`${terminalSafe(outcome.path)}: ${plural(outcome.changes.length, 'value')} to bring in line with the service:`);
    for (const change of outcome.changes) lines.push(`  ~ ${terminalSafe(change.address)}: ${show(change.before)} -> ${show(change.after)}`);
  }
  const changed = outcomes.filter((o) => o.changes.length > 0);
  const warned = outcomes.reduce((n, o) => n + o.warnings.length, 0);
  const files = outcomes.map((o) => terminalSafe(o.path)).join(' ');
  if (changed.length === 0 && warned === 0) lines.push(`No differences: ${outcomes.length === 1 ? `${files} matches` : `the ${outcomes.length} files match`} the service.`);
  else if (changed.length > 0 && options.mode === 'write') lines.push(`Updated ${plural(changed.length, 'file')}. Check with: orgform plan${outcomes.map((o) => ` -f ${terminalSafe(o.path)}`).join('')}`);
  if (warned > 0) lines.push(`${plural(warned, 'difference')} left as ${warned === 1 ? 'it is' : 'they are'}: see the warnings above.`);
  if (options.undeclared > 0) {
    lines.push(`${plural(options.undeclared, 'organisation')} you belong to ${options.undeclared === 1 ? 'is' : 'are'} not declared in ${outcomes.length === 1 ? files : 'these files'} (left out; \`orgform export\` without -f writes them all).`);
  }
  return lines;
}
