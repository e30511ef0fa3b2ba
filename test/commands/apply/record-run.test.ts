import { describe, expect, it } from 'vitest';
import { stoppedBy } from '../../../src/commands/apply/record-run.js';
import { OrgformError } from '../../../src/errors.js';
import { makeSummary } from '../../support/plan-fixtures.js';

describe('why an apply stopped, as its report page leads with it', () => {
  it('says nothing of a run that ended by itself or was interrupted: its headline says that', () => {
    expect(stoppedBy({ outcome: { kind: 'applied', summary: makeSummary([]) } })).toBeUndefined();
  });

  it('gives the halt, the refusal and the cancel in the words the command says them', () => {
    const halted = new OrgformError('RATE_LIMITED', 'No request succeeded for 10 min.');
    expect(stoppedBy({ outcome: { kind: 'applied', summary: makeSummary([]), halted } })).toBe('No request succeeded for 10 min.');
    expect(stoppedBy({ outcome: { kind: 'refused', refusal: { kind: 'stale', changed: ['billingEmail of acme', 'the file orgs.yaml'] }, planFile: 'plan.bin' } })).toBe(
      'The saved plan plan.bin is stale: what it was based on changed. Nothing was changed. Run orgform plan again. billingEmail of acme; the file orgs.yaml',
    );
    expect(stoppedBy({ outcome: { kind: 'cancelled' } })).toBe('Apply cancelled. Nothing was changed.');
  });

  it('gives an error’s message and its first ten details, and removes a credential from an error that is not orgform’s', () => {
    const many = new OrgformError('PLAN_UNSAFE', 'Twelve problems.', { details: Array.from({ length: 12 }, (_, i) => `problem ${i + 1}`) });
    expect(stoppedBy({ error: many })).toBe('Twelve problems. problem 1; problem 2; problem 3; problem 4; problem 5; problem 6; problem 7; problem 8; problem 9; problem 10; …and 2 more');
    const leaked = stoppedBy({ error: new Error('fetch https://user:hunter2@orgs.example.test/x failed') });
    expect(leaked).not.toContain('hunter2');
    expect(leaked).toContain('orgs.example.test');
  });
});
