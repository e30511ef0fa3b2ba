/**
 * Answers a well-behaved service rarely gives, staged byte for byte on a loopback socket: an
 * informational 1xx before the answer. (The emulator never sends one.)
 */
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createClient } from '../../src/api/client.js';

const TOKEN = 'canary-raw-answers-token';
const servers: HttpServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((done) => s.close(done))));
});

async function listen(server: HttpServer): Promise<string> {
  servers.push(server);
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('an answer preceded by an informational 1xx', () => {
  it('is read as the answer: a 103 Early Hints (a CDN sends them) does not fail the request', async () => {
    const body = JSON.stringify({ organisations: [{ id: 'org_1', slug: 'one' }] });
    const url = await listen(
      createHttpServer((_req, res) => {
        res.writeEarlyHints({ link: '</style.css>; rel=preload; as=style' });
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(body);
      }),
    );
    const client = createClient({ baseUrl: url, token: TOKEN });
    const orgs: string[] = [];
    for await (const org of client.listOrganisations()) orgs.push(org.slug);
    expect(orgs).toEqual(['one']);
    await client.close();
  });
});
