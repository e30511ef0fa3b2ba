import { Dispatcher } from 'undici';
import { describe, expect, it } from 'vitest';
import { Redactor } from '../../src/redact.js';
import { DEFAULT_RETRY_POLICY } from '../../src/transport/retry-policy.js';
import { TransportError } from '../../src/transport/transport-error.js';
import { Transport } from '../../src/transport/transport.js';
import { rejection } from '../support/rejection.js';

/**
 * Connections on which requests never settle, the deadline's signal unheard: as undici's are while
 * queued behind a connection that never comes.
 */
class DeafPool extends Dispatcher {
  asked = 0;
  override dispatch(): boolean {
    this.asked += 1;
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
