import { describe, expect, it } from 'vitest';
import { renderGroupedChangeLines } from '../../../src/text/plan/render-grouped-change-lines.js';
import { billing, everyKindPlan, makePlan, revokeInvitation } from '../../support/plan-fixtures.js';
import { fivePatternPlan } from './pattern-plans.js';

describe('renderGroupedChangeLines', () => {
  it('says each kind and field with its counts, then a line per group and per single change', () => {
    expect(renderGroupedChangeLines(fivePatternPlan(10_000).changes, { color: false }).join('\n')).toMatchInlineSnapshot(`
      "  ~ Billing: customerID — 2000 organisations: 1 group
            (none) → "cus_shared": 2000 organisations (org-000003, org-000008, org-000013 and 1997 more)
        ~ Billing: platformID — 6000 organisations: 3 groups
            "plat_legacy" → "plat_bulk_1": 2000 organisations (org-000000, org-000005, org-000010 and 1997 more)
            "plat_legacy" → "plat_bulk_2": 2000 organisations (org-000001, org-000006, org-000011 and 1997 more)
            "plat_legacy" → "plat_bulk_3": 2000 organisations (org-000002, org-000007, org-000012 and 1997 more)
        - Invitations to revoke — 2000 organisations: 1 group
            note: cannot be checked before apply: the interface cannot list invitations
            inv_onboarding_bot: 2000 organisations (org-000004, org-000009, org-000014 and 1997 more)"
    `);
  });

  it('shows single changes with their organisation, the active organisation last', () => {
    const lines = renderGroupedChangeLines(everyKindPlan().changes, { color: false });
    expect(lines).toContain('      acme: "old@acme.test" → "new@acme.test"');
    expect(lines).toContain('      globex: ch_9');
    expect(lines.slice(-2)).toEqual(['  ~ Active organisation — 1 organisation: 1 single change', '      acme: globex → acme']);
  });

  it('names as many organisations per group as asked, or none', () => {
    const changes = ['a', 'b', 'c'].map((s) => revokeInvitation(s, 'inv_x'));
    expect(renderGroupedChangeLines(changes, { color: false, names: 5 })).toContain('      inv_x: 3 organisations (a, b, c)');
    expect(renderGroupedChangeLines(changes, { color: false, names: 0 })).toContain('      inv_x: 3 organisations');
  });

  it('lists as many groups and single changes per kind and field as asked, then how many more', () => {
    const changes = [...['a', 'b', 'c', 'd', 'e', 'f'].map((s, i) => revokeInvitation(s, `inv_${i % 3}`)), ...['g', 'h', 'i'].map((s) => revokeInvitation(s, `inv_${s}`))];
    expect(renderGroupedChangeLines(changes, { color: false, maxGroups: 1, maxSingles: 2 })).toEqual([
      '  - Invitations to revoke — 9 organisations: 3 groups and 3 single changes',
      '      note: cannot be checked before apply: the interface cannot list invitations',
      '      inv_0: 2 organisations (a, d)',
      '      … and 2 more groups (4 organisations)',
      '      g: inv_g',
      '      h: inv_h',
      '      … and 1 more single change',
    ]);
  });

  it('colours the marker and the heading only when asked', () => {
    const [heading] = renderGroupedChangeLines([billing('a', { customerID: ['x', 'y'] })], { color: true });
    expect(heading).toBe('  \u001b[33m~\u001b[39m \u001b[1mBilling: customerID\u001b[22m — 1 organisation: 1 single change');
  });

  it('writes no control, invisible or bidirectional character of a value or a slug to the terminal, and marks them', () => {
    const plan = makePlan({ changes: [billing('acme\u202Egnp', { customerID: ['\u001b[2Jold', 'sub\u200b_acme\nx'] })] });
    const text = renderGroupedChangeLines(plan.changes, { color: false }).join('\n');
    expect(text).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u200b\u202e]/);
    expect(text).toContain('acme\\u202Egnp (contains invisible characters): "\\u001b[2Jold" → "sub\\u200B_acme\\nx" (contains invisible characters)');
  });
});
