import { describe, expect, it } from 'vitest';
import { serviceKey } from '../../../src/api/connect/service-key.js';

describe('serviceKey', () => {
  it('is the base URL without its trailing slash', () => {
    expect(serviceKey({ baseUrl: new URL('https://orgs.example.test/') })).toBe('https://orgs.example.test');
    expect(serviceKey({ baseUrl: new URL('https://orgs.example.test/base/') })).toBe('https://orgs.example.test/base');
  });
});
