import type { CliIO } from '../cli-io.js';

/**
 * Whether to colour what goes to `stream` (stdout unless said): `--no-color` first, as every
 * option beats the environment; then FORCE_COLOR as Node reads it (`0` or `false` turns colour off,
 * anything else on, even in a log: CI runners show colours but are not terminals); then NO_COLOR
 * (https://no-color.org: set and not empty); then a terminal that is not `TERM=dumb`.
 */
export function useColor(flags: { color?: boolean }, io: Pick<CliIO, 'env' | 'stdout'>, stream: CliIO['stdout'] = io.stdout): boolean {
  if (flags.color === false) return false;
  const force = io.env.FORCE_COLOR;
  if (force !== undefined) return force !== '0' && force.toLowerCase() !== 'false';
  if (io.env.NO_COLOR !== undefined && io.env.NO_COLOR !== '') return false;
  if (io.env.TERM === 'dumb') return false;
  return stream.isTTY === true;
}
