/**
 * The load and select steps: the config files read and validated (every problem, or none), then
 * narrowed by --target and --shard. A configuration with problems is an error that lists them all;
 * nothing is read from the service then.
 */
import type { ConfigVariables } from '../../config/interpolate.js';
import type { DesiredState } from '../../model/desired-state.js';
import { ConfigError } from '../../errors.js';
import { parseShard, selectOrganisations } from '../select-organisations.js';

export interface Selection {
  /** Config files or directories; none means ./orgs.yaml. */
  files: readonly string[];
  targets?: readonly string[];
  /** `i/n`, as given. */
  shard?: string;
}

/**
 * Where relative paths start, the variables that `${ORGFORM_VAR_…}` in the files reads (none when
 * not given), and in a CI job its checkout, whose tree the files must lie in.
 */
export interface FileWorld {
  cwd: string;
  configVariables?: ConfigVariables;
  checkout?: string;
}

export async function loadDesiredState(selection: Selection, world: FileWorld): Promise<{ desired: DesiredState; selected: DesiredState }> {
  // Loaded when needed: validation brings the schema's compiled validator with it.
  const { loadConfig, formatProblem } = await import('../../config/load-config.js');
  const files = selection.files.length > 0 ? [...selection.files] : ['orgs.yaml'];
  const result = await loadConfig(files, { cwd: world.cwd, variables: world.configVariables ?? {}, checkout: world.checkout });
  if (!result.ok) {
    const fileCount = new Set(result.problems.map((p) => p.file)).size;
    throw new ConfigError(
      `The configuration has ${result.problems.length} problem${result.problems.length === 1 ? '' : 's'} in ${fileCount} file${fileCount === 1 ? '' : 's'}; nothing was read from the service.`,
      result.problems.map(formatProblem),
      { problems: result.problems },
    );
  }
  const shard = selection.shard === undefined ? undefined : parseShard(selection.shard);
  return { desired: result.state, selected: selectOrganisations(result.state, { targets: [...(selection.targets ?? [])], shard }) };
}
