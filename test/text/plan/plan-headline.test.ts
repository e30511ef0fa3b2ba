import { describe, expect, it } from 'vitest';
import { describeChangeBudget, describeOverBudget } from '../../../src/text/plan/plan-headline.js';

describe('describeOverBudget', () => {
  it('says that nothing was changed only where nothing could have been (apply refusing)', () => {
    expect(describeOverBudget({ changes: 5, maxChanges: 2 }, { nothingChanged: true })).toBe(
      'The plan has 5 changes, more than --max-changes 2. Nothing was changed. Review the plan; then raise --max-changes to at least 5, or apply in parts with --target or --shard.',
    );
    expect(describeOverBudget({ changes: 5, maxChanges: 2 }, { nothingChanged: false })).not.toContain('Nothing was changed');
  });
});

describe('describeChangeBudget', () => {
  it('shows the budget, and warns when apply would refuse the plan', () => {
    expect(describeChangeBudget({ changes: 5, maxChanges: 5 })).toBe('Change budget: 5 of at most 5.\n');
    expect(describeChangeBudget({ changes: 6, maxChanges: 5 })).toBe('Change budget: 6 of at most 5 — over budget: apply will refuse this plan.\n');
  });
});
