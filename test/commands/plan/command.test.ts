import { describe, expect, it } from 'vitest';
import { exitCodeFor, planInputs, type PlanFlags } from '../../../src/commands/plan/command.js';
import { billing, makePlan, problem } from '../../support/plan-fixtures.js';

const flags: PlanFlags = { parallelism: 4, format: 'text' };

describe('plan: flags to the flow’s inputs', () => {
  it('takes the files, selection, state, budget and --out as given', () => {
    expect(planInputs({ ...flags, file: ['a.yaml'], target: ['acme'], shard: '2/3', state: 's.json', maxChanges: 0, out: 'plan.json' })).toEqual({
      selection: { files: ['a.yaml'], targets: ['acme'], shard: '2/3' },
      state: 's.json',
      parallelism: 4,
      maxChanges: 0,
      out: 'plan.json',
    });
    expect(planInputs(flags)).toEqual({ selection: { files: [], targets: [] }, parallelism: 4 });
  });
});

describe('plan: the outcome as an exit code', () => {
  const changes = makePlan({ changes: [billing('acme', {})] });

  it('is 0 when the plan was made, with or without changes', () => {
    expect(exitCodeFor({ plan: changes, hazards: [] }, {})).toBe(0);
    expect(exitCodeFor({ plan: makePlan(), hazards: [] }, { detailedExitcode: true })).toBe(0);
  });

  it('is 2 for changes only with --detailed-exitcode', () => {
    expect(exitCodeFor({ plan: changes, hazards: [] }, { detailedExitcode: true })).toBe(2);
  });

  it('is 1 when the plan is incomplete or over budget, whatever else', () => {
    const incomplete = makePlan({ problems: [problem('acme', 'x')] });
    expect(exitCodeFor({ plan: incomplete, hazards: [{ kind: 'incomplete', problems: incomplete.problems }] }, { detailedExitcode: true })).toBe(1);
    expect(exitCodeFor({ plan: changes, hazards: [{ kind: 'over-budget', changes: 1, maxChanges: 0 }] }, { detailedExitcode: true })).toBe(1);
  });
});
