import { describe, expect, it } from 'vitest';
import { checkPlanSafety } from '../../src/plan/check-plan-safety.js';
import { billing, makePlan, problem } from '../support/plan-fixtures.js';

describe('checkPlanSafety', () => {
  const plan = makePlan({ changes: [billing('acme', {}), billing('globex', {})], problems: [problem('umbrella', 'cannot be read')] });

  it('lists what stands in the way in the order apply refuses it: stale, incomplete, over budget', () => {
    expect(checkPlanSafety(plan, { maxChanges: 1, staleReasons: ['config file orgs.yaml changed since the plan'] }).hazards).toEqual([
      { kind: 'stale', changed: ['config file orgs.yaml changed since the plan'] },
      { kind: 'incomplete', problems: plan.problems },
      { kind: 'over-budget', changes: 2, maxChanges: 1 },
    ]);
  });

  it('finds nothing in a complete plan within its budget, and gives the budget only when there is one', () => {
    const clean = makePlan({ changes: plan.changes });
    expect(checkPlanSafety(clean, { maxChanges: 2 })).toEqual({ hazards: [], budget: { changes: 2, maxChanges: 2 } });
    expect(checkPlanSafety(clean)).toEqual({ hazards: [] });
  });

  it('holds a plan of no changes within a budget of 0', () => {
    expect(checkPlanSafety(makePlan(), { maxChanges: 0 }).hazards).toEqual([]);
  });
});
