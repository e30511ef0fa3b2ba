/**
 * The base URL as people paste it: the service's root, or the URL of its API copied from the
 * documentation, which the client would otherwise double into a 404.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { parseBaseUrl } from '../../src/api/base-url.js';
import { createClient, type OrganisationsClient } from '../../src/api/client.js';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';

const open: Array<{ emulator: Emulator; client: OrganisationsClient }> = [];

afterEach(async () => {
  for (const { emulator, client } of open.splice(0)) {
    await client.close();
    await emulator.stop();
  }
});

describe('parseBaseUrl', () => {
  it.each([
    ['https://api.example.com/api/organisations/v1', 'https://api.example.com/'],
    ['https://api.example.com/api/organisations/v1/', 'https://api.example.com/'],
    ['https://api.example.com/orgs/api/organisations/v1', 'https://api.example.com/orgs'],
    ['https://api.example.com/api/v2', 'https://api.example.com/'],
    ['https://api.example.com/gateway', 'https://api.example.com/gateway'],
  ])('takes %s as the service at %s', (raw, expected) => {
    expect(parseBaseUrl(raw).toString()).toBe(expected);
  });

  it('refuses the URL of an endpoint, naming the base URL to pass instead', () => {
    expect(() => parseBaseUrl('https://api.example.com/gw/api/organisations/v1/organisations')).toThrow(
      /address of an endpoint: orgform adds \/api\/organisations\/v1 and the rest itself\. Pass the service's base URL: --base-url https:\/\/api\.example\.com\/gw$/,
    );
  });
});

describe('a client given the URL of the API', () => {
  it('reads from the API root once, not from a doubled path', async () => {
    const emulator = await startEmulator({ slugDelayMs: 0 });
    const client = createClient({ baseUrl: `${emulator.url}/api/organisations/v1/`, token: 'demo-token' });
    open.push({ emulator, client });
    const slugs: string[] = [];
    for await (const org of client.listOrganisations()) slugs.push(org.slug);
    expect(slugs).toContain('acme');
    expect(emulator.requestLog.at(-1)?.path).toMatch(/^\/api\/organisations\/v1\/organisations(\?|$)/);
    expect(client.baseUrl.toString()).toBe(`${emulator.url}/`);
  });

  it('says to check the base URL when the listing is not where it points (a prefix too many)', async () => {
    const emulator = await startEmulator({ slugDelayMs: 0 });
    const client = createClient({ baseUrl: `${emulator.url}/api`, token: 'demo-token' });
    open.push({ emulator, client });
    const failure = client.listOrganisations()[Symbol.asyncIterator]().next();
    await expect(failure).rejects.toThrow(`The listing is not at ${emulator.url}/api/api/organisations/v1/organisations: check the base URL (orgform adds /api/organisations/v1 to it)`);
  });
});
