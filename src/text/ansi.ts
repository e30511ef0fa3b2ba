/**
 * The few ANSI styles the text views use, whether to use them (useColor), and a guard that keeps text from the service or the
 * configuration from writing escape sequences (or extra lines) to a terminal, or from hiding or
 * reordering what it says (invisible and bidirectional characters, model/invisible-characters.ts).
 */
import type { OutputStream } from '../cli-io.js';
import { escapeInvisibleCharacters } from '../model/invisible-characters.js';

export type Style = 'bold' | 'green' | 'yellow' | 'red' | 'dim';

const CODES: Readonly<Record<Style, readonly [number, number]>> = {
  bold: [1, 22],
  dim: [2, 22],
  green: [32, 39],
  yellow: [33, 39],
  red: [31, 39],
};

/** Wraps `text` in the style's codes when `color` is on; returns it unchanged otherwise. */
export function paint(text: string, style: Style, color: boolean): string {
  if (!color || text === '') return text;
  const [on, off] = CODES[style];
  return `\u001b[${on}m${text}\u001b[${off}m`;
}

/** What the environment says of colour (cli/output-settings.ts reads it). */
export interface ColorSettings {
  /** FORCE_COLOR as Node reads it: `0` or `false` off, anything else on, even in a log. */
  force?: boolean;
  /** NO_COLOR set and not empty (https://no-color.org). */
  noColor: boolean;
  /** TERM=dumb. */
  dumbTerminal: boolean;
}

/**
 * Whether to colour what goes to `stream`: `--no-color` first, as every option beats the
 * environment; then FORCE_COLOR (CI runners show colours but are not terminals); then NO_COLOR;
 * then a terminal that is not `TERM=dumb`.
 */
export function useColor(flags: { color?: boolean }, color: ColorSettings, stream: OutputStream): boolean {
  if (flags.color === false) return false;
  if (color.force !== undefined) return color.force;
  if (color.noColor || color.dumbTerminal) return false;
  return stream.isTTY === true;
}

// C0 controls (tab and newline included), DEL and C1 controls.
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g;

/**
 * Replaces control characters (ESC, CR, LF, …) by visible escapes such as `\u001b` and `\n`, and
 * invisible and bidirectional characters by escapes such as `\u200B` and `\u202E`: what a person
 * reads is then what is there, on one line, in the order it was written.
 */
export function terminalSafe(text: string): string {
  return escapeInvisibleCharacters(
    text.replace(CONTROL, (c) => {
      if (c === '\n') return '\\n';
      if (c === '\r') return '\\r';
      if (c === '\t') return '\\t';
      return `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;
    }),
  );
}

/** terminalSafe for text of several lines (an error and its details): each line made safe, the line breaks kept. */
export function terminalSafeLines(text: string): string {
  return text
    .split('\n')
    .map((line) => terminalSafe(line))
    .join('\n');
}
