import { describe, expect, it } from 'vitest';
import type { Outcome } from '../../src/executor/events.js';
import { runOrganisationChanges, type Decided, type OrganisationChange } from '../../src/executor/run-organisation-changes.js';
import type { ChangeKind } from '../../src/model/change-kind.js';

const change = (index: number, kind: ChangeKind, target = ''): OrganisationChange => ({ index, kind, address: `organisations.acme.${kind}${target === '' ? '' : `.${target}`}` });

/** A `run` that ends each change sent as `sent` says (applied by default), and records every call. */
function runner(sent: Record<number, Outcome> = {}) {
  const calls: Array<{ index: number; decided?: Decided }> = [];
  const run = async (index: number, decided?: Decided): Promise<Outcome> => {
    calls.push(decided === undefined ? { index } : { index, decided });
    return decided?.outcome ?? sent[index] ?? 'applied';
  };
  return { run, calls };
}

describe('runOrganisationChanges', () => {
  it('tries the next accept when one fails, and the rest of the organisation follows the one that made you a member', async () => {
    const { run, calls } = runner({ 0: 'failed' });
    const decided = await runOrganisationChanges([change(0, 'accept-invitation', 'inv_a_stale'), change(1, 'accept-invitation', 'inv_b_good'), change(2, 'billing')], run);
    expect(calls).toEqual([{ index: 0 }, { index: 1 }, { index: 2 }]);
    expect(decided).toBeUndefined();
  });

  it('once one accept made you a member, ends the accepts left already done without sending them', async () => {
    const { run, calls } = runner();
    await runOrganisationChanges([change(0, 'accept-invitation', 'inv_1'), change(1, 'accept-invitation', 'inv_2'), change(2, 'revoke-invitation', 'inv_9')], run);
    expect(calls).toEqual([
      { index: 0 },
      { index: 1, decided: { outcome: 'already-done', reason: 'you are a member of the organisation now (organisations.acme.accept-invitation.inv_1); not sent' } },
      { index: 2 },
    ]);
  });

  it('counts an accept found already done as the membership too', async () => {
    const { run, calls } = runner({ 0: 'already-done' });
    await runOrganisationChanges([change(0, 'accept-invitation', 'inv_1'), change(1, 'accept-invitation', 'inv_2')], run);
    expect(calls[1]?.decided?.outcome).toBe('already-done');
  });

  it('skips what needs the membership only when every accept failed, naming each, and hands the same end to set-active', async () => {
    const { run, calls } = runner({ 0: 'failed', 1: 'failed' });
    const decided = await runOrganisationChanges([change(0, 'accept-invitation', 'inv_1'), change(1, 'accept-invitation', 'inv_2'), change(2, 'billing'), change(3, 'remove-channel', 'ch_1')], run);
    const reason = 'depends on membership of the organisation, which no accept gave (organisations.acme.accept-invitation.inv_1, organisations.acme.accept-invitation.inv_2 failed)';
    expect(decided).toEqual({ outcome: 'skipped', reason });
    expect(calls.slice(2)).toEqual([
      { index: 2, decided: { outcome: 'skipped', reason } },
      { index: 3, decided: { outcome: 'skipped', reason } },
    ]);
  });

  it('skips nothing when an accept did not start (an interrupt): it might have made you a member', async () => {
    const { run, calls } = runner({ 0: 'failed', 1: 'not-started', 2: 'not-started' });
    const decided = await runOrganisationChanges([change(0, 'accept-invitation', 'inv_1'), change(1, 'accept-invitation', 'inv_2'), change(2, 'billing')], run);
    expect(decided).toBeUndefined();
    expect(calls[2]).toEqual({ index: 2 });
  });

  it('runs the accepts before the rest whatever the order it is given, and the rest in that order', async () => {
    const { run, calls } = runner();
    await runOrganisationChanges([change(5, 'billing'), change(3, 'revoke-invitation', 'inv_9'), change(7, 'accept-invitation', 'inv_1')], run);
    expect(calls.map((c) => c.index)).toEqual([7, 5, 3]);
  });

  it('without accepts runs every change and stands in no set-active’s way', async () => {
    const { run, calls } = runner({ 0: 'failed' });
    const decided = await runOrganisationChanges([change(0, 'billing'), change(1, 'revoke-invitation', 'inv_9')], run);
    expect(calls).toEqual([{ index: 0 }, { index: 1 }]);
    expect(decided).toBeUndefined();
  });
});
