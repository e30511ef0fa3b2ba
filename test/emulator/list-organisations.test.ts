import { describe, expect, it } from 'vitest';
import type { OrganisationList } from '../../src/api/types.js';
import { generateEmulatorData } from '../../src/emulator/generate-emulator-data.js';
import { callJson, OTHER, ORG_API, useEmulator } from './emulator-test-kit.js';

const LIST = `${ORG_API}/organisations`;

async function collectAll(emulator: Awaited<ReturnType<typeof useEmulator>>, first: string) {
  const seen: string[] = [];
  let path: string | undefined = first;
  let pages = 0;
  while (path !== undefined) {
    const { status, body }: { status: number; body: OrganisationList } = await callJson<OrganisationList>(emulator, path);
    expect(status).toBe(200);
    seen.push(...body.organisations.map((o) => o.id));
    pages += 1;
    path = body.next === undefined ? undefined : `${LIST}?cursor=${encodeURIComponent(body.next)}&limit=7`;
  }
  return { seen, pages };
}

describe('GetOrganisations', () => {
  it('lists only the organisations the user is a member of, the active one first, then by slug', async () => {
    const emulator = await useEmulator();
    const { status, body } = await callJson<OrganisationList>(emulator, LIST);
    expect(status).toBe(200);
    expect(body.organisations.map((o) => o.slug)).toEqual(['initech', 'acme', 'hooli-eu', 'stark-industries', 'umbrella']);
    expect(body.totalCount).toBe(5);
    expect(body).not.toHaveProperty('next');
    expect(body).not.toHaveProperty('prev');
  });

  it('answers every organisation with its full billing object in the response spelling', async () => {
    const emulator = await useEmulator();
    const { body } = await callJson<OrganisationList>(emulator, LIST);
    const acme = body.organisations.find((o) => o.slug === 'acme');
    expect(acme?.billing).toMatchObject({ customerId: 'cus_acme', subscriptionId: 'sub_acme', platformId: 'plat_acme' });
    expect(acme?.billing).not.toHaveProperty('customerID');
  });

  it('puts the newly activated organisation first after SetActiveOrganisation', async () => {
    const emulator = await useEmulator();
    await callJson(emulator, `${ORG_API}/organisations/org_umbrella/active`, { method: 'PUT' });
    const { body } = await callJson<OrganisationList>(emulator, `${LIST}?limit=2`);
    expect(body.organisations.map((o) => o.slug)).toEqual(['umbrella', 'acme']);
  });

  it('filters case-insensitively on display name and on slug, sorted by slug without the active one first', async () => {
    const emulator = await useEmulator();
    const byName = await callJson<OrganisationList>(emulator, `${LIST}?filter=INDUSTRIES`);
    expect(byName.body.organisations.map((o) => o.slug)).toEqual(['stark-industries']);
    const bySlug = await callJson<OrganisationList>(emulator, `${LIST}?filter=${encodeURIComponent('HOOLI-')}`);
    expect(bySlug.body.organisations.map((o) => o.id)).toEqual(['org:hooli/eu']);
    const broad = await callJson<OrganisationList>(emulator, `${LIST}?filter=c`);
    expect(broad.body.organisations.map((o) => o.slug)).toEqual(['acme', 'initech', 'umbrella']);
    expect(broad.body.totalCount).toBe(3);
  });

  it('shows another user only that user’s organisations', async () => {
    const emulator = await useEmulator();
    const { body } = await callJson<OrganisationList>(emulator, LIST, { token: OTHER });
    expect(body.organisations.map((o) => o.slug)).toEqual(['globex', 'acme']);
  });

  it('covers every organisation exactly once along a cursor chain', async () => {
    const emulator = await useEmulator({ data: generateEmulatorData({ organisations: 100 }) });
    emulator.store.putUser({ ...emulator.store.dump().users[0]!, active: 'org_00050' });
    const { seen, pages } = await collectAll(emulator, `${LIST}?limit=7`);
    expect(pages).toBe(15);
    expect(seen[0]).toBe('org_00050');
    expect(new Set(seen).size).toBe(100);
    expect(seen).toHaveLength(100);
  });

  it('covers every match exactly once along a filtered chain, the filter carried by the cursor', async () => {
    const emulator = await useEmulator({ data: generateEmulatorData({ organisations: 60 }) });
    const { seen } = await collectAll(emulator, `${LIST}?limit=7&filter=ORG-0000`);
    expect(seen).toEqual(['org_00001', 'org_00002', 'org_00003', 'org_00004', 'org_00005', 'org_00006', 'org_00007', 'org_00008', 'org_00009']);
  });

  it('walks back with prev to the first page, headed by the active organisation', async () => {
    const emulator = await useEmulator();
    const first = await callJson<OrganisationList>(emulator, `${LIST}?limit=2`);
    const second = await callJson<OrganisationList>(emulator, `${LIST}?limit=2&cursor=${encodeURIComponent(first.body.next!)}`);
    expect(second.body.organisations.map((o) => o.slug)).toEqual(['hooli-eu', 'stark-industries']);
    expect(second.body.prev).toBeTypeOf('string');
    const back = await callJson<OrganisationList>(emulator, `${LIST}?limit=2&cursor=${encodeURIComponent(second.body.prev!)}`);
    expect(back.body.organisations.map((o) => o.slug)).toEqual(['initech', 'acme']);
    expect(back.body).not.toHaveProperty('prev');
  });

  it('answers at most the default of 50 per page and honours limits from 1 to 500', async () => {
    const emulator = await useEmulator({ data: generateEmulatorData({ organisations: 600 }) });
    expect((await callJson<OrganisationList>(emulator, LIST)).body.organisations).toHaveLength(50);
    expect((await callJson<OrganisationList>(emulator, `${LIST}?limit=1`)).body.organisations).toHaveLength(1);
    const max = await callJson<OrganisationList>(emulator, `${LIST}?limit=500`);
    expect(max.body.organisations).toHaveLength(500);
    expect(max.body.totalCount).toBe(600);
  });

  it.each(['0', '501', '-1', '2.5', 'ten', ''])('answers 400 invalid_request to limit=%s', async (limit) => {
    const emulator = await useEmulator();
    const { status, body } = await callJson(emulator, `${LIST}?limit=${limit}`);
    expect(status).toBe(400);
    expect(body).toMatchObject({ code: 'invalid_request', cause: 'limit' });
  });

  it('answers 400 invalid_request to a cursor it did not issue', async () => {
    const emulator = await useEmulator();
    const forged = Buffer.from(JSON.stringify(['a', 'acme', 'org_acme', null, null])).toString('base64url') + '.AAAA';
    for (const cursor of ['garbage', forged]) {
      const { status, body } = await callJson(emulator, `${LIST}?cursor=${encodeURIComponent(cursor)}`);
      expect(status).toBe(400);
      expect(body.code).toBe('invalid_request');
    }
  });

  it('answers 400 invalid_request to a cursor from another emulator', async () => {
    const one = await useEmulator();
    const two = await useEmulator();
    const { body } = await callJson<OrganisationList>(one, `${LIST}?limit=1`);
    const { status } = await callJson(two, `${LIST}?cursor=${encodeURIComponent(body.next!)}`);
    expect(status).toBe(400);
  });

  it('gives next as a relative link when so configured', async () => {
    const emulator = await useEmulator({ nextStyle: 'relative' });
    const { body } = await callJson<OrganisationList>(emulator, `${LIST}?limit=2`);
    expect(body.next).toMatch(/^\/api\/organisations\/v1\/organisations\?cursor=[^&]+&limit=2$/);
    const page2 = await callJson<OrganisationList>(emulator, body.next!);
    expect(page2.body.organisations.map((o) => o.slug)).toEqual(['hooli-eu', 'stark-industries']);
  });

  it('gives next as an absolute URL when so configured', async () => {
    const emulator = await useEmulator({ nextStyle: 'absolute' });
    const { body } = await callJson<OrganisationList>(emulator, `${LIST}?limit=4`);
    expect(body.next!.startsWith(`${emulator.url}/api/organisations/v1/organisations?cursor=`)).toBe(true);
    const page2 = await fetch(body.next!, { headers: { authorization: 'Bearer demo-token' } });
    const json = (await page2.json()) as OrganisationList;
    expect(json.organisations.map((o) => o.slug)).toEqual(['umbrella']);
    expect(json).not.toHaveProperty('next');
  });

  it('answers a user with no memberships an empty list', async () => {
    const emulator = await useEmulator();
    emulator.store.putUser({ token: 'lonely', email: 'lonely@example.com', memberships: [] });
    const { status, body } = await callJson<OrganisationList>(emulator, LIST, { token: 'lonely' });
    expect(status).toBe(200);
    expect(body).toEqual({ totalCount: 0, organisations: [] });
  });

  it('lists 10,000 organisations page by page quickly', async () => {
    const emulator = await useEmulator({ data: generateEmulatorData({ organisations: 10_000 }) });
    const started = Date.now();
    let path: string | undefined = `${LIST}?limit=500`;
    let count = 0;
    while (path) {
      const { body }: { body: OrganisationList } = await callJson<OrganisationList>(emulator, path);
      count += body.organisations.length;
      path = body.next ? `${LIST}?limit=500&cursor=${encodeURIComponent(body.next)}` : undefined;
    }
    expect(count).toBe(10_000);
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});
