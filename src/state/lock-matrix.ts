/**
 * Who may hold the state at once, decided in one place for every backend. A shard (`--shard i/n`)
 * holds the state shared and its own partition alone; an unsharded apply, and `state migrate`,
 * hold the whole state alone. So shards of one count run side by side, and nothing else overlaps
 * a live run: the same shard twice, an unsharded apply while shards run (or shards while one
 * runs), or a shard of another count (`1/3` while `1/2` runs: their partitions overlap). Reads
 * (plan, `state list`, `state pull`) take no lock at all.
 *
 * Pure: each backend gathers its live holders (a pid still running on this host, a session still
 * connected, a registration not broken) and enforces the decision atomically.
 */
import type { OrgformError } from '../errors.js';
import { stateLockedError, type LockHolder, type Partition } from './state-backend.js';

/** Why a lock is refused: what the live holder runs, against what is asked. */
export type RefusalReason =
  /** An unsharded apply or a migrate holds the whole state. */
  | 'whole-state'
  /** The whole state is asked while shards run. */
  | 'shards-running'
  /** The same shard runs already. */
  | 'same-shard'
  /** Shards of another count run: their partitions overlap this one. */
  | 'other-count';

export type LockDecision = { take: true } | { take: false; holder: LockHolder; why: RefusalReason };

/** Refusals in the order they are told when several holders stand in the way: the one that says most first. */
const PRECEDENCE: readonly RefusalReason[] = ['whole-state', 'same-shard', 'other-count', 'shards-running'];

/** Why `holder` stands in the way of a lock on `asked` (no partition: the whole state), or undefined if it does not. */
export function conflictOf(holder: LockHolder, asked: Partition | undefined): RefusalReason | undefined {
  const held = holder.partition;
  if (held === undefined) return 'whole-state';
  if (asked === undefined) return 'shards-running';
  if (held.count !== asked.count) return 'other-count';
  return held.index === asked.index ? 'same-shard' : undefined;
}

/** Whether a lock on `asked` may be taken while `live` hold the state; if not, which holder and why. */
export function decideLock(live: readonly LockHolder[], asked: Partition | undefined): LockDecision {
  let found: { holder: LockHolder; why: RefusalReason } | undefined;
  for (const holder of live) {
    const why = conflictOf(holder, asked);
    if (why !== undefined && (found === undefined || PRECEDENCE.indexOf(why) < PRECEDENCE.indexOf(found.why))) found = { holder, why };
  }
  return found === undefined ? { take: true } : { take: false, ...found };
}

/** `1/4`: a partition as `--shard` takes it. */
export function describePartition(partition: Partition): string {
  return `${partition.index}/${partition.count}`;
}

/** What a refusal means, in words (after "is locked by HOLDER: "), for `asked`. */
export function describeRefusal(why: RefusalReason, holder: LockHolder, asked: Partition | undefined): string {
  const held = holder.partition === undefined ? '' : describePartition(holder.partition);
  switch (why) {
    case 'whole-state':
      return 'it holds the whole state';
    case 'shards-running':
      return `shard ${held} runs, and an apply without --shard would overlap every shard; let the shards finish first`;
    case 'same-shard':
      return `shard ${held} runs already`;
    case 'other-count':
      return `shard ${held} runs, and shard ${asked === undefined ? '' : describePartition(asked)} of another count would overlap it; run every shard with the same count`;
    default: {
      const unreachable: never = why;
      throw new Error(`unknown refusal ${String(unreachable)}`);
    }
  }
}

/** The refusal of a lock on `asked`, naming the holder, why it stands in the way, and how to break its lock if it is gone for good. */
export function lockRefusedError(location: string, refusal: { holder: LockHolder; why: RefusalReason }, asked: Partition | undefined, unlockHint: string): OrgformError {
  return stateLockedError(location, refusal.holder, unlockHint, refusal.why === 'whole-state' ? undefined : describeRefusal(refusal.why, refusal.holder, asked));
}
