/**
 * Transport-level cases that are easier to stage with nock against global fetch than with the
 * emulator: an https service behind a path prefix, and hosts that cannot be reached. (nock answers
 * bypass the dispatcher, so retries and timeouts are tested against the emulator instead.)
 */
import nock from 'nock';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { TransportError } from '../../src/api/api-error.js';
import { createClient } from '../../src/api/client.js';

const TOKEN = 'canary-nock-5e1d-token';

beforeAll(() => nock.disableNetConnect());
afterEach(() => nock.cleanAll());
afterAll(() => nock.enableNetConnect());

async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of iterable) out.push(item);
  return out;
}

describe('the client over https behind a path prefix', () => {
  it('keeps the prefix, sends the bearer token, and follows a relative next link under it', async () => {
    const scope = nock('https://gateway.example.com', { reqheaders: { authorization: `Bearer ${TOKEN}` } })
      .get('/orgs-service/api/organisations/v1/organisations')
      .query({ limit: '500' })
      .reply(200, { organisations: [{ id: 'org_1', slug: 'one' }], next: '/orgs-service/api/organisations/v1/organisations?cursor=c2' })
      .get('/orgs-service/api/organisations/v1/organisations')
      .query({ cursor: 'c2' })
      .reply(200, { organisations: [{ id: 'org_2', slug: 'two' }] });
    const client = createClient({ baseUrl: 'https://gateway.example.com/orgs-service/', token: TOKEN });
    const orgs = await collect(client.listOrganisations());
    expect(orgs.map((o) => o.slug)).toEqual(['one', 'two']);
    expect(scope.isDone()).toBe(true);
    await client.close();
  });

  it('puts the v2 channel endpoint under the same prefix', async () => {
    const scope = nock('https://gateway.example.com')
      .delete('/orgs-service/api/v2/o/org%3Ahooli%2Feu/notification_channels/ch_9')
      .reply(204);
    const client = createClient({ baseUrl: 'https://gateway.example.com/orgs-service', token: TOKEN });
    await client.deleteNotificationChannel('org:hooli/eu', 'ch_9');
    expect(scope.isDone()).toBe(true);
    await client.close();
  });

  it('never calls the other origin a next link points to', async () => {
    nock('https://gateway.example.com')
      .get('/api/organisations/v1/organisations')
      .query(true)
      .reply(200, { organisations: [{ id: 'org_1', slug: 'one' }], next: 'https://elsewhere.example.net/api/organisations/v1/organisations?cursor=x' });
    const elsewhere = nock('https://elsewhere.example.net').get(/.*/).query(true).reply(200, { organisations: [] });
    const client = createClient({ baseUrl: 'https://gateway.example.com', token: TOKEN });
    await expect(collect(client.listOrganisations())).rejects.toThrow(/another origin/);
    expect(elsewhere.isDone()).toBe(false);
    await client.close();
  });
});

describe('the client when the host cannot be reached', () => {
  it('says the host name could not be resolved, without the token', async () => {
    nock('https://nowhere.example.com').get('/api/organisations/v1/organisations/org_1').replyWithError({ code: 'ENOTFOUND', message: `getaddrinfo ENOTFOUND (${TOKEN})` });
    const client = createClient({ baseUrl: 'https://nowhere.example.com', token: TOKEN });
    const err = (await client.getOrganisation('org_1').catch((e: unknown) => e)) as TransportError;
    expect(err).toBeInstanceOf(TransportError);
    expect(err.failure).toBe('connection');
    expect(err.message).toContain('could not be resolved');
    expect(JSON.stringify({ message: err.message, stack: err.stack, cause: String(err.cause), causeStack: (err.cause as Error)?.stack })).not.toContain(TOKEN);
    await client.close();
  });
});
