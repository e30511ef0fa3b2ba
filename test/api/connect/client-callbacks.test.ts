import { describe, expect, it } from 'vitest';
import { clientCallbacks, type ClientEvent } from '../../../src/api/connect/open-client.js';

/** The client's callbacks as openClient wires them to a view, and what the view was told. */
function told() {
  const events: ClientEvent[] = [];
  return { events, callbacks: clientCallbacks({ event: (e) => events.push(e) }, () => 7) };
}

describe('client events: the client’s callbacks as events of the run', () => {
  it('tells a retry under the address of the change that sent it, without the request id', () => {
    const { events, callbacks } = told();
    callbacks.onRetry({ requestId: 'r', label: 'organisations.acme.billing', attempt: 2, delayMs: 400, errorCode: 'ECONNRESET' });
    expect(events).toEqual([{ type: 'change-retry', address: 'organisations.acme.billing', attempt: 2, delayMs: 400, errorCode: 'ECONNRESET', at: 7 }]);
  });

  it('tells nothing of a retry no change sent (the plan’s reads)', () => {
    const { events, callbacks } = told();
    callbacks.onRetry({ requestId: 'r', attempt: 1, delayMs: 5 });
    expect(events).toEqual([]);
  });

  it('tells a rate change, leaving out a rate that nothing limits', () => {
    const { events, callbacks } = told();
    callbacks.onRate({ reason: 'quota-empty', rps: undefined, pausedMs: 900, waiting: 3 });
    expect(events).toEqual([{ type: 'rate', at: 7, reason: 'quota-empty', pausedMs: 900, waiting: 3 }]);
  });

  it('tells a wait as it came, as an event of its own type', () => {
    const { events, callbacks } = told();
    callbacks.onWait({ reason: 'answer', what: 'a read', until: 9_000, at: 3 });
    expect(events).toEqual([{ type: 'wait', reason: 'answer', what: 'a read', until: 9_000, at: 3 }]);
  });
});
