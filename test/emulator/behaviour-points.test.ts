/**
 * Every behaviour point played at its non-lenient values over real loopback HTTP, each answer
 * asserted exactly (status, content type, body). Seed: examples/emulator-data.json (ada is
 * demo-token, member of acme, initech, hooli, umbrella, stark; bob is other-token).
 */
import { describe, expect, it } from 'vitest';
import type { Behaviour } from '../../src/emulator/behaviour.js';
import { generateEmulatorData } from '../../src/emulator/generate-emulator-data.js';
import type { Emulator } from '../../src/emulator/server.js';
import { call, callJson, ORG_API, orgPath, OTHER, V2_API, useEmulator } from './emulator-test-kit.js';

const LIST = `${ORG_API}/organisations`;
const channelPath = (org: string, ch: string) => `${V2_API}/o/${encodeURIComponent(org)}/notification_channels/${encodeURIComponent(ch)}`;

const withPoints = (behaviour: Partial<Behaviour>, options: Parameters<typeof useEmulator>[0] = {}) => useEmulator({ ...options, behaviour });

/** Status, content type (without parameters) and body text of an answer. */
async function exact(response: Promise<Response>): Promise<{ status: number; type: string | null; body: string }> {
  const r = await response;
  return { status: r.status, type: r.headers.get('content-type')?.split(';')[0] ?? null, body: await r.text() };
}

describe('billing-put', () => {
  it('replace: the four updatable fields left out of the body are removed, other billing fields kept', async () => {
    const emulator = await withPoints({ 'billing-put': 'replace' });
    const { status, body } = await callJson(emulator, orgPath('org_acme', 'billing'), { method: 'PUT', body: { billingEmail: 'new@acme.example', customerID: 'cus_new' } });
    expect(status).toBe(200);
    expect(body.billing).toMatchObject({ billingEmail: 'new@acme.example', customerId: 'cus_new', platformType: 'stripe', boardQuota: 50, hubBoardQuota: 10 });
    expect(Object.keys(body.billing)).not.toContain('subscriptionId');
    expect(Object.keys(body.billing)).not.toContain('platformId');
    const stored = emulator.store.organisations.get('org_acme')!.billing!;
    expect([stored.subscriptionId, stored.platformId, stored.customerId, stored.isSubscriptionActive]).toEqual([undefined, undefined, 'cus_new', 1]);
  });

  it('replace with an empty body removes all four', async () => {
    const emulator = await withPoints({ 'billing-put': 'replace' });
    const { body } = await callJson(emulator, orgPath('org_acme', 'billing'), { method: 'PUT', body: {} });
    expect(Object.keys(body.billing).filter((k) => ['billingEmail', 'customerId', 'subscriptionId', 'platformId'].includes(k))).toEqual([]);
    expect(body.billing.billingPeriodStart).toBe('2025-01-01');
  });
});

describe('page-size', () => {
  it('fixed-50 ignores the client limit, valid, out of range or not a number, and answers pages of 50', async () => {
    const emulator = await withPoints({ 'page-size': 'fixed-50' }, { data: generateEmulatorData({ organisations: 120 }) });
    for (const limit of ['10', '10000', '0', 'ten']) {
      const { status, body } = await callJson(emulator, `${LIST}?limit=${limit}`);
      expect([limit, status, body.organisations.length, body.totalCount]).toEqual([limit, 200, 50, 120]);
    }
    const repeated = await callJson(emulator, `${LIST}?limit=1&limit=2`);
    expect([repeated.status, repeated.body.organisations.length]).toEqual([200, 50]);
    const second = await callJson(emulator, `${LIST}?limit=3&cursor=${encodeURIComponent(repeated.body.next)}`);
    expect(second.body.organisations.length).toBe(50);
    const third = await callJson(emulator, `${LIST}?cursor=${encodeURIComponent(second.body.next)}`);
    expect([third.body.organisations.length, third.body.next]).toEqual([20, undefined]);
  });

  it('client (lenient) still refuses a limit out of range, which shows the check above is real', async () => {
    const emulator = await useEmulator();
    expect((await call(emulator, `${LIST}?limit=0`)).status).toBe(400);
  });
});

describe('next-link', () => {
  it('absolute: next is a URL on the emulator that gives the next page', async () => {
    const emulator = await withPoints({ 'next-link': 'absolute' });
    const first = await callJson(emulator, `${LIST}?limit=2`);
    expect(first.body.next).toMatch(new RegExp(`^${emulator.url}${LIST}\\?cursor=[^&]+&limit=2$`));
    const second = await fetch(first.body.next, { headers: { authorization: 'Bearer demo-token' } });
    const page = (await second.json()) as { organisations: { id: string }[]; prev: string };
    expect(page.organisations.map((o) => o.id)).toEqual(['org:hooli/eu', 'org_stark']);
    expect(page.prev).toMatch(new RegExp(`^${emulator.url}${LIST}\\?cursor=`));
  });

  it('relative: next is a path with the cursor and limit', async () => {
    const emulator = await withPoints({ 'next-link': 'relative' });
    const { body } = await callJson(emulator, `${LIST}?limit=2`);
    expect(body.next).toMatch(new RegExp(`^${LIST}\\?cursor=[^&]+&limit=2$`));
  });

  it('the point wins over the older nextStyle option, which still works on its own', async () => {
    const both = await useEmulator({ nextStyle: 'relative', behaviour: { 'next-link': 'cursor' } });
    expect((await callJson(both, `${LIST}?limit=2`)).body.next).not.toContain('/');
    expect(both.behaviour['next-link']).toBe('cursor');
    const alias = await useEmulator({ nextStyle: 'absolute' });
    expect(alias.behaviour['next-link']).toBe('absolute');
    expect((await callJson(alias, `${LIST}?limit=2`)).body.next).toMatch(/^http:\/\//);
  });
});

describe('last-next', () => {
  it('empty: a missing next, and prev on the first page, are written ""', async () => {
    const emulator = await withPoints({ 'last-next': 'empty' });
    const text = await (await call(emulator, LIST)).text();
    expect(text).toMatch(/^\{"totalCount":5,"next":"","prev":"","organisations":\[/);
    const first = await callJson(emulator, `${LIST}?limit=3`);
    expect([typeof first.body.next, first.body.prev]).toEqual(['string', '']);
    const last = await callJson(emulator, `${LIST}?cursor=${encodeURIComponent(first.body.next)}`);
    expect(last.body.next).toBe('');
    expect(last.body.prev).toMatch(/.+/);
  });

  it('null: they are written null', async () => {
    const emulator = await withPoints({ 'last-next': 'null' });
    const text = await (await call(emulator, LIST)).text();
    expect(text).toMatch(/^\{"totalCount":5,"next":null,"prev":null,"organisations":\[/);
  });

  it('omit (lenient): they are left out', async () => {
    const emulator = await useEmulator();
    const { body } = await callJson(emulator, LIST);
    expect(Object.keys(body)).toEqual(['totalCount', 'organisations']);
  });
});

describe('success-body', () => {
  /** The four operations whose success the point shapes, then channel deletion (fixed at 204). */
  async function playAll(emulator: Emulator) {
    const answers = [
      await exact(call(emulator, orgPath('org_acme', 'active'), { method: 'PUT' })),
      await exact(call(emulator, orgPath('org_acme', 'billing'), { method: 'PUT', body: { customerID: 'cus_x' } })),
      await exact(call(emulator, orgPath('org_globex', 'invitations', 'inv_globex_ada', 'accept'), { method: 'PUT' })),
      await exact(call(emulator, orgPath('org_acme', 'invitations', 'inv_acme_carol'), { method: 'DELETE' })),
      await exact(call(emulator, channelPath('org_acme', 'chn_acme_email'), { method: 'DELETE' })),
    ];
    // Each operation did its work, whatever the answer looked like.
    expect(emulator.store.users.get('demo-token')?.active).toBe('org_acme');
    expect(emulator.store.organisations.get('org_acme')?.billing?.customerId).toBe('cus_x');
    expect(emulator.store.invitations.get('inv_globex_ada')?.pending).toBe(false);
    expect(emulator.store.invitations.has('inv_acme_carol')).toBe(false);
    expect(emulator.store.channels.has('chn_acme_email')).toBe(false);
    return answers;
  }
  const NO_CONTENT = { status: 204, type: null, body: '' };
  const TEXT_OK = { status: 200, type: 'text/plain', body: 'OK' };
  const EMPTY_200 = { status: 200, type: 'application/json', body: '' };

  it('no-content: 204 for all four', async () => {
    expect(await playAll(await withPoints({ 'success-body': 'no-content' }))).toEqual([NO_CONTENT, NO_CONTENT, NO_CONTENT, NO_CONTENT, NO_CONTENT]);
  });

  it('text-200: 200 text/plain OK for all four; channel deletion still 204', async () => {
    expect(await playAll(await withPoints({ 'success-body': 'text-200' }))).toEqual([TEXT_OK, TEXT_OK, TEXT_OK, TEXT_OK, NO_CONTENT]);
  });

  it('mixed: 204, 200 with an empty body, 200 text OK, 200 text OK', async () => {
    expect(await playAll(await withPoints({ 'success-body': 'mixed' }))).toEqual([NO_CONTENT, EMPTY_200, TEXT_OK, TEXT_OK, NO_CONTENT]);
  });

  it('empty-200 and json-200 as points: 3 and 4 keep 200 with the Organisation, 6 and 7 answer 200 with "" or {}', async () => {
    const empty = await playAll(await withPoints({ 'success-body': 'empty-200' }));
    expect(empty.map((a) => a.status)).toEqual([200, 200, 200, 200, 204]);
    expect(JSON.parse(empty[0]!.body).id).toBe('org_acme');
    expect(JSON.parse(empty[1]!.body).billing.customerId).toBe('cus_x');
    expect(empty.slice(2)).toEqual([EMPTY_200, EMPTY_200, NO_CONTENT]);
    const json = await playAll(await withPoints({ 'success-body': 'json-200' }));
    expect(json.slice(2)).toEqual([{ status: 200, type: 'application/json', body: '{}' }, { status: 200, type: 'application/json', body: '{}' }, NO_CONTENT]);
  });

  it('decided (lenient): 200 + Organisation, 200 + Organisation, 204, 204', async () => {
    const decided = await playAll(await useEmulator());
    expect(decided.map((a) => [a.status, a.type])).toEqual([[200, 'application/json'], [200, 'application/json'], [204, null], [204, null], [204, null]]);
  });

  it('leaves failures alone', async () => {
    const emulator = await withPoints({ 'success-body': 'text-200' });
    const { status, body } = await callJson(emulator, orgPath('org_globex', 'active'), { method: 'PUT' });
    expect([status, body.code]).toEqual([404, 'organisation_not_found']);
  });
});

describe('repeat-delete', () => {
  it('success: deleting an invitation already deleted answers 204 again; an unknown one still 404', async () => {
    const emulator = await withPoints({ 'repeat-delete': 'success' });
    const path = orgPath('org_acme', 'invitations', 'inv_acme_carol');
    expect(await exact(call(emulator, path, { method: 'DELETE' }))).toEqual({ status: 204, type: null, body: '' });
    expect(await exact(call(emulator, path, { method: 'DELETE' }))).toEqual({ status: 204, type: null, body: '' });
    const unknown = await callJson(emulator, orgPath('org_acme', 'invitations', 'inv_never'), { method: 'DELETE' });
    expect([unknown.status, unknown.body.code]).toEqual([404, 'invitation_not_found']);
    const otherOrg = await callJson(emulator, orgPath('org_stark', 'invitations', 'inv_acme_carol'), { method: 'DELETE' });
    expect([otherOrg.status, otherOrg.body.code]).toEqual([404, 'invitation_not_found']);
  });

  it('success: deleting an accepted invitation answers 204', async () => {
    const emulator = await withPoints({ 'repeat-delete': 'success' });
    expect((await call(emulator, orgPath('org_globex', 'invitations', 'inv_globex_ada', 'accept'), { method: 'PUT' })).status).toBe(204);
    expect((await call(emulator, orgPath('org_globex', 'invitations', 'inv_globex_ada'), { method: 'DELETE' })).status).toBe(204);
  });

  it('not-found (lenient): the second delete answers 404', async () => {
    const emulator = await useEmulator();
    const path = orgPath('org_acme', 'invitations', 'inv_acme_carol');
    await call(emulator, path, { method: 'DELETE' });
    expect((await call(emulator, path, { method: 'DELETE' })).status).toBe(404);
  });
});

describe('gone-channel', () => {
  it('gone: a channel deleted before answers 410 gone; one that never existed, or of another organisation, 404', async () => {
    const emulator = await withPoints({ 'gone-channel': 'gone' });
    expect((await call(emulator, channelPath('org_acme', 'chn_acme_email'), { method: 'DELETE' })).status).toBe(204);
    const again = await call(emulator, channelPath('org_acme', 'chn_acme_email'), { method: 'DELETE' });
    expect(again.status).toBe(410);
    expect(again.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(await again.json()).toEqual({ code: 'gone', message: 'This notification channel was deleted.', cause: 'channel chn_acme_email' });
    const never = await callJson(emulator, channelPath('org_acme', 'chn_never'), { method: 'DELETE' });
    expect([never.status, never.body.code]).toEqual([404, 'channel_not_found']);
    const elsewhere = await callJson(emulator, channelPath('org:hooli/eu', 'chn_acme_email'), { method: 'DELETE' });
    expect([elsewhere.status, elsewhere.body.code]).toEqual([404, 'channel_not_found']);
  });

  it('not-found (lenient): 404 channel_not_found', async () => {
    const emulator = await useEmulator();
    await call(emulator, channelPath('org_acme', 'chn_acme_email'), { method: 'DELETE' });
    expect((await callJson(emulator, channelPath('org_acme', 'chn_acme_email'), { method: 'DELETE' })).body.code).toBe('channel_not_found');
  });

  it('is forgotten when the store is loaded again', async () => {
    const emulator = await withPoints({ 'gone-channel': 'gone' });
    const seed = emulator.store.dump();
    await call(emulator, channelPath('org_acme', 'chn_acme_email'), { method: 'DELETE' });
    emulator.store.load({ ...seed, channels: seed.channels.filter((c) => c.id !== 'chn_acme_email') });
    expect((await call(emulator, channelPath('org_acme', 'chn_acme_email'), { method: 'DELETE' })).status).toBe(404);
  });
});

describe('extra-fields', () => {
  it('on: organisations and billing objects in reads, listings and write answers carry unknown fields; the store does not', async () => {
    const emulator = await withPoints({ 'extra-fields': 'on' });
    const read = await callJson(emulator, orgPath('org_acme'));
    expect(read.body).toMatchObject({ id: 'org_acme', createdAt: '2021-03-04T05:06:07Z', region: 'eu-west-1' });
    expect(read.body.billing).toMatchObject({ customerId: 'cus_acme', taxId: null, currency: 'EUR' });
    const list = await callJson(emulator, LIST);
    expect(list.body.organisations.every((o: Record<string, unknown>) => o.createdAt === '2021-03-04T05:06:07Z' && o.region === 'eu-west-1')).toBe(true);
    const active = await callJson(emulator, orgPath('org_acme', 'active'), { method: 'PUT' });
    expect(active.body.region).toBe('eu-west-1');
    const billing = await callJson(emulator, orgPath('org_acme', 'billing'), { method: 'PUT', body: { customerID: 'c2' } });
    expect(billing.body.billing).toMatchObject({ customerId: 'c2', currency: 'EUR' });
    expect(Object.keys(emulator.store.organisations.get('org_acme')!)).not.toContain('createdAt');
    expect(Object.keys(emulator.store.organisations.get('org_acme')!.billing!)).not.toContain('currency');
  });

  it('off (lenient): none', async () => {
    const emulator = await useEmulator();
    expect(Object.keys((await callJson(emulator, orgPath('org_acme'))).body)).not.toContain('createdAt');
  });
});

describe('retry-after', () => {
  const AT = Date.UTC(2026, 0, 2, 3, 4, 5, 500);

  it('http-date: an injected 429 or 503 with retryAfter writes an HTTP date, rounded up to the second', async () => {
    const emulator = await withPoints({ 'retry-after': 'http-date' }, { clock: () => AT });
    emulator.faults.add({ fault: { kind: 'status', status: 429, retryAfter: 2 } });
    emulator.faults.add({ fault: { kind: 'status', status: 503, retryAfter: 30 } });
    const limited = await callJson(emulator, LIST);
    expect([limited.status, limited.body.code, limited.response.headers.get('retry-after')]).toEqual([429, 'rate_limited', 'Fri, 02 Jan 2026 03:04:08 GMT']);
    const unavailable = await call(emulator, LIST);
    expect([unavailable.status, unavailable.headers.get('retry-after')]).toEqual([503, 'Fri, 02 Jan 2026 03:04:36 GMT']);
  });

  it('seconds (lenient): delta-seconds', async () => {
    const emulator = await useEmulator({ clock: () => AT });
    emulator.faults.add({ fault: { kind: 'status', status: 429, retryAfter: 2 } });
    expect((await call(emulator, LIST)).headers.get('retry-after')).toBe('2');
  });
});

describe('listing-billing', () => {
  it('omitted: no organisation of the listing has billing; GetOrganisation still has it', async () => {
    const emulator = await withPoints({ 'listing-billing': 'omitted' });
    const list = await callJson(emulator, LIST);
    expect(list.body.organisations).toHaveLength(5);
    expect(list.body.organisations.filter((o: Record<string, unknown>) => 'billing' in o)).toEqual([]);
    expect(list.body.organisations[0]).toEqual({
      id: 'org_initech',
      slug: 'initech',
      displayName: expect.any(String),
      owner: expect.any(String),
      systemServiceAccountClientID: expect.any(String),
      plan: expect.any(String),
    });
    expect((await callJson(emulator, orgPath('org_acme'))).body.billing.customerId).toBe('cus_acme');
  });
});

describe('read-spelling', () => {
  it('update: reads spell customerID/subscriptionID/platformID, in place; the store keeps its spelling', async () => {
    const emulator = await withPoints({ 'read-spelling': 'update' });
    const read = await callJson(emulator, orgPath('org_acme'));
    expect(Object.keys(read.body.billing).slice(0, 3)).toEqual(['platformID', 'customerID', 'billingEmail']);
    expect(read.body.billing).toMatchObject({ customerID: 'cus_acme', subscriptionID: 'sub_acme', platformID: 'plat_acme' });
    expect(Object.keys(read.body.billing)).not.toEqual(expect.arrayContaining(['customerId']));
    const list = await callJson(emulator, LIST);
    expect(list.body.organisations.find((o: { id: string }) => o.id === 'org_acme').billing.customerID).toBe('cus_acme');
    const updated = await callJson(emulator, orgPath('org_acme', 'billing'), { method: 'PUT', body: { customerID: 'cus_2' } });
    expect(updated.body.billing.customerID).toBe('cus_2');
    expect(emulator.store.organisations.get('org_acme')!.billing!.customerId).toBe('cus_2');
  });
});

describe('non-member-reads', () => {
  it('readable: GetOrganisation answers any existing organisation; the listing and writes still need membership', async () => {
    const emulator = await withPoints({ 'non-member-reads': 'readable' });
    const globex = await callJson(emulator, orgPath('org_globex'));
    expect([globex.status, globex.body.id, globex.body.slug]).toEqual([200, 'org_globex', 'globex']);
    const unknown = await callJson(emulator, orgPath('org_nope'));
    expect([unknown.status, unknown.body.code]).toEqual([404, 'organisation_not_found']);
    const list = await callJson(emulator, LIST);
    expect(list.body.organisations.map((o: { id: string }) => o.id)).not.toContain('org_globex');
    for (const [path, body] of [[orgPath('org_globex', 'active'), undefined], [orgPath('org_globex', 'billing'), { customerID: 'x' }]] as const) {
      const write = await callJson(emulator, path, { method: 'PUT', ...(body ? { body } : {}) });
      expect([write.status, write.body.code]).toEqual([404, 'organisation_not_found']);
    }
    expect(emulator.store.organisations.get('org_globex')!.billing!.customerId).toBe('cus_globex');
  });

  it('refused (lenient): 404', async () => {
    const emulator = await useEmulator();
    expect((await call(emulator, orgPath('org_globex'))).status).toBe(404);
  });
});

describe('membership-lag', () => {
  const accept = (emulator: Emulator) => call(emulator, orgPath('org_globex', 'invitations', 'inv_globex_ada', 'accept'), { method: 'PUT' });
  const listed = async (emulator: Emulator, query = '') =>
    ((await callJson(emulator, `${LIST}${query}`)).body.organisations as { id: string }[]).map((o) => o.id);

  it('2: the next two reads (GetOrganisation and listings together) do not show the new membership, the third does', async () => {
    const emulator = await withPoints({ 'membership-lag': 2 });
    expect((await accept(emulator)).status).toBe(204);
    const first = await callJson(emulator, orgPath('org_globex'));
    expect([first.status, first.body.code]).toEqual([404, 'organisation_not_found']);
    expect(await listed(emulator)).not.toContain('org_globex');
    expect((await call(emulator, orgPath('org_globex'))).status).toBe(200);
    expect(await listed(emulator)).toContain('org_globex');
  });

  it('counts a listing only when the organisation would be in it, and is per user and organisation', async () => {
    const emulator = await withPoints({ 'membership-lag': 1 });
    await accept(emulator);
    expect(await listed(emulator, '?filter=acme')).toEqual(['org_acme']);
    expect((await callJson(emulator, `${LIST}?filter=glob`)).body).toMatchObject({ totalCount: 0, organisations: [] });
    expect(await listed(emulator, '?filter=glob')).toEqual(['org_globex']);
    expect((await call(emulator, orgPath('org_globex'), { token: OTHER })).status).toBe(200);
  });

  it('writes see the membership at once, and the active organisation heads the listing even while it lags (rule 2)', async () => {
    const emulator = await withPoints({ 'membership-lag': 2 });
    await accept(emulator);
    const active = await callJson(emulator, orgPath('org_globex', 'active'), { method: 'PUT' });
    expect([active.status, active.body.id]).toEqual([200, 'org_globex']);
    const list = await callJson(emulator, LIST);
    expect(list.body.totalCount).toBe(6);
    expect(list.body.organisations.map((o: { id: string }) => o.id)).toEqual(['org_globex', 'org_acme', 'org:hooli/eu', 'org_initech', 'org_stark', 'org_umbrella']);
  });

  it('leaves a lagging membership that is not the active organisation out of the listing', async () => {
    const emulator = await withPoints({ 'membership-lag': 2 });
    await accept(emulator);
    const list = await callJson(emulator, LIST);
    expect(list.body.organisations.map((o: { id: string }) => o.id)).not.toContain('org_globex');
  });

  it('with non-member-reads readable, GetOrganisation answers 200 meanwhile', async () => {
    const emulator = await withPoints({ 'membership-lag': 2, 'non-member-reads': 'readable' });
    await accept(emulator);
    expect((await call(emulator, orgPath('org_globex'))).status).toBe(200);
    expect(await listed(emulator)).not.toContain('org_globex');
    expect(await listed(emulator)).toContain('org_globex');
  });

  it('0 (lenient): shows at once', async () => {
    const emulator = await useEmulator();
    await accept(emulator);
    expect((await call(emulator, orgPath('org_globex'))).status).toBe(200);
  });
});

describe('gateway-404', () => {
  it('v2-once: the first request to each /api/v2 path gets an HTML 404 and deletes nothing; the next reaches the service', async () => {
    const emulator = await withPoints({ 'gateway-404': 'v2-once' });
    const first = await call(emulator, channelPath('org_acme', 'chn_acme_email'), { method: 'DELETE' });
    expect([first.status, first.headers.get('content-type')]).toEqual([404, 'text/html; charset=utf-8']);
    expect(await first.text()).toContain('<title>404 Not Found</title>');
    expect(emulator.store.channels.has('chn_acme_email')).toBe(true);
    expect((await call(emulator, channelPath('org_acme', 'chn_acme_email'), { method: 'DELETE' })).status).toBe(204);
    expect(emulator.store.channels.has('chn_acme_email')).toBe(false);
    expect((await call(emulator, channelPath('org_acme', 'chn_acme_slack'), { method: 'DELETE' })).status).toBe(404);
    expect((await call(emulator, orgPath('org_acme'))).status).toBe(200);
    expect(emulator.requestLog.map((e) => e.status)).toEqual([404, 204, 404, 200]);
  });

  it('v2: every request under /api/v2 gets the HTML 404', async () => {
    const emulator = await withPoints({ 'gateway-404': 'v2' });
    for (let i = 0; i < 3; i += 1) {
      const answer = await call(emulator, channelPath('org_acme', 'chn_acme_email'), { method: 'DELETE' });
      expect([answer.status, (await answer.text()).startsWith('<!DOCTYPE html>')]).toEqual([404, true]);
    }
    expect(emulator.store.channels.has('chn_acme_email')).toBe(true);
    expect(emulator.counters.byOperation.deleteNotificationChannel).toBe(3);
  });
});

/** Every page of the listing from `first` on, each as its answer's body: ids only. */
async function chain(emulator: Emulator, first: string, max = 20): Promise<Array<{ ids: string[]; next: string | undefined; totalCount: unknown }>> {
  const pages = [];
  let path: string | undefined = first;
  while (path !== undefined && pages.length < max) {
    const { body } = await callJson(emulator, path);
    const next = body.next as string | undefined;
    pages.push({ ids: (body.organisations as Array<{ id: string }>).map((o) => o.id), next, totalCount: body.totalCount });
    path = next === undefined ? undefined : `${LIST}?limit=2&cursor=${encodeURIComponent(next)}`;
  }
  return pages;
}

describe('empty-pages', () => {
  it('one: the second page comes empty first, with the count and a next to it; the pages after come as they are', async () => {
    const emulator = await withPoints({ 'empty-pages': 'one' });
    const pages = await chain(emulator, `${LIST}?limit=2`);
    expect(pages.map((p) => p.ids)).toEqual([['org_initech', 'org_acme'], [], ['org:hooli/eu', 'org_stark'], ['org_umbrella']]);
    expect(pages[1]!.totalCount).toBe(5);
  });

  it('every: an empty page before every page after the first, and the whole listing still there', async () => {
    const emulator = await withPoints({ 'empty-pages': 'every' });
    const pages = await chain(emulator, `${LIST}?limit=2`);
    expect(pages.map((p) => p.ids)).toEqual([['org_initech', 'org_acme'], [], ['org:hooli/eu', 'org_stark'], [], ['org_umbrella']]);
  });
});

describe('fresh-cursors', () => {
  it('on: the same position is given new text each time, and each text leads there', async () => {
    const emulator = await withPoints({ 'fresh-cursors': 'on' });
    const [a, b] = [await callJson(emulator, `${LIST}?limit=2`), await callJson(emulator, `${LIST}?limit=2`)];
    expect(a.body.next).not.toBe(b.body.next);
    const [fromA, fromB] = [await chain(emulator, `${LIST}?limit=2&cursor=${encodeURIComponent(a.body.next)}`), await chain(emulator, `${LIST}?limit=2&cursor=${encodeURIComponent(b.body.next)}`)];
    expect(fromA.map((p) => p.ids)).toEqual([['org:hooli/eu', 'org_stark'], ['org_umbrella']]);
    expect(fromB.map((p) => p.ids)).toEqual(fromA.map((p) => p.ids));
  });

  it('off (lenient): the same position, the same text', async () => {
    const emulator = await useEmulator();
    expect((await callJson(emulator, `${LIST}?limit=2`)).body.next).toBe((await callJson(emulator, `${LIST}?limit=2`)).body.next);
  });
});
