/**
 * Transport-level cases staged with a few canned answers from a plain server on loopback rather
 * than the emulator: a service behind a path prefix, and hosts that cannot be reached. (The client
 * sends through undici's request API on its own dispatcher, which nothing in between can intercept.)
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { gzipSync } from 'node:zlib';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { TransportError } from '../../src/api/api-error.js';
import { createClient } from '../../src/api/client.js';
import { collect } from '../support/collect.js';

const TOKEN = 'canary-prefix-5e1d-token';

interface Seen {
  method: string;
  url: string;
  authorization: string | undefined;
}

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((done) => s.close(done))));
});

/** A server on 127.0.0.1 that answers from `answer` (status and JSON body) and notes every request. */
async function serve(answer: (req: IncomingMessage) => { status: number; body?: unknown }): Promise<{ url: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    seen.push({ method: req.method ?? '', url: req.url ?? '', authorization: req.headers.authorization });
    const { status, body } = answer(req);
    res.writeHead(status, body === undefined ? {} : { 'content-type': 'application/json' });
    res.end(body === undefined ? undefined : JSON.stringify(body));
  });
  servers.push(server);
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

describe('the client of a service behind a path prefix', () => {
  it('keeps the prefix, sends the bearer token, and follows a relative next link under it', async () => {
    const { url, seen } = await serve((req) =>
      req.url === '/orgs-service/api/organisations/v1/organisations?limit=500'
        ? { status: 200, body: { organisations: [{ id: 'org_1', slug: 'one' }], next: '/orgs-service/api/organisations/v1/organisations?cursor=c2' } }
        : req.url === '/orgs-service/api/organisations/v1/organisations?cursor=c2'
          ? { status: 200, body: { organisations: [{ id: 'org_2', slug: 'two' }] } }
          : { status: 404, body: { code: 'NOT_FOUND', message: 'no such path' } },
    );
    const client = createClient({ baseUrl: `${url}/orgs-service/`, token: TOKEN });
    const orgs = await collect(client.listOrganisations());
    expect(orgs.map((o) => o.slug)).toEqual(['one', 'two']);
    expect(seen.map((s) => s.url)).toEqual(['/orgs-service/api/organisations/v1/organisations?limit=500', '/orgs-service/api/organisations/v1/organisations?cursor=c2']);
    expect(seen.every((s) => s.authorization === `Bearer ${TOKEN}`)).toBe(true);
    await client.close();
  });

  it('puts the v2 channel endpoint under the same prefix', async () => {
    const { url, seen } = await serve(() => ({ status: 204 }));
    const client = createClient({ baseUrl: `${url}/orgs-service`, token: TOKEN });
    await client.deleteNotificationChannel('org:hooli/eu', 'ch_9');
    expect(seen).toEqual([{ method: 'DELETE', url: '/orgs-service/api/v2/o/org%3Ahooli%2Feu/notification_channels/ch_9', authorization: `Bearer ${TOKEN}` }]);
    await client.close();
  });

  it('never calls the other origin a next link points to', async () => {
    const elsewhere = await serve(() => ({ status: 200, body: { organisations: [] } }));
    const { url } = await serve(() => ({ status: 200, body: { organisations: [{ id: 'org_1', slug: 'one' }], next: `${elsewhere.url}/api/organisations/v1/organisations?cursor=x` } }));
    const client = createClient({ baseUrl: url, token: TOKEN });
    await expect(collect(client.listOrganisations())).rejects.toThrow(/another origin/);
    expect(elsewhere.seen).toEqual([]);
    await client.close();
  });
});

describe('the client of a service that compresses its answers', () => {
  it('asks for gzip and reads a compressed listing as it was before compression', async () => {
    const listing = { organisations: Array.from({ length: 200 }, (_, i) => ({ id: `org_${i}`, slug: `org-${i}`, billing: { billingEmail: `billing+${i}@example.com` } })) };
    const seenEncodings: Array<string | undefined> = [];
    const server = createServer((req, res) => {
      seenEncodings.push(req.headers['accept-encoding']);
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
      res.end(gzipSync(JSON.stringify(listing)));
    });
    servers.push(server);
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    const client = createClient({ baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, token: TOKEN });
    const orgs = await collect(client.listOrganisations());
    expect(orgs).toEqual(listing.organisations);
    expect(seenEncodings).toEqual(['gzip, deflate']);
    await client.close();
  });
});

describe('the client of a service whose compressed answer inflates past the size cap', () => {
  it('refuses to read it, as it would the same answer uncompressed', async () => {
    const server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
      res.end(gzipSync(JSON.stringify({ id: 'org_1', slug: 'one', displayName: 'x'.repeat(200_000) })));
    });
    servers.push(server);
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    const client = createClient({ baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, token: TOKEN, maxResponseBytes: 100_000 });
    const err = (await client.getOrganisation('org_1').catch((e: unknown) => e)) as TransportError;
    expect(err).toBeInstanceOf(TransportError);
    expect(err.failure).toBe('too-large');
    await client.close();
  });
});

describe('the client when the host cannot be reached', () => {
  it('says the host name could not be resolved, without the token', async () => {
    // .invalid never resolves (RFC 6761); offline, the lookup fails with EAI_AGAIN, said the same way.
    const client = createClient({ baseUrl: `https://nowhere-${TOKEN}.invalid`, token: TOKEN, retryPolicy: { maxAttempts: 1 } });
    const err = (await client.getOrganisation('org_1').catch((e: unknown) => e)) as TransportError;
    expect(err).toBeInstanceOf(TransportError);
    expect(err.failure).toBe('connection');
    expect(err.message).toContain('could not be resolved');
    expect(JSON.stringify({ message: err.message, stack: err.stack, cause: String(err.cause), causeStack: (err.cause as Error)?.stack })).not.toContain(TOKEN);
    await client.close();
  });
});
