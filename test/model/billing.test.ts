import { describe, expect, it } from 'vitest';
import { BILLING_FIELDS, billingRecord, decideBillingWrite, differingFields, fullBillingUpdate, seenOf } from '../../src/model/billing.js';

const NONE = { billingEmail: null, customerID: null, subscriptionID: null, platformID: null };

describe('fullBillingUpdate', () => {
  it('puts the declared fields over the values read and leaves out those the service holds none of', () => {
    expect(fullBillingUpdate({ billingEmail: 'new@acme.test' }, { ...NONE, customerID: 'cus_1', platformID: 'plat_1' })).toEqual({
      billingEmail: 'new@acme.test',
      customerID: 'cus_1',
      platformID: 'plat_1',
    });
  });

  it('never sends an empty string back: it is no value', () => {
    expect(fullBillingUpdate({ customerID: 'cus_2' }, { ...NONE, billingEmail: '' as string | null, platformID: 'plat_1' })).toEqual({ customerID: 'cus_2', platformID: 'plat_1' });
  });
});

describe('decideBillingWrite', () => {
  const declared = { billingEmail: 'new@acme.test' };
  const seen = seenOf(declared, { ...NONE, billingEmail: 'old@acme.test' });

  it('writes the declared fields over the undeclared ones as they are now, not as the plan saw them', () => {
    const now = { ...NONE, billingEmail: 'old@acme.test', customerID: 'cus_renewed', subscriptionID: 'sub_renewed' };
    expect(decideBillingWrite(declared, seen, now)).toEqual({ kind: 'write', body: { billingEmail: 'new@acme.test', customerID: 'cus_renewed', subscriptionID: 'sub_renewed' } });
  });

  it('is stale when a declared field changed since the plan to a value other than the declared one', () => {
    expect(decideBillingWrite(declared, seen, { ...NONE, billingEmail: 'someone@acme.test' })).toEqual({
      kind: 'stale',
      changed: [{ field: 'billingEmail', seen: 'old@acme.test', now: 'someone@acme.test', declared: 'new@acme.test' }],
    });
    expect(decideBillingWrite(declared, seen, NONE)).toMatchObject({ kind: 'stale', changed: [{ field: 'billingEmail', seen: 'old@acme.test', now: null }] });
  });

  it('is stale when a declared field that held its value when planned differs now: the plan showed no change to it', () => {
    const both = { billingEmail: 'new@acme.test', customerID: 'cus_1' };
    const planned = seenOf(both, { ...NONE, billingEmail: 'old@acme.test', customerID: 'cus_1' });
    expect(decideBillingWrite(both, planned, { ...NONE, billingEmail: 'old@acme.test', customerID: 'cus_9' })).toEqual({
      kind: 'stale',
      changed: [{ field: 'customerID', seen: 'cus_1', now: 'cus_9', declared: 'cus_1' }],
    });
  });

  it('has nothing to write when the declared values hold already, whatever the plan saw', () => {
    expect(decideBillingWrite(declared, seen, { ...NONE, billingEmail: 'new@acme.test', platformID: 'p' })).toEqual({ kind: 'current' });
  });

  it('writes what differs when a declared field now holds its value and another still differs as shown', () => {
    const both = { billingEmail: 'new@acme.test', customerID: 'cus_2' };
    const planned = seenOf(both, { ...NONE, billingEmail: 'old@acme.test', customerID: 'cus_1' });
    expect(decideBillingWrite(both, planned, { ...NONE, billingEmail: 'new@acme.test', customerID: 'cus_1' })).toEqual({ kind: 'write', body: { billingEmail: 'new@acme.test', customerID: 'cus_2' } });
  });

  it('checks nothing against the plan when it could see nothing (billing known only after an accept)', () => {
    expect(decideBillingWrite(declared, undefined, { ...NONE, billingEmail: 'anything@acme.test', customerID: 'cus_1' })).toEqual({
      kind: 'write',
      body: { billingEmail: 'new@acme.test', customerID: 'cus_1' },
    });
  });
});

describe('billingRecord', () => {
  it('holds the fields given a value, in field order, and no other', () => {
    const given: Record<string, string | null> = { platformID: 'plat_1', billingEmail: null };
    const record = billingRecord((field) => given[field]);
    expect(Object.entries(record)).toEqual([
      ['billingEmail', null],
      ['platformID', 'plat_1'],
    ]);
    // Each a fresh object: the shape it was copied from is never handed out.
    const again = billingRecord((field) => given[field]);
    again.billingEmail = 'x@example.com';
    expect(record.billingEmail).toBeNull();
    expect(billingRecord(() => undefined)).toEqual({});
  });
});

describe('differingFields', () => {
  it('names only the declared fields whose value differs', () => {
    expect(differingFields({ billingEmail: 'a@acme.test', customerID: 'cus_1' }, { ...NONE, billingEmail: 'a@acme.test', customerID: 'cus_0', platformID: 'x' })).toEqual(['customerID']);
  });
});

describe('BILLING_FIELDS', () => {
  it('are the four fields orgform manages, in the order files, plans and requests write them', () => {
    expect(BILLING_FIELDS).toEqual(['billingEmail', 'customerID', 'subscriptionID', 'platformID']);
  });
});
