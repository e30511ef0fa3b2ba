import { describe, expect, it } from 'vitest';
import type { ChangeKind } from '../../src/model/change-kind.js';
import { isRecordedDone, JOURNALED_KINDS } from '../../src/plan/is-recorded-done.js';

const everything = () => true;
const change = (kind: ChangeKind, targetId?: string) => ({ kind, organisation: { slug: 'acme', id: 'org_acme' }, ...(targetId === undefined ? {} : { targetId }) });

describe('isRecordedDone', () => {
  it('lets the journal decide revocations and channel removals only, the kinds the interface cannot list', () => {
    expect([...JOURNALED_KINDS].sort()).toEqual(['remove-channel', 'revoke-invitation']);
    expect(isRecordedDone(change('revoke-invitation', 'inv_1'), everything)).toBe(true);
    expect(isRecordedDone(change('remove-channel', 'ch_1'), everything)).toBe(true);
  });

  it('never takes an accept, a billing or a set-active change as done because of the journal', () => {
    expect(isRecordedDone(change('accept-invitation', 'inv_1'), everything)).toBe(false);
    expect(isRecordedDone(change('billing'), everything)).toBe(false);
    expect(isRecordedDone(change('set-active'), everything)).toBe(false);
  });

  it('asks the journal by kind, organisation id and target id', () => {
    const asked: string[] = [];
    isRecordedDone(change('revoke-invitation', 'inv_1'), (kind, organisationId, targetId) => (asked.push(`${kind} ${organisationId} ${targetId}`), false));
    expect(asked).toEqual(['revoke-invitation org_acme inv_1']);
  });
});
