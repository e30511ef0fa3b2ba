import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PlanBuilder } from '../../src/plan/plan-builder.js';
import { BASE_URL, desiredOrg, desiredState, observedOrg, observedState, planFor } from '../support/plan-fixtures.js';

const desired = desiredState({
  activeOrganisation: 'mid',
  organisations: [
    desiredOrg({ slug: 'acme', billing: { billingEmail: 'new@acme.test' } }),
    desiredOrg({ slug: 'beta', revoke: ['inv_2', 'inv_1'] }),
    desiredOrg({ slug: 'done', revoke: ['inv_done'] }),
    desiredOrg({ slug: 'joining', accept: ['inv_j'], billing: { billingEmail: 'j@joining.test' } }),
    desiredOrg({ slug: 'mid' }),
    desiredOrg({ slug: 'same', billing: { billingEmail: 'same@same.test' } }),
    desiredOrg({ slug: 'zeta', removeChannels: ['ch_1'] }),
  ],
});
const observed = observedState({
  activeId: 'org_acme',
  organisations: [
    observedOrg({ slug: 'acme', billing: { billingEmail: 'old@acme.test' } }),
    observedOrg({ slug: 'beta' }),
    observedOrg({ slug: 'done' }),
    observedOrg({ slug: 'joining', member: false, billing: null }),
    observedOrg({ slug: 'mid' }),
    observedOrg({ slug: 'same', billing: { billingEmail: 'same@same.test' } }),
    observedOrg({ slug: 'zeta' }),
  ],
});
const journaled = ['revoke-invitation org_done inv_done'];
const isJournaled = (kind: string, id: string, target: string) => journaled.includes(`${kind} ${id} ${target}`);

function build(order: number[], recordObservations: boolean) {
  const builder = new PlanBuilder({ baseUrl: BASE_URL, isJournaled, activeSlug: 'mid', recordObservations });
  for (const i of order) {
    const d = desired.organisations[i]!;
    builder.add(d, observed.organisations.get(d.slug)!);
  }
  return builder.finish(observed);
}

describe('PlanBuilder', () => {
  it('builds the same plan in whatever order the organisations are read', () => {
    const expected = planFor(desired, observed, journaled);
    expect(expected.changes.map((c) => c.address)).toContain('activeOrganisation');
    fc.assert(
      fc.property(fc.shuffledSubarray([0, 1, 2, 3, 4, 5, 6], { minLength: 7, maxLength: 7 }), (order) => {
        expect(build(order, true)).toEqual(expected);
      }),
      { numRuns: 50 },
    );
  });

  it('records the observations of organisations with changes, the one to make active too, only when asked', () => {
    const recorded = build([6, 5, 4, 3, 2, 1, 0], true);
    expect(Object.keys(recorded.observed)).toEqual(['acme', 'beta', 'joining', 'mid', 'zeta']);
    const lean = build([6, 5, 4, 3, 2, 1, 0], false);
    expect(lean.observed).toEqual({});
    expect({ ...lean, observed: recorded.observed }).toEqual(recorded);
  });

  it('counts what needs nothing as unchanged and what the journal records done as journaled, sorted', () => {
    const plan = build([5, 2, 4, 0, 1, 3, 6], false);
    expect(plan.unchanged).toEqual(['done', 'mid', 'same']);
    expect(plan.journaled).toEqual(['organisations.done.invitations.revoke.inv_done']);
  });
});
