import { describe, expect, it } from 'vitest';
import { countEvent, emptyTally } from '../../../../src/commands/apply/views/progress-display.js';
import { result } from '../../../support/plan-fixtures.js';

describe('countEvent', () => {
  it('counts finished changes by outcome and retries, and nothing else', () => {
    const tally = emptyTally();
    for (const outcome of ['applied', 'failed', 'skipped', 'not-started', 'already-done', 'stale'] as const) countEvent(tally, { type: 'change-end', at: 0, ...result({ outcome }) });
    countEvent(tally, { type: 'change-retry', at: 0, address: 'a', attempt: 1, delayMs: 1 });
    countEvent(tally, { type: 'change-start', at: 0, address: 'a', organisation: 'a', kind: 'billing' });
    countEvent(tally, { type: 'interrupted', at: 0, inFlight: 2 });
    expect(tally).toEqual({ done: 6, failed: 1, skipped: 1, stale: 1, retries: 1 });
  });
});
