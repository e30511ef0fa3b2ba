import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { digestEssence, digestPlan, essenceOf, parseDigest, shortDigest } from '../../src/plan/plan-digest.js';
import type { Plan } from '../../src/plan/types.js';
import { BASE_URL, billing, desiredOrg, desiredState, everyKindPlan, makePlan, observedOrg, observedState, planFor, removeChannel, revokeInvitation, setActive } from '../support/plan-fixtures.js';

const acme = (billingNow: Record<string, string | null>) =>
  planFor(
    desiredState({ organisations: [desiredOrg({ slug: 'acme', billing: { billingEmail: 'new@acme.test', customerID: 'cus_1' }, revoke: ['inv_2'] })] }),
    observedState({ organisations: [observedOrg({ slug: 'acme', billing: billingNow })] }),
  );

describe('digestPlan', () => {
  it('is sha256: and 64 hexadecimal digits, the same for the same plan every time', () => {
    const digest = digestPlan(everyKindPlan());
    expect(digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(digestPlan(everyKindPlan())).toBe(digest);
  });

  it('does not depend on the order the changes are in, nor on anything kept for display', () => {
    const plan = everyKindPlan();
    const shuffled = { ...plan, changes: [...plan.changes].reverse() };
    const redisplayed: Plan = {
      ...plan,
      changes: plan.changes.map((c) => ({ ...c, organisation: { ...c.organisation, slug: `${c.organisation.slug}` }, display: { note: 'other words' } })),
      unchanged: ['someone-else'],
      problems: [],
      journaled: [],
      observed: {},
    };
    expect(digestPlan(shuffled)).toBe(digestPlan(plan));
    expect(digestPlan(redisplayed)).toBe(digestPlan(plan));
  });

  it('is the same whatever order the organisations are read in', () => {
    const orgs = ['a', 'b', 'c', 'd'].map((slug) => desiredOrg({ slug, billing: { billingEmail: `${slug}@new.test` }, revoke: [`inv_${slug}`] }));
    const seen = orgs.map((o) => observedOrg({ slug: o.slug, billing: { billingEmail: `${o.slug}@old.test` } }));
    const digests = new Set(
      fc.sample(fc.shuffledSubarray([0, 1, 2, 3], { minLength: 4, maxLength: 4 }), 10).map((order) =>
        digestPlan(planFor(desiredState({ organisations: order.map((i) => orgs[i]!) }), observedState({ organisations: order.map((i) => seen[i]!) }))),
      ),
    );
    expect(digests.size).toBe(1);
  });

  it('changes with any value that would be sent: a declared value, the organisation, the invitation, the service', () => {
    const plan = everyKindPlan();
    const base = digestPlan(plan);
    const variants: Array<(p: Plan) => Plan> = [
      (p) => ({ ...p, changes: p.changes.map((c) => (c.kind === 'billing' ? { ...c, declared: { ...c.declared, billingEmail: 'other@acme.test' } } : c)) }),
      (p) => ({ ...p, changes: p.changes.map((c) => (c.kind === 'remove-channel' ? { ...c, targetId: 'ch_10' } : c)) }),
      (p) => ({ ...p, changes: p.changes.map((c) => (c.kind === 'accept-invitation' ? { ...c, organisation: { ...c.organisation, id: 'org_other' } } : c)) }),
      (p) => ({ ...p, baseUrl: 'https://staging.orgs.example.test' }),
      (p) => ({ ...p, changes: p.changes.slice(1) }),
      (p) => ({ ...p, changes: [...p.changes, removeChannel('globex', 'ch_10')] }),
    ];
    const digests = variants.map((variant) => digestPlan(variant(plan)));
    expect(new Set([base, ...digests]).size).toBe(variants.length + 1);
  });

  it('changes with the values a billing change was planned from, a declared field that needed nothing included', () => {
    const reviewed = acme({ billingEmail: 'old@acme.test', customerID: 'cus_1' });
    // By hand, between the review and the merge: the e-mail to another value, then the customer id (which needed nothing).
    const emailByHand = acme({ billingEmail: 'hand@acme.test', customerID: 'cus_1' });
    const customerByHand = acme({ billingEmail: 'old@acme.test', customerID: 'cus_hand' });
    expect(new Set([digestPlan(reviewed), digestPlan(emailByHand), digestPlan(customerByHand)]).size).toBe(3);
  });

  it('does not change with an undeclared billing field: apply carries it as it reads it, never from the plan', () => {
    const before = acme({ billingEmail: 'old@acme.test', customerID: 'cus_1', subscriptionID: 'sub_1' });
    const renewed = acme({ billingEmail: 'old@acme.test', customerID: 'cus_1', subscriptionID: 'sub_2' });
    expect(digestPlan(renewed)).toBe(digestPlan(before));
  });

  it('changes with the organisation that was active when the active organisation change was planned', () => {
    const plan = makePlan({ changes: [setActive('acme', 'globex')], observedActiveId: 'org_globex' });
    expect(digestPlan({ ...plan, observedActiveId: 'org_initech' })).not.toBe(digestPlan(plan));
    expect(digestPlan({ ...plan, observedActiveId: null })).not.toBe(digestPlan(plan));
    // Not for a plan without one: the active organisation is no part of other changes.
    const other = makePlan({ changes: [revokeInvitation('acme', 'inv_2')] });
    expect(digestPlan({ ...other, observedActiveId: 'org_globex' })).toBe(digestPlan(other));
  });

  it('tells apart billing that is read after an accept from billing read now', () => {
    const now = billing('acme', { billingEmail: [null, 'new@acme.test'] });
    const { seen: _seen, ...rest } = now;
    const after = { ...rest, knownAfter: 'organisations.acme.invitations.accept.inv_1' };
    expect(digestPlan(makePlan({ changes: [after] }))).not.toBe(digestPlan(makePlan({ changes: [now] })));
  });

  it('is one digest per essence: digestEssence of essenceOf is digestPlan, whatever order the essence lists', () => {
    const plan = everyKindPlan();
    const essence = essenceOf(plan);
    expect(essence.service).toBe(BASE_URL);
    expect(essence.changes.map((c) => c.address)).toEqual([...essence.changes.map((c) => c.address)].sort());
    expect(digestEssence({ ...essence, changes: [...essence.changes].reverse() })).toBe(digestPlan(plan));
  });
});

describe('parseDigest and shortDigest', () => {
  it('take the digest with or without sha256:, in any case, and nothing else', () => {
    const hex = 'ab'.repeat(32);
    expect(parseDigest(`sha256:${hex}`)).toBe(`sha256:${hex}`);
    expect(parseDigest(` ${hex.toUpperCase()} `)).toBe(`sha256:${hex}`);
    expect(parseDigest(`sha256:${hex.slice(1)}`)).toBeUndefined();
    expect(parseDigest(`sha256:${hex.slice(0, 12)}`)).toBeUndefined();
    expect(parseDigest(`md5:${hex}`)).toBeUndefined();
    expect(shortDigest(`sha256:${hex}`)).toBe(`sha256:${hex.slice(0, 12)}`);
  });
});
