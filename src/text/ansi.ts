/**
 * The few ANSI styles the text views use, and a guard that keeps text from the service or the
 * configuration from writing escape sequences (or extra lines) to a terminal, or from hiding or
 * reordering what it says (invisible and bidirectional characters, model/invisible-characters.ts).
 */
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
