import { dirname, join, resolve } from 'node:path';
import type { DesiredState } from '../model/desired-state.js';

/** The journal lives beside the first config file, unless --state says where. */
export function statePathFor(state: string | undefined, desired: DesiredState | undefined, cwd: string): string {
  if (state !== undefined) return resolve(cwd, state);
  const first = desired?.files[0]?.path ?? 'orgs.yaml';
  return join(dirname(resolve(cwd, first)), '.orgform', 'state.json');
}
