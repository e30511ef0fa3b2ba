/**
 * The state of a plan or an apply: `--state`, else ORGFORM_STATE, else the journal file beside the
 * first config file. The flows' one seam onto state/open-state.ts.
 */
import type { NetworkSettings } from '../transport/proxy-settings.js';
import type { DesiredState } from '../model/desired-state.js';
import type { LockEnvironment } from './lock-environment.js';
import { lockRequest, openState } from './open-state.js';
import type { StateSettings } from './state-settings.js';
import type { LockRequest, Partition, StateBackend } from './state-backend.js';
import { statePathFor } from './state-path-for.js';

export interface StateWorld {
  cwd: string;
  /** ORGFORM_STATE and the numbers a remote state works by (batches, timeouts), as the CLI read them; defaults otherwise. */
  stateSettings?: StateSettings;
  /** The proxies and certificate authority of the network, for an HTTP backend. */
  network?: NetworkSettings;
  lockEnvironment?: LockEnvironment;
  /** An interrupt: a remote journal writes what it holds at once. */
  signal?: AbortSignal;
}

/**
 * `base`: where the config files' paths start, for the default beside the first of them (a saved
 * plan's directory, wherever apply runs from); --state and ORGFORM_STATE are the caller's, from `world.cwd`.
 */
export function openStateFor(state: string | undefined, desired: DesiredState | undefined, world: StateWorld, base: string = world.cwd): Promise<StateBackend> {
  return openState({
    ...(state === undefined ? {} : { state }),
    defaultPath: statePathFor(desired, base),
    cwd: world.cwd,
    ...(world.stateSettings === undefined ? {} : { settings: world.stateSettings }),
    ...(world.network === undefined ? {} : { network: world.network }),
    ...(world.lockEnvironment === undefined ? {} : { lockEnvironment: world.lockEnvironment }),
    ...(world.signal === undefined ? {} : { signal: world.signal }),
  });
}

/** What an apply's lock says of it (this process, under CI its job) and holds: its shard's partition, or the whole state. */
export function applyLockRequest(command: string, partition: Partition | undefined, world: StateWorld & { now?: () => number }): LockRequest {
  return lockRequest(command, { ...(world.stateSettings === undefined ? {} : { settings: world.stateSettings }), ...(world.lockEnvironment === undefined ? {} : { lockEnvironment: world.lockEnvironment }), ...(world.now === undefined ? {} : { now: world.now }) }, partition);
}
