import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import type { Emulator } from '../../src/emulator/server.js';
import { callJson, ORG_API, useEmulator } from './emulator-test-kit.js';

/** Sends raw bytes and collects everything the server answers until it closes or goes quiet. */
function sendRaw(emulator: Emulator, bytes: string, quietMs = 500): Promise<string> {
  const { hostname, port } = new URL(emulator.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let text = '';
    const timer = setTimeout(() => socket.destroy(), quietMs);
    socket.on('data', (d) => (text += d.toString('utf8')));
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(text);
    });
    socket.on('error', reject);
    socket.write(bytes);
  });
}

describe('authentication', () => {
  it.each([
    ['no Authorization header', {}],
    ['an unknown token', { authorization: 'Bearer nobody' }],
    ['another scheme', { authorization: 'Basic ZGVtby10b2tlbjo=' }],
    ['an empty bearer', { authorization: 'Bearer ' }],
  ])('answers 401 unauthenticated to %s', async (_name, headers) => {
    const emulator = await useEmulator();
    const { status, body } = await callJson(emulator, `${ORG_API}/organisations`, { token: null, headers });
    expect(status).toBe(401);
    expect(body.code).toBe('unauthenticated');
    expect(typeof body.message).toBe('string');
  });

  it('takes the scheme name case-insensitively', async () => {
    const emulator = await useEmulator();
    const { status } = await callJson(emulator, `${ORG_API}/organisations`, { token: null, headers: { authorization: 'bearer demo-token' } });
    expect(status).toBe(200);
  });

  it('never writes a token into the request log', async () => {
    const emulator = await useEmulator();
    await callJson(emulator, `${ORG_API}/organisations`, { headers: { 'x-request-id': 'req-1' } });
    await callJson(emulator, `${ORG_API}/organisations`, { token: 'secret-but-wrong' });
    const logged = JSON.stringify(emulator.requestLog);
    expect(logged).not.toContain('demo-token');
    expect(logged).not.toContain('secret-but-wrong');
    expect(emulator.requestLog[0]).toMatchObject({ method: 'GET', operation: 'getOrganisations', status: 200, authorization: 'bearer', requestId: 'req-1' });
  });
});

describe('routing', () => {
  it('answers 404 not_found to an unknown path, counted as unknown', async () => {
    const emulator = await useEmulator();
    const { status, body } = await callJson(emulator, '/api/organisations/v2/organisations');
    expect(status).toBe(404);
    expect(body.code).toBe('not_found');
    expect(emulator.counters.byOperation.unknown).toBe(1);
  });

  it('answers 404 not_found to a trailing slash and to an empty identifier', async () => {
    const emulator = await useEmulator();
    for (const path of [`${ORG_API}/organisations/`, `${ORG_API}/organisations//active`]) {
      expect((await callJson(emulator, path, { method: path.endsWith('active') ? 'PUT' : 'GET' })).body.code).toBe('not_found');
    }
  });

  it('answers 405 method_not_allowed with Allow to a known path and a wrong method', async () => {
    const emulator = await useEmulator();
    const { status, body, response } = await callJson(emulator, `${ORG_API}/organisations/org_acme`, { method: 'DELETE' });
    expect(status).toBe(405);
    expect(body.code).toBe('method_not_allowed');
    expect(response.headers.get('allow')).toBe('GET');
  });

  it('echoes X-Request-Id', async () => {
    const emulator = await useEmulator();
    const { response } = await callJson(emulator, `${ORG_API}/organisations`, { headers: { 'x-request-id': 'abc-123' } });
    expect(response.headers.get('x-request-id')).toBe('abc-123');
  });
});

describe('garbage', () => {
  it('answers 400 with an Error body to bytes that are not HTTP', async () => {
    const emulator = await useEmulator();
    const answer = await sendRaw(emulator, 'HELLO THERE\r\n\r\n');
    expect(answer).toMatch(/^HTTP\/1\.1 400/);
    expect(answer).toContain('"code":"invalid_request"');
  });

  it('answers an absolute-form request target like its path', async () => {
    const emulator = await useEmulator();
    const answer = await sendRaw(emulator, `GET http://example.com${ORG_API}/organisations/org_acme HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer demo-token\r\nConnection: close\r\n\r\n`);
    expect(answer).toMatch(/^HTTP\/1\.1 200/);
    expect(answer).toContain('"slug":"acme"');
  });

  it('answers 404 with an Error body to an asterisk target', async () => {
    const emulator = await useEmulator();
    const answer = await sendRaw(emulator, 'OPTIONS * HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    expect(answer).toMatch(/^HTTP\/1\.1 404/);
    expect(answer).toContain('"code":"not_found"');
  });

  it('survives a client that disconnects in the middle of a body', async () => {
    const emulator = await useEmulator();
    await sendRaw(emulator, `PUT ${ORG_API}/organisations/org_acme/billing HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer demo-token\r\nContent-Length: 100\r\n\r\n{"custo`, 100);
    const { status } = await callJson(emulator, `${ORG_API}/organisations/org_acme`);
    expect(status).toBe(200);
    expect(emulator.store.organisations.get('org_acme')?.billing?.customerId).toBe('cus_acme');
  });

  it('answers 413 to a chunked body over the cap', async () => {
    const emulator = await useEmulator();
    const chunk = 'x'.repeat(40 * 1024);
    const size = chunk.length.toString(16);
    const answer = await sendRaw(
      emulator,
      `PUT ${ORG_API}/organisations/org_acme/billing HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer demo-token\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n${size}\r\n${chunk}\r\n${size}\r\n${chunk}\r\n0\r\n\r\n`,
    );
    expect(answer).toMatch(/^HTTP\/1\.1 413/);
    expect(answer).toContain('"code":"payload_too_large"');
  });
});
