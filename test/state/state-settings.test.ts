import { describe, expect, it } from 'vitest';
import { stateSettings } from '../../src/state/state-settings.js';

describe('stateSettings', () => {
  it('takes the batch, its delay and the timeout from the environment, within their documented ranges', () => {
    expect(stateSettings({ env: {} })).toEqual({ batch: { maxEntries: 500, maxDelayMs: 2_000 }, timeoutMs: 30_000 });
    expect(stateSettings({ env: { ORGFORM_STATE_BATCH: '50', ORGFORM_STATE_FLUSH_MS: '100', ORGFORM_STATE_TIMEOUT_MS: '5000' } })).toEqual({ batch: { maxEntries: 50, maxDelayMs: 100 }, timeoutMs: 5_000 });
    expect(() => stateSettings({ env: { ORGFORM_STATE_BATCH: '0' } })).toThrow('ORGFORM_STATE_BATCH must be a whole number from 1 to 10000 (got "0").');
    expect(() => stateSettings({ env: { ORGFORM_STATE_BATCH: '10001' } })).toThrow('ORGFORM_STATE_BATCH must be a whole number from 1 to 10000 (got "10001").');
    expect(() => stateSettings({ env: { ORGFORM_STATE_FLUSH_MS: '60001' } })).toThrow(/from 10 to 60000/);
    expect(() => stateSettings({ env: { ORGFORM_STATE_TIMEOUT_MS: 'soon' } })).toThrow(/ORGFORM_STATE_TIMEOUT_MS must be a whole number/);
  });
});
