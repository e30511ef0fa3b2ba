import type { OutputStream } from '../cli-io.js';

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
