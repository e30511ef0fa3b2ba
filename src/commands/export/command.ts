/**
 * `orgform export`: the current state of every organisation you belong to, as an orgs.yaml; or,
 * with -f (or --diff, --write), the orgs.yaml you have brought in line with the service, in place.
 * The flags, checked before anything is read; the run is flow.ts, what it shows view.ts.
 */
import { clientOpener, type OpenClientSettings } from '../../api/connect/open-client.js';
import { jobCheckout, type CiSettings } from '../../ci/ci-settings.js';
import type { ConfigVariables } from '../../config/interpolate.js';
import { UsageError } from '../../errors.js';
import type { CliIO, ExitCode } from '../../cli-io.js';
import { runExport, runUpdate, type ExportInputs } from './flow.js';
import { createExportView } from './view.js';

import type { ConnectionFlags } from '../../api/connect/resolve-connection.js';

export interface ExportFlags extends ConnectionFlags {
  parallelism: number;
  out?: string;
  filter?: string;
  force?: boolean;
  /** The orgs.yaml files to update (default ./orgs.yaml once --diff or --write is given). */
  file?: string[];
  diff?: boolean;
  write?: boolean;
  detailedExitcode?: boolean;
}

/** The settings export reads (cli/settings.ts): where to connect and how, what `${ORGFORM_VAR_…}` in the -f files reads, and the CI job's checkout they must lie in. */
export interface ExportSettings extends Omit<OpenClientSettings, 'parallelism'> {
  config: ConfigVariables;
  ci: CiSettings;
}

export async function run(flags: ExportFlags, io: CliIO, _args: string[], settings: ExportSettings): Promise<ExitCode> {
  const update = flags.file !== undefined || flags.diff === true || flags.write === true;
  if (update) {
    if (flags.filter !== undefined) throw new UsageError('--filter does not combine with -f, --diff or --write: the file says which organisations to compare. Leave out --filter.');
    if (flags.out !== undefined && (flags.write || flags.diff)) throw new UsageError('--out writes the updated file elsewhere; it does not combine with --diff or --write. Use one of them.');
  } else if (flags.detailedExitcode) {
    throw new UsageError('--detailed-exitcode compares the service with a file: add -f FILE (and --diff or --write).');
  }
  const inputs: ExportInputs = {
    parallelism: flags.parallelism,
    ...(flags.out === undefined ? {} : { out: flags.out }),
    ...(flags.filter === undefined ? {} : { filter: flags.filter }),
    ...(flags.force === undefined ? {} : { force: flags.force }),
    ...(flags.file === undefined ? {} : { files: flags.file }),
    ...(flags.diff === undefined ? {} : { diff: flags.diff }),
    ...(flags.write === undefined ? {} : { write: flags.write }),
  };
  const deps = { cwd: io.cwd, configVariables: settings.config, checkout: jobCheckout(settings.ci), openClient: clientOpener({ ...settings, parallelism: flags.parallelism }, io) };
  const view = createExportView(io.stdout, io.stderr);
  const outcome = await (update ? runUpdate : runExport)(inputs, deps, view);
  return flags.detailedExitcode && outcome.drift ? 2 : 0;
}
