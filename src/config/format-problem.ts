import type { PositionedMessage } from './source-tree.js';
import type { ConfigProblem } from '../model/config-problem.js';

/**
 * The longest message a problem carries: far more than any orgform writes, so that a message that
 * quotes the file (a long value, a long name) is cut rather than copied whole into every annotation,
 * report and comment.
 */
export const MAX_PROBLEM_MESSAGE = 1_000;

/** A message placed in a file's tree, as a problem with that file; an oversized message is cut. */
export function toProblem(file: string, { pos, message }: PositionedMessage): ConfigProblem {
  const bounded = message.length <= MAX_PROBLEM_MESSAGE ? message : `${message.slice(0, MAX_PROBLEM_MESSAGE)}… (cut)`;
  return { file, line: pos.line, col: pos.col, message: bounded };
}

/** `FILE:LINE:COL: message`, the form editors and CI annotations jump to. */
export function formatProblem(p: ConfigProblem): string {
  return `${p.file}:${p.line}:${p.col}: ${p.message}`;
}

/**
 * By file (in the order the files were named; files not in `fileOrder` after them, by name), then
 * line, then column. Problems at the same place keep their order.
 */
export function sortProblems(problems: readonly ConfigProblem[], fileOrder: readonly string[]): ConfigProblem[] {
  const rank = new Map(fileOrder.map((file, i) => [file, i] as const));
  const rankOf = (file: string) => rank.get(file) ?? fileOrder.length;
  return problems.slice().sort(
    (a, b) =>
      rankOf(a.file) - rankOf(b.file) ||
      (a.file < b.file ? -1 : a.file > b.file ? 1 : 0) ||
      a.line - b.line ||
      a.col - b.col,
  );
}

export function countProblems(n: number): string {
  return n === 1 ? '1 problem' : `${n} problems`;
}
