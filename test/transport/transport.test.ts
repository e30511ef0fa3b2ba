import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Dispatcher } from 'undici';
import { describe, expect, it } from 'vitest';
import { RateGate } from '../../src/api/rate/rate-gate.js';
import { Redactor } from '../../src/redact.js';
import { DEFAULT_RETRY_POLICY } from '../../src/transport/retry-policy.js';
import { NotSentError, TransportError } from '../../src/transport/transport-error.js';
import { Transport, type AttemptEvent } from '../../src/transport/transport.js';
import { FakeClock } from '../support/fake-clock.js';
import { rejection } from '../support/rejection.js';

/**
 * Connections on which requests never settle, the deadline's signal unheard: as undici's are while
 * queued behind a connection that never comes.
 */
class DeafPool extends Dispatcher {
  asked = 0;
  /** The path of each request dispatched, in order. */
  paths: string[] = [];
  override dispatch(opts: Dispatcher.DispatchOptions): boolean {
    this.asked += 1;
    this.paths.push(opts.path);
    return true;
  }
  override close(): Promise<void> {
    return Promise.resolve();
  }
}

describe('a request', () => {
  it('fails at its deadline even when the dispatcher never settles it', async () => {
    const pool = new DeafPool();
    const transport = new Transport({
      retry: DEFAULT_RETRY_POLICY,
      timeouts: { connectMs: 10_000, headersMs: 30_000, bodyMs: 30_000, totalMs: 50 },
      maxResponseBytes: 1024,
      redactor: new Redactor(),
      peer: { name: 'the service', address: 'the base URL' },
      pool,
    });
    const failure = await rejection(transport.send({ method: 'GET', url: new URL('https://orgs.example.test/api/organisations/v1/organisations/org_acme'), headers: {}, operation: 'getOrganisation', target: 'organisation "org_acme"', what: 'the read' }));
    expect(failure).toBeInstanceOf(TransportError);
    expect((failure as TransportError).failure).toBe('timeout');
    expect((failure as Error).message).toContain('no complete answer within the time budget');
    expect(pool.asked).toBe(1);
  });
});

describe('a read its caller lets go', () => {
  function deafTransport(pool: Dispatcher, gate?: RateGate): Transport {
    return new Transport({ retry: DEFAULT_RETRY_POLICY, maxResponseBytes: 1024, redactor: new Redactor(), peer: { name: 'the service', address: 'the base URL' }, pool, gate });
  }
  const read = (letGo?: AbortSignal, path = '/api/organisations/v1/organisations') => ({ method: 'GET', url: new URL(`https://orgs.example.test${path}`), headers: {}, operation: 'getOrganisations', what: 'a page', letGo });

  it('is never sent when let go before it starts', async () => {
    const pool = new DeafPool();
    const failure = await rejection(deafTransport(pool).send(read(AbortSignal.abort())));
    expect(failure).toBeInstanceOf(NotSentError);
    expect(pool.asked).toBe(0);
  });

  it('gives up its turn at the rate limit when let go while it waits for it: the read behind it goes in its place', async () => {
    const clock = new FakeClock();
    const pool = new DeafPool();
    const transport = deafTransport(pool, new RateGate({ clock, settings: { maxRps: 1 } }));
    void transport.send(read(undefined, '/first')).catch(() => undefined);
    const letGo = new AbortController();
    const dropped = transport.send(read(letGo.signal, '/dropped'));
    void transport.send(read(undefined, '/behind')).catch(() => undefined);
    letGo.abort();
    expect(await rejection(dropped)).toBeInstanceOf(NotSentError);
    await clock.runUntil(1_000);
    expect(pool.paths).toEqual(['/first', '/behind']);
  });

  it('ends at once when let go on the wire, its answer never come', async () => {
    const pool = new DeafPool();
    const letGo = new AbortController();
    const sent = deafTransport(pool).send(read(letGo.signal));
    expect(pool.asked).toBe(1);
    letGo.abort();
    expect(await rejection(sent)).toBeInstanceOf(NotSentError);
  });
});

describe('each attempt of a request', () => {
  /** A server on loopback that answers with `statuses` in turn (the last one after). */
  async function answering(...statuses: number[]) {
    let asked = 0;
    const server = createServer((_req, res) => res.writeHead(statuses[Math.min(asked++, statuses.length - 1)]!, { 'content-type': 'application/json' }).end('{}'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise((resolve) => server.close(resolve)) };
  }

  function transportTelling(attempts: AttemptEvent[], clock: { now: number }): Transport {
    return new Transport({
      retry: { ...DEFAULT_RETRY_POLICY, baseDelayMs: 1, maxDelayMs: 1 },
      maxResponseBytes: 1024,
      redactor: new Redactor(),
      peer: { name: 'the service', address: 'the base URL' },
      now: () => (clock.now += 5),
      onAttempt: (event) => attempts.push(event),
    });
  }

  it('is told as it goes on the wire and as it ends, with what came back, under the caller’s label', async () => {
    const server = await answering(503, 200);
    const attempts: AttemptEvent[] = [];
    const transport = transportTelling(attempts, { now: 1_000 });
    try {
      const answer = await transport.send({ method: 'PUT', url: new URL(`${server.url}/billing`), headers: {}, body: '{}', operation: 'updateBillingDetails', what: 'updateBillingDetails organisation "org_acme"', label: 'organisations.acme.billing' });
      expect(answer.status).toBe(200);
    } finally {
      await transport.close();
      await server.close();
    }
    expect(attempts.map((e) => ({ type: e.type, attempt: e.attempt, status: e.type === 'attempt-ended' ? e.status : undefined, label: e.label, method: e.method }))).toEqual([
      { type: 'attempt-sent', attempt: 1, status: undefined, label: 'organisations.acme.billing', method: 'PUT' },
      { type: 'attempt-ended', attempt: 1, status: 503, label: 'organisations.acme.billing', method: 'PUT' },
      { type: 'attempt-sent', attempt: 2, status: undefined, label: 'organisations.acme.billing', method: 'PUT' },
      { type: 'attempt-ended', attempt: 2, status: 200, label: 'organisations.acme.billing', method: 'PUT' },
    ]);
    // Each end quotes its sending, and comes after it; the retry goes after the first ended.
    const [sent1, ended1, sent2, ended2] = attempts;
    for (const [sent, ended] of [[sent1, ended1], [sent2, ended2]] as const) {
      expect(ended!.type === 'attempt-ended' && ended!.sentAt).toBe(sent!.at);
      expect(ended!.at).toBeGreaterThan(sent!.at);
    }
    expect(sent2!.at).toBeGreaterThan(ended1!.at);
    expect(ended1!.type === 'attempt-ended' && ended1!.errorCode).toBeUndefined();
  });

  it('is told with the failure’s code when no answer came', async () => {
    const server = await answering(200);
    await server.close();
    const attempts: AttemptEvent[] = [];
    const transport = new Transport({ retry: { ...DEFAULT_RETRY_POLICY, maxAttempts: 1 }, maxResponseBytes: 1024, redactor: new Redactor(), peer: { name: 'the service', address: 'the base URL' }, onAttempt: (event) => attempts.push(event) });
    try {
      await rejection(transport.send({ method: 'GET', url: new URL(`${server.url}/`), headers: {}, operation: 'getOrganisation', what: 'the read' }));
    } finally {
      await transport.close();
    }
    expect(attempts).toMatchObject([
      { type: 'attempt-sent', attempt: 1, what: 'the read' },
      { type: 'attempt-ended', attempt: 1, what: 'the read', errorCode: 'ECONNREFUSED' },
    ]);
    expect(attempts[1]).not.toHaveProperty('status');
  });
});
