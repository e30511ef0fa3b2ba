import { describe, expect, it } from 'vitest';
import { resolveNextPage } from '../../src/api/next-page-url.js';

const current = new URL('https://api.example.com/api/organisations/v1/organisations?limit=500');

describe('resolveNextPage', () => {
  it.each([undefined, null, ''])('ends the listing on %j', (next) => {
    expect(resolveNextPage(next, current)).toEqual({ kind: 'end' });
  });

  it('sends an opaque string as the cursor parameter, keeping the other parameters', () => {
    const next = resolveNextPage('b2Zmc2V0OjUwMA', current);
    expect(next.kind === 'url' && next.url.toString()).toBe('https://api.example.com/api/organisations/v1/organisations?limit=500&cursor=b2Zmc2V0OjUwMA');
  });

  it('follows a relative link as given', () => {
    const next = resolveNextPage('/api/organisations/v1/organisations?cursor=abc&limit=100', current);
    expect(next.kind === 'url' && next.url.toString()).toBe('https://api.example.com/api/organisations/v1/organisations?cursor=abc&limit=100');
  });

  it('follows an absolute link on the same origin', () => {
    const next = resolveNextPage('https://api.example.com/api/organisations/v1/organisations?cursor=x', current);
    expect(next.kind).toBe('url');
  });

  it('refuses a link to another origin', () => {
    expect(resolveNextPage('https://evil.example/api/organisations/v1/organisations?cursor=x', current)).toMatchObject({ kind: 'refused' });
  });

  it('refuses a link to another path on the same origin', () => {
    expect(resolveNextPage('/api/organisations/v1/organisations/org_1', current)).toMatchObject({ kind: 'refused', reason: expect.stringContaining('another path') });
  });

  it('refuses a next that is not a string', () => {
    expect(resolveNextPage(42, current)).toMatchObject({ kind: 'refused' });
  });
});
