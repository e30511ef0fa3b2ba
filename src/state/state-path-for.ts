import { dirname, join, resolve } from 'node:path';
import type { DesiredState } from '../model/desired-state.js';

/**
 * The default file state, where neither --state nor ORGFORM_STATE says where (open-state.ts decides
 * that): `.orgform/state.json` beside the first configuration file given.
 */
export function statePathFor(desired: DesiredState | undefined, cwd: string): string {
  const first = desired?.files[0]?.path ?? 'orgs.yaml';
  return join(dirname(resolve(cwd, first)), '.orgform', 'state.json');
}
