import { describe, expect, it } from 'vitest';
import { toBillingUpdate } from '../../src/api/types.js';

describe('toBillingUpdate', () => {
  it('maps billing details to the request body in the request spelling and canonical order, leaving out fields not set', () => {
    const body = toBillingUpdate({ platformID: 'plat_1', billingEmail: 'a@acme.test', customerID: 'cus_1' });
    expect(body).toEqual({ billingEmail: 'a@acme.test', customerID: 'cus_1', platformID: 'plat_1' });
    expect(Object.keys(body)).toEqual(['billingEmail', 'customerID', 'platformID']);
  });

  it('sends an empty body for no details', () => {
    expect(toBillingUpdate({})).toEqual({});
  });
});
