import { describe, expect, it } from 'vitest';
import { serviceKeyOf } from '../../../src/api/connect/open-client.js';

describe('serviceKeyOf', () => {
  it('is the base URL without its trailing slash', () => {
    expect(serviceKeyOf({ baseUrl: new URL('https://orgs.example.test/') })).toBe('https://orgs.example.test');
    expect(serviceKeyOf({ baseUrl: new URL('https://orgs.example.test/base/') })).toBe('https://orgs.example.test/base');
  });
});
