import { describe, expect, it } from 'vitest';
import { suggestKey } from '../../src/config/did-you-mean.js';

const BILLING = ['billingEmail', 'customerID', 'subscriptionID', 'platformID'];

describe('suggestKey', () => {
  it('suggests the key that differs only in case, as for the response spelling', () => {
    expect(suggestKey('customerId', BILLING)).toBe('customerID');
    expect(suggestKey('BILLINGEMAIL', BILLING)).toBe('billingEmail');
  });

  it('suggests the nearest key for a typo, a missing letter or swapped letters', () => {
    expect(suggestKey('bilingEmail', BILLING)).toBe('billingEmail');
    expect(suggestKey('invitation', ['invitations', 'id'])).toBe('invitations');
    expect(suggestKey('platfromID', BILLING)).toBe('platformID');
  });

  it('suggests nothing when no key is close', () => {
    expect(suggestKey('delete', ['remove'])).toBeUndefined();
    expect(suggestKey('x', ['id'])).toBeUndefined();
  });
});
