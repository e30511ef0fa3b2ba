import { describe, expect, it } from 'vitest';
import type { Outcome } from '../../src/executor/events.js';
import { OrganisationSteps, type Decided, type OrganisationChange } from '../../src/executor/organisation-steps.js';
import type { ChangeKind } from '../../src/model/change-kind.js';

const change = (index: number, kind: ChangeKind, target = ''): OrganisationChange => ({ index, kind, address: `organisations.acme.${kind}${target === '' ? '' : `.${target}`}` });

/**
 * Runs the steps of `changes` as apply's runner does: each step given ends as `sent` says (applied
 * by default), or as decided; records every step, and what a later set-active must end with.
 */
function drive(changes: OrganisationChange[], sent: Record<number, Outcome> = {}) {
  const steps = new OrganisationSteps(changes);
  const calls: Array<{ index: number; decided?: Decided }> = [];
  for (let step = steps.take(); step !== undefined; step = steps.take()) {
    calls.push(step.decided === undefined ? { index: step.index } : { index: step.index, decided: step.decided });
    steps.ended(step.index, step.decided?.outcome ?? sent[step.index] ?? 'applied');
  }
  return { calls, decided: steps.blocked() };
}

describe('OrganisationSteps', () => {
  it('hands out the changes after the accepts all at once, and none of them while an accept runs', () => {
    const steps = new OrganisationSteps([change(0, 'accept-invitation', 'inv_1'), change(1, 'billing'), change(2, 'revoke-invitation', 'inv_9'), change(3, 'remove-channel', 'ch_1')]);
    expect(steps.take()).toEqual({ index: 0, decided: undefined });
    expect(steps.take()).toBeUndefined();
    steps.ended(0, 'applied');
    const taken = [steps.take(), steps.take(), steps.take()];
    expect(taken.map((step) => step?.index)).toEqual([1, 2, 3]);
    expect(steps.take()).toBeUndefined();
    steps.ended(3, 'applied');
    steps.ended(1, 'failed');
    expect(steps.done).toBe(false);
    steps.ended(2, 'applied');
    expect(steps.done).toBe(true);
  });

  it('hands out one accept at a time', () => {
    const steps = new OrganisationSteps([change(0, 'accept-invitation', 'inv_1'), change(1, 'accept-invitation', 'inv_2'), change(2, 'billing')]);
    expect(steps.take()?.index).toBe(0);
    expect(steps.take()).toBeUndefined();
    steps.ended(0, 'failed');
    expect(steps.take()?.index).toBe(1);
    expect(steps.take()).toBeUndefined();
    steps.ended(1, 'failed');
    expect(steps.take()).toMatchObject({ index: 2, decided: { outcome: 'skipped' } });
  });

  it('tries the next accept when one fails, and the rest of the organisation follows the one that made you a member', () => {
    const { calls, decided } = drive([change(0, 'accept-invitation', 'inv_a_stale'), change(1, 'accept-invitation', 'inv_b_good'), change(2, 'billing')], { 0: 'failed' });
    expect(calls).toEqual([{ index: 0 }, { index: 1 }, { index: 2 }]);
    expect(decided).toBeUndefined();
  });

  it('once one accept made you a member, ends the accepts left already done without sending them', () => {
    const { calls } = drive([change(0, 'accept-invitation', 'inv_1'), change(1, 'accept-invitation', 'inv_2'), change(2, 'revoke-invitation', 'inv_9')]);
    expect(calls).toEqual([
      { index: 0 },
      { index: 1, decided: { outcome: 'already-done', reason: 'you are a member of the organisation now (organisations.acme.accept-invitation.inv_1); not sent' } },
      { index: 2 },
    ]);
  });

  it('counts an accept found already done as the membership too', () => {
    const { calls } = drive([change(0, 'accept-invitation', 'inv_1'), change(1, 'accept-invitation', 'inv_2')], { 0: 'already-done' });
    expect(calls[1]?.decided?.outcome).toBe('already-done');
  });

  it('skips what needs the membership only when every accept failed, naming each, and hands the same end to set-active', () => {
    const { calls, decided } = drive([change(0, 'accept-invitation', 'inv_1'), change(1, 'accept-invitation', 'inv_2'), change(2, 'billing'), change(3, 'remove-channel', 'ch_1')], { 0: 'failed', 1: 'failed' });
    const reason = 'depends on membership of the organisation, which no accept gave (organisations.acme.accept-invitation.inv_1, organisations.acme.accept-invitation.inv_2 failed)';
    expect(decided).toEqual({ outcome: 'skipped', reason });
    expect(calls.slice(2)).toEqual([
      { index: 2, decided: { outcome: 'skipped', reason } },
      { index: 3, decided: { outcome: 'skipped', reason } },
    ]);
  });

  it('skips nothing when an accept did not start (an interrupt): it might have made you a member', () => {
    const { calls, decided } = drive([change(0, 'accept-invitation', 'inv_1'), change(1, 'accept-invitation', 'inv_2'), change(2, 'billing')], { 0: 'failed', 1: 'not-started', 2: 'not-started' });
    expect(decided).toBeUndefined();
    expect(calls[2]).toEqual({ index: 2 });
  });

  it('runs the accepts before the rest whatever the order it is given, and the rest in that order', () => {
    const { calls } = drive([change(5, 'billing'), change(3, 'revoke-invitation', 'inv_9'), change(7, 'accept-invitation', 'inv_1')]);
    expect(calls.map((c) => c.index)).toEqual([7, 5, 3]);
  });

  it('without accepts runs every change and stands in no set-active’s way', () => {
    const { calls, decided } = drive([change(0, 'billing'), change(1, 'revoke-invitation', 'inv_9')], { 0: 'failed' });
    expect(calls).toEqual([{ index: 0 }, { index: 1 }]);
    expect(decided).toBeUndefined();
  });
});
