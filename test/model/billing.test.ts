import { describe, expect, it } from 'vitest';
import { BILLING_FIELDS, differingFields, fullBillingUpdate } from '../../src/model/billing.js';

const NONE = { billingEmail: null, customerID: null, subscriptionID: null, platformID: null };

describe('fullBillingUpdate', () => {
  it('puts the declared fields over the values read and leaves out those the service holds none of', () => {
    expect(fullBillingUpdate({ billingEmail: 'new@acme.test' }, { ...NONE, customerID: 'cus_1', platformID: 'plat_1' })).toEqual({
      billingEmail: 'new@acme.test',
      customerID: 'cus_1',
      platformID: 'plat_1',
    });
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
