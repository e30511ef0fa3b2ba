import { describe, expect, it } from 'vitest';
import { SharedMembership, type Membership } from '../../src/executor/membership.js';

const MEMBER: Membership = { ok: true };
const NOT_LISTED: Membership = { ok: false, why: 'it is not among your organisations', checked: 'not-listed' };
const FAILED: Membership = { ok: false, why: 'HTTP 503', checked: 'failed' };

/** A SharedMembership over reads held until answered, on a clock the test sets; a read bound of 5,000 ms. */
function shared() {
  const clock = { now: 0 };
  const reads: Array<{ sentAt: number; answer: (m: Membership) => void }> = [];
  const membership = new SharedMembership(
    () => new Promise<Membership>((answer) => reads.push({ sentAt: clock.now, answer })),
    () => clock.now,
    5_000,
  );
  return { clock, reads, membership };
}

describe('SharedMembership', () => {
  it('serves every change that asks while a read is on its way with that one read', async () => {
    const { reads, membership } = shared();
    const asked = [membership.check(), membership.check(), membership.check()];
    expect(reads).toHaveLength(1);
    reads[0]!.answer(MEMBER);
    expect(await Promise.all(asked)).toEqual([MEMBER, MEMBER, MEMBER]);
  });

  it('serves later changes with a read the listing answered, within the read age bound of its sending, and reads again past it', async () => {
    const { clock, reads, membership } = shared();
    const first = membership.check();
    reads[0]!.answer(NOT_LISTED);
    await first;
    clock.now = 5_000;
    expect(await membership.check()).toEqual(NOT_LISTED);
    expect(reads).toHaveLength(1);
    clock.now = 5_001;
    const again = membership.check();
    expect(reads).toHaveLength(2);
    reads[1]!.answer(MEMBER);
    expect(await again).toEqual(MEMBER);
  });

  it('shares a read that failed only with those that asked while it was on its way', async () => {
    const { reads, membership } = shared();
    const asked = [membership.check(), membership.check()];
    reads[0]!.answer(FAILED);
    expect(await Promise.all(asked)).toEqual([FAILED, FAILED]);
    const later = membership.check();
    expect(reads).toHaveLength(2);
    reads[1]!.answer(MEMBER);
    expect(await later).toEqual(MEMBER);
  });

  it('has a change that joined a read answered too late read again, or take one sent since it asked; the one that sent it takes it', async () => {
    const { clock, reads, membership } = shared();
    const sender = membership.check();
    clock.now = 1_000;
    const joinedEarly = membership.check();
    const joinedToo = membership.check();
    clock.now = 6_000;
    reads[0]!.answer(MEMBER);
    // Sent at 0 and answered at 6,000: too old for those that joined it. The first to find so reads
    // again; the other takes that read, sent after it asked.
    await new Promise((resolve) => setImmediate(resolve));
    expect(reads).toHaveLength(2);
    expect(reads[1]!.sentAt).toBe(6_000);
    reads[1]!.answer(NOT_LISTED);
    expect(await Promise.all([joinedEarly, joinedToo])).toEqual([NOT_LISTED, NOT_LISTED]);
    expect(await sender).toEqual(MEMBER);
  });
});
