import { describe, expect, it } from 'vitest';
import { observeBilling } from '../../src/api/observe-billing.js';

const NONE = { billingEmail: null, customerID: null, subscriptionID: null, platformID: null };

describe('observeBilling', () => {
  it('maps the response spelling (customerId, subscriptionId, platformId) to the request spelling', () => {
    expect(observeBilling({ billingEmail: 'a@acme.test', customerId: 'cus_1', subscriptionId: 'sub_1', platformId: 'plat_1', isSubscriptionActive: 1 }, false)).toEqual({
      known: true,
      values: { billingEmail: 'a@acme.test', customerID: 'cus_1', subscriptionID: 'sub_1', platformID: 'plat_1' },
    });
  });

  it('also reads the update spelling (customerID, subscriptionID, platformID) that some services answer with', () => {
    expect(observeBilling({ customerID: 'cus_1', subscriptionID: 'sub_1', platformID: 'plat_1', region: 'eu' }, true)).toEqual({
      known: true,
      values: { billingEmail: null, customerID: 'cus_1', subscriptionID: 'sub_1', platformID: 'plat_1' },
    });
  });

  it('reads a field that is absent or null as known to hold nothing', () => {
    expect(observeBilling({ customerId: null }, false)).toEqual({ known: true, values: NONE });
  });

  it('reads an empty string as no value, so that it is never sent back', () => {
    expect(observeBilling({ billingEmail: '', customerId: 'cus_1' }, true)).toEqual({ known: true, values: { ...NONE, customerID: 'cus_1' } });
    // Beside a value in the other spelling, the empty one says nothing against it.
    expect(observeBilling({ customerId: '', customerID: 'cus_1' }, true)).toEqual({ known: true, values: { ...NONE, customerID: 'cus_1' } });
  });

  it('marks the billing unknown, never empty, when a value is not a string', () => {
    expect(observeBilling({ customerId: 42 }, true)).toEqual({ known: false, reason: 'billing.customerId came back as a number, not a string' });
  });

  it('marks the billing unknown when the two spellings disagree', () => {
    expect(observeBilling({ customerId: 'cus_1', customerID: 'cus_2' }, true)).toMatchObject({ known: false });
  });

  it('marks the billing unknown when it is not an object', () => {
    expect(observeBilling('paid', true)).toEqual({ known: false, reason: 'the service sent a billing that is not an object (a string)' });
    expect(observeBilling([], true)).toMatchObject({ known: false });
  });

  it('reads no billing from a listing as unknown, and from GetOrganisation as none', () => {
    expect(observeBilling(undefined, false)).toEqual({ known: false, reason: 'the listing does not show billing' });
    expect(observeBilling(undefined, true)).toEqual({ known: true, values: NONE });
    expect(observeBilling(null, true)).toEqual({ known: true, values: NONE });
  });
});
