import type { Dispatcher } from 'undici';
import { describe, expect, it } from 'vitest';
import { TransportError } from '../../src/api/api-error.js';
import { createClient } from '../../src/api/client.js';
import type { AttemptRecord, RetryingDispatcher } from '../../src/api/dispatcher.js';
import { rejection } from '../support/rejection.js';

/**
 * A dispatcher whose requests never settle, the deadline's signal unheard: as undici's are while
 * queued behind a connection that never comes.
 */
function deafTransport(): RetryingDispatcher & { asked: number } {
  const transport = {
    asked: 0,
    dispatcher: {
      request: () => {
        transport.asked += 1;
        return new Promise<never>(() => undefined);
      },
    } as unknown as Dispatcher,
    track: (_id: string, options: { what: string; budgetMs: number }): AttemptRecord => ({ startedAt: Date.now(), attempts: 0, throttles: 0, heldMs: 0, holding: false, ...options }),
    untrack: () => undefined,
    close: async () => undefined,
  };
  return transport;
}

describe('a request', () => {
  it('fails at its deadline even when the dispatcher never settles it', async () => {
    const transport = deafTransport();
    const client = createClient({ baseUrl: 'https://orgs.example.test', token: 't', transport, timeouts: { totalMs: 50 } });
    const failure = await rejection(client.getOrganisation('org_acme'));
    expect(failure).toBeInstanceOf(TransportError);
    expect((failure as TransportError).failure).toBe('timeout');
    expect((failure as Error).message).toContain('no complete answer within the time budget');
    expect(transport.asked).toBe(1);
  });
});
