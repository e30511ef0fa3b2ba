import { describe, expect, it } from 'vitest';
import { rateEvent, retryEvent } from '../../../src/commands/apply/client-events.js';

describe('client events: retryEvent and rateEvent', () => {
  it('tells a retry under the address of the change that sent it, without the request id', () => {
    expect(retryEvent({ requestId: 'r', label: 'organisations.acme.billing', attempt: 2, delayMs: 400, errorCode: 'ECONNRESET' }, 7)).toEqual({
      type: 'change-retry',
      address: 'organisations.acme.billing',
      attempt: 2,
      delayMs: 400,
      errorCode: 'ECONNRESET',
      at: 7,
    });
  });

  it('tells nothing of a retry no change sent (the plan’s reads)', () => {
    expect(retryEvent({ requestId: 'r', attempt: 1, delayMs: 5 }, 1)).toBeUndefined();
  });

  it('tells a rate change, leaving out a rate that nothing limits', () => {
    expect(rateEvent({ reason: 'quota-empty', rps: undefined, pausedMs: 900, waiting: 3 }, 9)).toEqual({ type: 'rate', at: 9, reason: 'quota-empty', pausedMs: 900, waiting: 3 });
  });
});
