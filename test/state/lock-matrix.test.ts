import { describe, expect, it } from 'vitest';
import { decideLock, lockRefusedError, type RefusalReason } from '../../src/state/lock-matrix.js';
import type { LockHolder, Partition } from '../../src/state/state-backend.js';

const holder = (id: string, partition?: Partition): LockHolder => ({ id, pid: 7, host: 'ci-3', command: 'orgform apply', startedAt: '2026-01-01T00:00:00.000Z', ...(partition === undefined ? {} : { partition }) });
const whole = holder('whole');
const shard = (index: number, count: number) => holder(`s${index}of${count}`, { index, count });

/** requested × held by a live run → take, or refuse naming the holder and why (docs/state.md's table). */
const MATRIX: ReadonlyArray<[string, Partition | undefined, LockHolder[], 'take' | [string, RefusalReason]]> = [
  ['the whole state, nothing held', undefined, [], 'take'],
  ['the whole state, the whole state held', undefined, [whole], ['whole', 'whole-state']],
  ['the whole state, a shard running', undefined, [shard(1, 2)], ['s1of2', 'shards-running']],
  ['shard 1/2, nothing held', { index: 1, count: 2 }, [], 'take'],
  ['shard 1/2, the whole state held', { index: 1, count: 2 }, [whole], ['whole', 'whole-state']],
  ['shard 1/2, shard 1/2 running', { index: 1, count: 2 }, [shard(1, 2)], ['s1of2', 'same-shard']],
  ['shard 1/2, shard 2/2 running', { index: 1, count: 2 }, [shard(2, 2)], 'take'],
  ['shard 3/4, shards 1, 2 and 4 of 4 running', { index: 3, count: 4 }, [shard(1, 4), shard(2, 4), shard(4, 4)], 'take'],
  ['shard 1/3, shard 1/2 running', { index: 1, count: 3 }, [shard(1, 2)], ['s1of2', 'other-count']],
  ['shard 2/3, shard 1/2 running', { index: 2, count: 3 }, [shard(1, 2)], ['s1of2', 'other-count']],
  ['shard 1/2, shard 2/2 and the same shard running: the same shard is named', { index: 1, count: 2 }, [shard(2, 2), shard(1, 2)], ['s1of2', 'same-shard']],
  ['shard 1/2, another count and the whole state: the whole state is named', { index: 1, count: 2 }, [shard(1, 3), whole], ['whole', 'whole-state']],
  ['shard 1/2, another count and the same shard: the same shard is named', { index: 1, count: 2 }, [shard(2, 3), shard(1, 2)], ['s1of2', 'same-shard']],
];

describe('decideLock: who may hold the state at once', () => {
  it.each(MATRIX)('%s', (_name, asked, live, expected) => {
    const decision = decideLock(live, asked);
    if (expected === 'take') expect(decision).toEqual({ take: true });
    else expect(decision).toMatchObject({ take: false, holder: { id: expected[0] }, why: expected[1] });
  });

  it('says in the refusal who holds the state, why that stands in the way, and how to break a lock left behind', () => {
    const message = (asked: Partition | undefined, live: LockHolder[]) => {
      const decision = decideLock(live, asked);
      if (decision.take) throw new Error('taken');
      return lockRefusedError('/repo/state.json', decision, asked, `orgform force-unlock ${decision.holder.id} --state /repo/state.json`).message;
    };
    expect(message({ index: 1, count: 2 }, [shard(1, 2)])).toBe(
      'The state at /repo/state.json is locked by pid 7 on ci-3, running "orgform apply" (shard 1/2) since 2026-01-01T00:00:00.000Z (lock ID s1of2): shard 1/2 runs already. Wait for that run to finish; if it is gone for good, run: orgform force-unlock s1of2 --state /repo/state.json',
    );
    expect(message({ index: 1, count: 3 }, [shard(2, 2)])).toContain('(lock ID s2of2): shard 2/2 runs, and shard 1/3 of another count would overlap it; run every shard with the same count. Wait for that run');
    expect(message(undefined, [shard(2, 2)])).toContain('(lock ID s2of2): shard 2/2 runs, and an apply without --shard would overlap every shard; let the shards finish first.');
    expect(message({ index: 1, count: 2 }, [whole])).toBe(
      'The state at /repo/state.json is locked by pid 7 on ci-3, running "orgform apply" since 2026-01-01T00:00:00.000Z (lock ID whole). Wait for that run to finish; if it is gone for good, run: orgform force-unlock whole --state /repo/state.json',
    );
  });
});
