/**
 * The one way plan, apply and the state commands reach the state: `--state` if given, else
 * ORGFORM_STATE, else the default file (for plan and apply, `.orgform/state.json` beside the first
 * config file). A remote backend's module (and `pg` with it) is loaded only when its URL is used.
 */
import { hostname, userInfo } from 'node:os';
import { resolve } from 'node:path';
import { OrgformError } from '../errors.js';
import { describeEscape, findWorkTree } from '../work-tree.js';
import { openFileState } from './file-state.js';
import { journalLogPath } from './journal.js';
import { lockPathFor, type LockEnvironment } from './lock.js';
import { parseStateSpec, type StateSpec } from './parse-state-spec.js';
import type { LockRequest, StateBackend } from './state-backend.js';
import { DEFAULT_STATE_SETTINGS, stateSettings, type StateSettings } from './state-settings.js';
import type { CliIO } from '../cli-io.js';

export interface StateOptions {
  /** --state, as given. */
  state?: string;
  /** The journal file when neither --state nor ORGFORM_STATE names one. */
  defaultPath: string;
  cwd: string;
  /** ORGFORM_STATE, and a remote backend's credentials and lock settings (ORGFORM_STATE_*). */
  env: Record<string, string | undefined>;
  settings?: StateSettings;
  /** The file lock's view of this process (tests inject it). */
  lockEnvironment?: LockEnvironment;
  /** Aborted on an interrupt: a remote journal then writes what it holds at once. */
  signal?: AbortSignal;
  /** The time a lock says it was taken. */
  now?: () => number;
}

/** Where the state is: the option beats the environment, which beats the default file. */
export function stateSpecFor(options: Pick<StateOptions, 'state' | 'defaultPath' | 'cwd' | 'env'>): StateSpec {
  const given = options.state ?? (options.env.ORGFORM_STATE === '' ? undefined : options.env.ORGFORM_STATE);
  return parseStateSpec(given ?? options.defaultPath, options.cwd);
}

export async function openState(options: StateOptions): Promise<StateBackend> {
  const spec = stateSpecFor(options);
  const settings = options.settings ?? DEFAULT_STATE_SETTINGS;
  const describe = (command: string) => lockRequest(command, options);
  switch (spec.kind) {
    case 'file':
      await checkJournalPaths(spec.path, options.cwd);
      return openFileState(spec.path, options.lockEnvironment);
    case 'postgres': {
      const { openPostgresState } = await import('./postgres-state.js');
      return openPostgresState(spec, { settings, describe, ...(options.signal === undefined ? {} : { signal: options.signal }) });
    }
    case 'http': {
      const { openHttpState } = await import('./http-state.js');
      return openHttpState(spec, { settings, describe, env: options.env, ...(options.signal === undefined ? {} : { signal: options.signal }) });
    }
    default: {
      const unreachable: never = spec;
      throw new Error(`unknown state kind ${JSON.stringify(unreachable)}`);
    }
  }
}

/**
 * The journal, its log and its lock, where they are named in the working tree, must stay in it: the
 * default journal lies beside the configuration, where a pull request may have put a link in its
 * place (to a file it would read, or append to).
 */
async function checkJournalPaths(path: string, cwd: string): Promise<void> {
  const tree = await findWorkTree(cwd);
  for (const file of [path, journalLogPath(path), lockPathFor(path)]) {
    const away = await describeEscape(tree, file, 'stay', file);
    if (away !== undefined) {
      throw new OrgformError('STATE_INVALID', `The state journal cannot be used: ${away}. Nothing was read or written; remove the link, or keep the journal elsewhere with --state PATH.`);
    }
  }
}

/** What a remote lock says of its holder: the command, this process and, under CI, the job's address. */
function lockRequest(command: string, options: StateOptions): LockRequest {
  const env = options.env;
  const host = options.lockEnvironment?.host ?? hostname();
  let user = env.USER ?? env.USERNAME;
  if (user === undefined) {
    try {
      user = userInfo().username;
    } catch {
      user = 'unknown';
    }
  }
  const github = env.GITHUB_SERVER_URL && env.GITHUB_REPOSITORY && env.GITHUB_RUN_ID ? `${env.GITHUB_SERVER_URL}/${env.GITHUB_REPOSITORY}/actions/runs/${env.GITHUB_RUN_ID}` : undefined;
  const where = env.CI_JOB_URL || github;
  return {
    command,
    pid: options.lockEnvironment?.pid ?? process.pid,
    host,
    who: `${user}@${host}`,
    startedAt: new Date((options.now ?? options.lockEnvironment?.now ?? Date.now)()).toISOString(),
    ...(where ? { where } : {}),
  };
}

/** The state of the commands that take no config files (force-unlock, state …): the default is ./.orgform/state.json. */
export function openCommandState(state: string | undefined, io: CliIO): Promise<StateBackend> {
  return openState({
    ...(state === undefined ? {} : { state }),
    defaultPath: resolve(io.cwd, '.orgform', 'state.json'),
    cwd: io.cwd,
    env: io.env,
    settings: stateSettings(io),
    signal: io.signal,
    now: io.now,
  });
}
