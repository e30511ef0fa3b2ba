/**
 * The one way plan, apply and the state commands reach the state: `--state` if given, else
 * ORGFORM_STATE, else the default file (for plan and apply, `.orgform/state.json` beside the first
 * config file). A remote backend's module (and `pg` with it) is loaded only when its URL is used.
 */
import { hostname, userInfo } from 'node:os';
import { resolve } from 'node:path';
import { OrgformError } from '../errors.js';
import { describeEscape, findWorkTree } from '../work-tree.js';
import { FileState } from './file/file-state.js';
import { StateFiles } from './file/state-files.js';
import { defaultLockEnvironment, type LockEnvironment } from './lock-environment.js';
import { parseStateSpec, type StateSpec } from './parse-state-spec.js';
import type { LockRequest, Partition, StateBackend } from './state-backend.js';
import { DEFAULT_STATE_SETTINGS, type StateSettings } from './state-settings.js';
import type { NetworkSettings } from '../transport/proxy-settings.js';

export interface StateOptions {
  /** --state, as given. */
  state?: string;
  /** The journal file when neither --state nor ORGFORM_STATE names one. */
  defaultPath: string;
  cwd: string;
  /** ORGFORM_STATE, a remote backend's credentials, lock requests, batches and timeout; defaults when not given. */
  settings?: StateSettings;
  /** The proxies and certificate authority an HTTP backend is reached through, as the service is. */
  network?: NetworkSettings;
  /** The file lock's view of this process (tests inject it). */
  lockEnvironment?: LockEnvironment;
  /** Aborted on an interrupt: a remote journal then writes what it holds at once. */
  signal?: AbortSignal;
  /** The time a lock says it was taken. */
  now?: () => number;
}

/** Where the state is: the option beats the environment, which beats the default file. */
export function stateSpecFor(options: Pick<StateOptions, 'state' | 'defaultPath' | 'cwd' | 'settings'>): StateSpec {
  return parseStateSpec(options.state ?? options.settings?.location ?? options.defaultPath, options.cwd);
}

export async function openState(options: StateOptions): Promise<StateBackend> {
  const spec = stateSpecFor(options);
  if (spec.kind === 'postgres') {
    const { PostgresState } = await import('./postgres/postgres-state.js');
    return new PostgresState(spec, { settings: options.settings ?? DEFAULT_STATE_SETTINGS, ...(options.signal === undefined ? {} : { signal: options.signal }) });
  }
  if (spec.kind === 'http') {
    const { TerraformHttpState } = await import('./http/terraform-http-state.js');
    const local = options.lockEnvironment ?? defaultLockEnvironment();
    return new TerraformHttpState(spec, {
      settings: options.settings ?? DEFAULT_STATE_SETTINGS,
      describe: (command) => lockRequest(command, options),
      network: options.network ?? {},
      // A registered run whose process ended on this host is gone, as a file lock's holder is.
      isGone: (holder) => holder.host === local.host && holder.pid !== undefined && !local.isAlive(holder.pid),
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    });
  }
  await checkJournalPaths(spec.path, options.cwd);
  return new FileState(spec.path, options.lockEnvironment ?? defaultLockEnvironment());
}

/**
 * The journal, its log and its lock, where they are named in the working tree, must stay in it: the
 * default journal lies beside the configuration, where a pull request may have put a link in its
 * place (to a file it would read, or append to).
 */
async function checkJournalPaths(path: string, cwd: string): Promise<void> {
  const tree = await findWorkTree(cwd);
  for (const file of StateFiles.namesBeside(path)) {
    const away = await describeEscape(tree, file, 'stay', file);
    if (away !== undefined) {
      throw new OrgformError('STATE_INVALID', `The state journal cannot be used: ${away}. Nothing was read or written; remove the link, or keep the journal elsewhere with --state PATH.`);
    }
  }
}

/** What a lock says of its holder: the command, this process and, under CI, the job's address; and what it holds (`partition`, else the whole state). */
export function lockRequest(command: string, options: Pick<StateOptions, 'lockEnvironment' | 'settings' | 'now'>, partition?: Partition): LockRequest {
  const host = options.lockEnvironment?.host ?? hostname();
  const owner = (options.settings ?? DEFAULT_STATE_SETTINGS).owner;
  let user = owner.user;
  if (user === undefined) {
    try {
      user = userInfo().username;
    } catch {
      user = 'unknown';
    }
  }
  const where = owner.jobUrl;
  return {
    command,
    pid: options.lockEnvironment?.pid ?? process.pid,
    host,
    who: `${user}@${host}`,
    startedAt: new Date((options.now ?? options.lockEnvironment?.now ?? Date.now)()).toISOString(),
    ...(where ? { where } : {}),
    ...(partition === undefined ? {} : { partition }),
  };
}

/** Where a command runs, and what it is told while it runs. */
export interface CommandWorld {
  cwd: string;
  signal: AbortSignal;
  now: () => number;
}

/** The settings of the state commands (cli/settings.ts): the state's own, and the network an HTTP backend is reached through. */
export interface StateCommandSettings {
  state: StateSettings;
  network: NetworkSettings;
}

/** The state of the commands that take no config files (force-unlock, state …): the default is ./.orgform/state.json. */
export function openCommandState(state: string | undefined, world: CommandWorld, settings: StateCommandSettings): Promise<StateBackend> {
  return openState({
    ...(state === undefined ? {} : { state }),
    defaultPath: resolve(world.cwd, '.orgform', 'state.json'),
    cwd: world.cwd,
    settings: settings.state,
    network: settings.network,
    signal: world.signal,
    now: world.now,
  });
}

/** What the lock of a state command (`state migrate`) says of it: this process, under CI its job; it holds the whole state. */
export function commandLockRequest(command: string, world: CommandWorld, settings: StateCommandSettings): LockRequest {
  return lockRequest(command, { settings: settings.state, now: world.now });
}
