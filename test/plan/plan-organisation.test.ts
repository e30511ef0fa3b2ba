import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BILLING_FIELDS, type BillingDetails, type BillingField } from '../../src/model/billing.js';
import { ReadBillingChange } from '../../src/plan/plan-organisation.js';
import { dropDisplays, type Change } from '../../src/plan/types.js';
import { desiredOrg, desiredState, observedOrg, observedState, planFor } from '../support/plan-fixtures.js';

/** The change as an object literal would hold it: the display made once, and kept. */
function asLiteral(change: Change): Change {
  const { address, kind, action, organisation, declared, seen } = change;
  return { address, kind, action, organisation, declared, seen, display: { fields: change.display.fields ?? [] } } as Change;
}

const value = fc.constantFrom('a@acme.test', 'b@acme.test', 'cus_1', 'sub_1', 'x');
const declaredAndCurrent = fc.record({
  declared: fc.dictionary(fc.constantFrom(...BILLING_FIELDS), value, { minKeys: 1 }),
  current: fc.dictionary(fc.constantFrom(...BILLING_FIELDS), value),
});

function billingPlanned(declared: BillingDetails, current: Partial<Record<BillingField, string>>): Change | undefined {
  const plan = planFor(desiredState({ organisations: [desiredOrg({ slug: 'acme', billing: declared })] }), observedState({ organisations: [observedOrg({ slug: 'acme', billing: current })] }));
  return plan.changes[0];
}

describe('a billing change whose values were read', () => {
  it('is written as the object literal it stands for, byte for byte, whatever was declared and seen', () => {
    fc.assert(
      fc.property(declaredAndCurrent, ({ declared, current }) => {
        const change = billingPlanned(declared as BillingDetails, current);
        if (change === undefined) return;
        expect(change).toBeInstanceOf(ReadBillingChange);
        expect(JSON.stringify(change)).toBe(JSON.stringify(asLiteral(change)));
        expect(JSON.stringify([change], null, 2)).toBe(JSON.stringify([asLiteral(change)], null, 2));
      }),
    );
  });

  it('shows the declared fields that differ from what was seen, in field order, and no other', () => {
    const change = billingPlanned({ subscriptionID: 'sub_2', billingEmail: 'new@acme.test', customerID: 'cus_1' }, { billingEmail: 'old@acme.test', customerID: 'cus_1' });
    expect(change?.display.fields).toEqual([
      { field: 'billingEmail', before: 'old@acme.test', after: 'new@acme.test' },
      { field: 'subscriptionID', before: null, after: 'sub_2' },
    ]);
  });

  it('holds as its own properties only what apply reads, in the order of the literal', () => {
    const change = billingPlanned({ billingEmail: 'new@acme.test' }, { billingEmail: 'old@acme.test' })!;
    expect(Object.keys(change)).toEqual(['address', 'kind', 'action', 'organisation', 'declared', 'seen']);
    expect(structuredClone(change)).toEqual({
      address: 'organisations.acme.billing',
      kind: 'billing',
      action: 'update',
      organisation: { slug: 'acme', id: 'org_acme' },
      declared: { billingEmail: 'new@acme.test' },
      seen: { billingEmail: 'old@acme.test' },
    });
  });

  it('keeps no display: it is made each time it is read, and letting the displays go changes nothing apply reads', () => {
    const change = billingPlanned({ billingEmail: 'new@acme.test' }, { billingEmail: 'old@acme.test' })!;
    expect(change.display).not.toBe(change.display);
    const before = structuredClone(change);
    const [applicable] = dropDisplays([change]);
    expect(applicable).toBe(change);
    expect(structuredClone(change)).toEqual(before);
    expect(Object.keys(change)).not.toContain('display');
  });
});
