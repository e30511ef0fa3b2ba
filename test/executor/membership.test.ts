import { describe, expect, it } from 'vitest';
import { SharedMembership, type Membership } from '../../src/executor/membership.js';

const MEMBER: Membership = { ok: true };
const NOT_LISTED: Membership = { ok: false, why: 'it is not among your organisations', checked: 'not-listed' };
const FAILED: Membership = { ok: false, why: 'HTTP 503', checked: 'failed' };

/** A SharedMembership over reads held until answered. */
function shared() {
  const reads: Array<(m: Membership) => void> = [];
  const membership = new SharedMembership(() => new Promise<Membership>((answer) => reads.push(answer)));
  return { reads, membership };
}

const settled = () => new Promise((resolve) => setImmediate(resolve));

describe('SharedMembership', () => {
  it('sends a read for a change that asks while none is on its way, even just after one answered', async () => {
    const { reads, membership } = shared();
    const first = membership.check();
    reads[0]!(MEMBER);
    expect(await first).toEqual(MEMBER);
    // You may have been removed since that read was sent: only a read sent after this 404 can tell.
    const later = membership.check();
    expect(reads).toHaveLength(2);
    reads[1]!(NOT_LISTED);
    expect(await later).toEqual(NOT_LISTED);
  });

  it('serves every change that asks while a read is on its way with the one read sent once it has answered', async () => {
    const { reads, membership } = shared();
    const sender = membership.check();
    const joined = [membership.check(), membership.check(), membership.check()];
    expect(reads).toHaveLength(1);
    reads[0]!(MEMBER);
    expect(await sender).toEqual(MEMBER);
    await settled();
    expect(reads).toHaveLength(2);
    reads[1]!(NOT_LISTED);
    expect(await Promise.all(joined)).toEqual([NOT_LISTED, NOT_LISTED, NOT_LISTED]);
  });

  it('shares a read that failed only with those that asked before it was sent', async () => {
    const { reads, membership } = shared();
    const sender = membership.check();
    const joined = [membership.check(), membership.check()];
    reads[0]!(MEMBER);
    await settled();
    reads[1]!(FAILED);
    expect(await Promise.all([sender, ...joined])).toEqual([MEMBER, FAILED, FAILED]);
    const later = membership.check();
    expect(reads).toHaveLength(3);
    reads[2]!(MEMBER);
    expect(await later).toEqual(MEMBER);
  });
});
