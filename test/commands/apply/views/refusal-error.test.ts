import { describe, expect, it } from 'vitest';
import { refusalError } from '../../../../src/commands/apply/views/refusal-error.js';
import { UsageError } from '../../../../src/errors.js';
import { problem } from '../../../support/plan-fixtures.js';

describe('refusalError', () => {
  it('says what stands in the way, that nothing was changed, and what to do', () => {
    const cases = [
      [{ kind: 'cannot-confirm', why: 'standard input is not a terminal' }, 'USAGE', /no one can answer: standard input is not a terminal\. Review the plan .* Nothing was changed\.$/],
      [{ kind: 'other-service', madeFor: 'https://a.test', serviceKey: 'https://b.test' }, 'PLAN_STALE', /^The saved plan plan\.json was made for https:\/\/a\.test, not https:\/\/b\.test\. Nothing was changed\./],
      [{ kind: 'stale', changed: ['x changed'] }, 'PLAN_STALE', /^The saved plan plan\.json is stale: what it was based on changed\. Nothing was changed\. Run orgform plan again\.$/],
      [{ kind: 'incomplete', problems: [problem('acme', 'HTTP 403')] }, 'PLAN_UNSAFE', /^1 organisation could not be read, so the plan is incomplete\. Nothing was changed\./],
      [{ kind: 'over-budget', changes: 5, maxChanges: 2 }, 'PLAN_UNSAFE', /^The plan has 5 changes, more than --max-changes 2\. Nothing was changed\. Review the plan; then raise --max-changes to at least 5, or apply in parts with --target or --shard\.$/],
    ] as const;
    for (const [refusal, code, message] of cases) {
      const error = refusalError(refusal, 'plan.json');
      expect(error.code).toBe(code);
      expect(error.message).toMatch(message);
    }
  });

  it('lists what changed and what could not be read as the error’s details', () => {
    expect(refusalError({ kind: 'stale', changed: ['a changed', 'b changed'] }, 'p.json').details).toEqual(['a changed', 'b changed']);
    expect(refusalError({ kind: 'incomplete', problems: [problem('acme', 'HTTP 403'), problem('hooli', 'HTTP 404')] }).details).toEqual(['HTTP 403', 'HTTP 404']);
  });

  it('is a usage error when no one can answer, as a mistake in how apply was run', () => {
    expect(refusalError({ kind: 'cannot-confirm', why: 'x' })).toBeInstanceOf(UsageError);
  });
});
