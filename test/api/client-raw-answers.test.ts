/**
 * Answers a well-behaved service rarely gives, staged byte for byte on a loopback socket: an
 * informational 1xx before the answer, and a connection cut in the middle of an answer's body.
 * (The emulator answers through node:http, which sends neither as staged here.)
 */
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { TransportError } from '../../src/api/api-error.js';
import { createClient } from '../../src/api/client.js';
import { rejection } from '../support/rejection.js';

const TOKEN = 'canary-raw-answers-token';
const servers: Array<Server | HttpServer> = [];
const sockets: Socket[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await Promise.all(servers.splice(0).map((s) => new Promise((done) => s.close(done))));
});

async function listen(server: Server | HttpServer): Promise<string> {
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

describe('an answer whose connection is cut halfway through its body', () => {
  it('is not asked for again by byte range: a write is never re-sent with Range and If-Match, and the failure names the connection', async () => {
    const seen: string[] = [];
    const url = await listen(
      createServer((socket) => {
        sockets.push(socket);
        socket.on('error', () => undefined);
        socket.once('data', (head) => {
          seen.push(head.toString('latin1').split('\r\n\r\n')[0]!);
          const body = JSON.stringify({ id: 'org_1', slug: 'one', billing: {} });
          socket.write(`HTTP/1.1 200 OK\r\ncontent-type: application/json\r\netag: "v1"\r\ncontent-length: ${body.length}\r\n\r\n${body.slice(0, 10)}`);
          setTimeout(() => socket.resetAndDestroy(), 20);
        });
      }),
    );
    const client = createClient({ baseUrl: url, token: TOKEN });
    const err = await rejection(client.updateBillingDetails('org_1', { billingEmail: 'a@b.example' } as never));
    await client.close();
    expect(err).toBeInstanceOf(TransportError);
    expect((err as TransportError).failure).toBe('connection');
    expect(err.message).not.toContain('UND_ERR_REQ_RETRY');
    expect(seen.filter((h) => /^(range|if-match):/im.test(h))).toEqual([]);
    // Sent whole again twice, with its idempotency key each time, then given up.
    expect(seen).toHaveLength(3);
    expect(new Set(seen.map((h) => /^idempotency-key: (.*)$/im.exec(h)?.[1])).size).toBe(1);
  });

  it('is asked for again whole: a listing page cut off once is read on the next try', async () => {
    const body = JSON.stringify({ organisations: [{ id: 'org_1', slug: 'one' }] });
    let answers = 0;
    const url = await listen(
      createServer((socket) => {
        sockets.push(socket);
        socket.on('error', () => undefined);
        socket.on('data', () => {
          answers += 1;
          socket.write(`HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${answers === 1 ? body.slice(0, 10) : body}`);
          if (answers === 1) setTimeout(() => socket.resetAndDestroy(), 20);
        });
      }),
    );
    const client = createClient({ baseUrl: url, token: TOKEN });
    const orgs: string[] = [];
    for await (const org of client.listOrganisations()) orgs.push(org.slug);
    await client.close();
    expect(orgs).toEqual(['one']);
    expect(answers).toBe(2);
  });
});

describe('an answer compressed in a way orgform cannot read', () => {
  async function listingFailure(answer: (res: import('node:http').ServerResponse) => void): Promise<TransportError> {
    const url = await listen(createHttpServer((_req, res) => answer(res)));
    const client = createClient({ baseUrl: url, token: TOKEN });
    const err = await rejection((async () => {
      for await (const _org of client.listOrganisations()) void _org;
    })());
    await client.close();
    expect(err).toBeInstanceOf(TransportError);
    return err as TransportError;
  }
  const listing = Buffer.from(JSON.stringify({ organisations: [{ id: 'org_1', slug: 'one' }] }));

  it('names an encoding it did not ask for (br, or gzip twice), rather than calling the answer not UTF-8', async () => {
    for (const [encoding, bytes] of [['br', brotliCompressSync(listing)], ['gzip, gzip', gzipSync(gzipSync(listing))]] as const) {
      const err = await listingFailure((res) => {
        res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': encoding });
        res.end(bytes);
      });
      expect(err.failure).toBe('bad-response');
      expect(err.message).toContain(`encoded as "${encoding}", which orgform did not ask for`);
    }
  });

  it('calls a gzip answer cut short or corrupt a bad answer, not a failed connection', async () => {
    const whole = gzipSync(listing);
    const corrupt = Buffer.from(whole);
    corrupt[corrupt.length - 6]! ^= 0xff;
    for (const bytes of [whole.subarray(0, whole.length - 12), corrupt]) {
      const err = await listingFailure((res) => {
        res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
        res.end(bytes);
      });
      expect(err.failure).toBe('bad-response');
      expect(err.message).toMatch(/the answer's gzip encoding is corrupt or cut short \(Z_[A-Z_]+\)/);
    }
  });
});
