import { describe, expect, it } from 'vitest';
import { dropDisplays, summarisePlan } from '../../src/plan/types.js';
import { acceptInvitation, billing, makePlan, removeChannel, setActive } from '../support/plan-fixtures.js';

describe('dropDisplays', () => {
  it('lets every display go in place and keeps all that apply reads', () => {
    const changes = [acceptInvitation('acme', 'inv_1'), billing('acme', { billingEmail: ['old@acme.test', 'new@acme.test'] }), setActive('acme', null)];
    const before = changes.map(({ display: _display, ...rest }) => structuredClone(rest));
    expect(changes.some((c) => Object.keys(c.display).length > 0)).toBe(true);
    const applicable = dropDisplays(changes);
    expect(applicable).toBe(changes);
    expect(changes.map((c) => c.display)).toEqual([{}, {}, {}]);
    expect(applicable.map(({ display: _display, ...rest }: Record<string, unknown>) => rest)).toEqual(before);
  });
});

describe('summarisePlan', () => {
  it('counts changes by action, the unchanged and the problems', () => {
    const plan = makePlan({ changes: [acceptInvitation('acme', 'inv_1'), billing('acme', {}), removeChannel('acme', 'ch_1'), setActive('acme', null)], unchanged: ['steady', 'still'] });
    expect(summarisePlan(plan)).toEqual({ change: 2, remove: 1, accept: 1, unchanged: 2, problems: 0 });
  });
});
