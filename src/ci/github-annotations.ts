/**
 * GitHub Actions workflow commands: annotations (`::error file=…,line=…,col=…::message`), groups,
 * and the stop-commands guard, all pure. The runner reads commands from stdout and stderr alike
 * (actions/runner, ScriptHandler.cs: both streams go through one ActionCommandManager), so every
 * piece of outside text written here is escaped or guarded.
 *
 * Escaping follows the runner's own unescaping (actions/runner, ActionCommand.cs) and @actions/core:
 * data escapes `%`, `\r` and `\n`; property values also `:` and `,`, which would otherwise end the
 * value or the property list. Control characters other than those are made visible first, so that
 * service text cannot colour or rewrite the log either.
 */
import { terminalSafe } from '../text/ansi.js';

export type AnnotationLevel = 'error' | 'warning';

/**
 * How one of orgform's own command lines is issued: the CLI seals it (CliIO.workflowCommand), so
 * that the guard on its output lets it through while it neutralises every other line that could be
 * read as a command (ci/guard-workflow-commands.ts). Unsealed elsewhere.
 */
export type IssueCommand = (line: string) => string;
const AS_IS: IssueCommand = (line) => line;

export interface Annotation {
  level: AnnotationLevel;
  message: string;
  /** Shown above the message on the pull request; `orgform` unless said otherwise. */
  title?: string;
  /** Relative to the workspace, so that GitHub can place it on the diff. */
  file?: string;
  line?: number;
  col?: number;
}

/** The data part of a command (after the second `::`): a line break cannot end it early. */
export function escapeData(text: string): string {
  return text.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
}

/** A property value (`file=`, `title=`): nor can `:` end the properties or `,` start another. */
export function escapeProperty(text: string): string {
  return escapeData(text).replace(/:/g, '%3A').replace(/,/g, '%2C');
}

/** Tabs and escapes made visible; line breaks kept, for escapeData to encode. */
function visible(text: string): string {
  return text
    .split(/(\r\n|\r|\n)/)
    .map((part, i) => (i % 2 === 1 ? part : terminalSafe(part)))
    .join('');
}

/** One annotation, one line: `::error file=orgs.yaml,line=5,col=7,title=orgform::unknown key…`. */
export function formatAnnotation(annotation: Annotation): string {
  const props: string[] = [];
  if (annotation.file !== undefined) props.push(`file=${escapeProperty(visible(annotation.file))}`);
  if (annotation.file !== undefined && annotation.line !== undefined) props.push(`line=${positive(annotation.line)}`);
  if (annotation.file !== undefined && annotation.line !== undefined && annotation.col !== undefined) props.push(`col=${positive(annotation.col)}`);
  props.push(`title=${escapeProperty(visible(annotation.title ?? 'orgform'))}`);
  return `::${annotation.level} ${props.join(',')}::${escapeData(visible(annotation.message))}`;
}

function positive(n: number): number {
  return Number.isSafeInteger(n) && n > 0 ? n : 1;
}

/**
 * A token for `::stop-commands::`: the runner ignores every command until it sees `::TOKEN::`, so
 * the token must be one that no text in between can guess (the caller draws it at random).
 */
export function checkStopToken(token: string): string {
  if (!/^[A-Za-z0-9_-]{16,}$/.test(token)) throw new Error('a stop-commands token must be 16 or more letters, digits, - or _');
  return token;
}

/**
 * Text that may hold service or configuration text, made inert: between stop-commands and its
 * token the runner processes no command at all. Escaping alone would not do for the log, since
 * the runner's legacy parser finds `##[command]` anywhere in a line, not only at its start.
 */
export function guardText(text: string, stopToken: string, issue: IssueCommand = AS_IS): string {
  if (text === '') return '';
  const token = checkStopToken(stopToken);
  return `${issue(`::stop-commands::${token}`)}\n${text.endsWith('\n') ? text : `${text}\n`}${issue(`::${token}::`)}\n`;
}

/** A folded section of the log, titled, its content guarded. */
export function formatGroup(title: string, text: string, stopToken: string, issue: IssueCommand = AS_IS): string {
  return `${issue(`::group::${escapeData(terminalSafe(title))}`)}\n${guardText(text, stopToken, issue)}${issue('::endgroup::')}\n`;
}

/** The opening half of a group whose lines are written as they come (apply's per-change lines). */
export function openGroup(title: string, stopToken: string, issue: IssueCommand = AS_IS): string {
  return `${issue(`::group::${escapeData(terminalSafe(title))}`)}\n${issue(`::stop-commands::${checkStopToken(stopToken)}`)}\n`;
}

/** The closing half of openGroup's group. */
export function closeGroup(stopToken: string, issue: IssueCommand = AS_IS): string {
  return `${issue(`::${checkStopToken(stopToken)}::`)}\n${issue('::endgroup::')}\n`;
}
