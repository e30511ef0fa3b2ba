import { describe, expect, it } from 'vitest';
import { renderPlan } from '../../../src/commands/plan/view.js';
import { renderPlanDigest, renderPlanForReview } from '../../../src/text/plan/render-plan-for-review.js';
import { digestPlan } from '../../../src/plan/plan-digest.js';
import { COMPACT_THRESHOLD, renderText } from '../../../src/text/plan/render-text.js';
import { billing, everyKindPlan, largePlan, makePlan, problem, removeChannel, setActive } from '../../support/plan-fixtures.js';

const plain = { color: false };

describe('renderPlanDigest', () => {
  it('shows the counts by action and kind, the first changes one line each, and where to see them all', () => {
    const plan = largePlan(20);
    plan.changes.push(removeChannel('org-00003', 'ch_1'), setActive('org-00001', 'org-00000'));
    plan.journaled = ['organisations.org-00000.invitations.accept.inv_0'];
    expect(renderPlanDigest(plan, { ...plain, firstChanges: 4 })).toMatchInlineSnapshot(`
      "orgform plan for https://orgs.example.test

      orgform will perform 62 changes:
        + accept  20: 20 invitations to accept
        ~ update  21: 20 billing updates, 1 change of active organisation
        - delete  21: 20 invitations to revoke, 1 notification channel to remove

      The changes, the same change said once:
        + Invitations to accept — 20 organisations: 20 single changes
            org-00000: inv_a0
            org-00001: inv_a1
            org-00002: inv_a2
            org-00003: inv_a3
            … and 16 more single changes
        ~ Billing: billingEmail — 20 organisations: 20 single changes
            org-00000: "old-0@example.test" → "new-0@example.test"
            org-00001: "old-1@example.test" → "new-1@example.test"
            org-00002: "old-2@example.test" → "new-2@example.test"
            org-00003: "old-3@example.test" → "new-3@example.test"
            … and 16 more single changes
        - Invitations to revoke — 20 organisations: 20 single changes
            note: cannot be checked before apply: the interface cannot list invitations
            org-00000: inv_r0
            org-00001: inv_r1
            org-00002: inv_r2
            org-00003: inv_r3
            … and 16 more single changes
        - Notification channels to remove — 1 organisation: 1 single change
            org-00003: ch_1
        ~ Active organisation — 1 organisation: 1 single change
            org-00001: org-00000 → org-00001

      See every change with \`orgform plan\` (same files and options), or save them with \`orgform plan --out FILE\` and apply exactly those with \`orgform apply FILE\`.

      1 organisation unchanged.
      1 one-shot change already done according to the journal, not planned again.

      Plan digest: sha256:a06c2e78e4c7d7b86feb92a1598d7344dbf981e8742d083fed525e1f2f6024d3
      Plan: 21 to change, 21 to remove, 20 to accept.
      "
    `);
  });

  it('stays the same length however many changes the plan has', () => {
    const lines = (n: number) => renderPlanDigest(largePlan(n), plain).split('\n').length;
    expect(lines(10_000)).toBe(lines(100));
    expect(lines(100)).toBeLessThan(40);
  });

  it('lists every change, without "and more", when there are no more than it shows', () => {
    const text = renderPlanDigest(makePlan({ changes: [billing('a', { billingEmail: ['x', 'y'] }), setActive('a', null)] }), plain);
    expect(text).toContain('  ~ Billing: billingEmail — 1 organisation: 1 single change\n      a: "x" → "y"\n  ~ Active organisation — 1 organisation: 1 single change\n      a: (none) → a\n');
    expect(text).not.toContain('more');
  });

  it('caps the problems too, and says where to see them all', () => {
    const problems = Array.from({ length: 30 }, (_, i) => problem(`bad-${i}`, 'HTTP 403 forbidden'));
    const text = renderPlanDigest(makePlan({ changes: largePlan(30).changes, problems }), plain);
    expect(text).toContain('Problems (30): their changes are missing from this plan\n  ! bad-0: HTTP 403 forbidden\n');
    expect(text).not.toContain('bad-10:');
    expect(text).toContain('  … and 20 more (`orgform plan` lists them all).');
  });

  it('keeps escape sequences in addresses and values from reaching the terminal, and paints only with colour', () => {
    const plan = makePlan({ changes: [billing('a', { billingEmail: ['x', 'y\u001b[2J\nz'] })] });
    expect(renderPlanDigest(plan, plain)).toContain('"y\\u001b[2J\\nz"');
    expect(renderPlanDigest(plan, plain)).not.toMatch(/\u001b/);
    expect(renderPlanDigest(plan, { color: true })).toContain('\u001b[33m~\u001b[39m \u001b[1mBilling: billingEmail\u001b[22m');
  });

  it('ends with the same plan line as the full plan', () => {
    const plan = everyKindPlan();
    expect(renderPlanDigest(plan, plain).trimEnd().split('\n').at(-1)).toBe(renderText(plan, plain).trimEnd().split('\n').at(-1));
  });
});

describe('renderText above the compact threshold', () => {
  it('prints one line per change, in the block view order, still every change', () => {
    const organisations = Math.ceil(COMPACT_THRESHOLD / 3) + 1;
    const plan = largePlan(organisations);
    plan.changes.push(setActive('org-00001', null));
    const text = renderText(plan, plain);
    const changeLines = text.split('\n').filter((l) => /^ {2}[+~-] (organisations|activeOrganisation)/.test(l));
    expect(changeLines).toHaveLength(plan.changes.length);
    expect(changeLines.slice(0, 3)).toEqual([
      '  ~ organisations.org-00000.billing: billingEmail "old-0@example.test" → "new-0@example.test"',
      '  + organisations.org-00000.invitations.accept.inv_a0',
      '  - organisations.org-00000.invitations.revoke.inv_r0 — note: cannot be checked before apply: the interface cannot list invitations',
    ]);
    expect(changeLines.at(-1)).toBe('  ~ activeOrganisation: (none) → org-00001');
    expect(text).not.toContain('# org-00000');
    expect(text.trimEnd().split('\n').at(-1)).toBe(`Plan: ${organisations + 1} to change, ${organisations} to remove, ${organisations} to accept.`);
  });

  it('then says the same changes grouped, above the closing line: the patterns whole, a few single changes of each kind and field', () => {
    const changes = Array.from({ length: 120 }, (_, i) => billing(`org-${String(i).padStart(3, '0')}`, { platformID: ['plat_legacy', `plat_bulk_${i % 2}`], ...(i < 8 ? { billingEmail: [`old-${i}`, `new-${i}`] } : {}) }));
    const plan = makePlan({ changes });
    const text = renderText(plan, plain);
    const grouped = text.slice(text.indexOf('The same changes, each said once (every change is listed above):'));
    expect(text.indexOf('  ~ organisations.org-119.billing')).toBeLessThan(text.indexOf('The same changes'));
    expect(grouped).toBe(
      [
        'The same changes, each said once (every change is listed above):',
        '  ~ Billing: platformID — 120 organisations: 2 groups',
        '      "plat_legacy" → "plat_bulk_0": 60 organisations (org-000, org-002, org-004 and 57 more)',
        '      "plat_legacy" → "plat_bulk_1": 60 organisations (org-001, org-003, org-005 and 57 more)',
        '  ~ Billing: billingEmail — 8 organisations: 8 single changes',
        ...[0, 1, 2, 3, 4].map((i) => `      org-00${i}: "old-${i}" → "new-${i}"`),
        '      … and 3 more single changes',
        '',
        `Plan digest: ${digestPlan(plan)}`,
        'Plan: 120 to change, 0 to remove, 0 to accept.',
        '',
      ].join('\n'),
    );
  });

  it('keeps the block view at the threshold itself', () => {
    const changes = Array.from({ length: COMPACT_THRESHOLD }, (_, i) => billing(`org-${i}`, { billingEmail: ['a', 'b'] }));
    const text = renderText(makePlan({ changes }), plain);
    expect(text).toContain('  # org-0 (org_org-0)\n  ~ organisations.org-0.billing\n      billingEmail: "a" → "b"\n');
    const compact = renderText(makePlan({ changes: [...changes, billing('zz', { billingEmail: ['a', 'b'] })] }), plain);
    expect(compact).toContain('  ~ organisations.org-0.billing: billingEmail "a" → "b"\n');
  });
});

const plan = (n: number) => makePlan({ changes: Array.from({ length: n }, (_, i) => billing(`org-${i}`, { billingEmail: ['a@x.test', 'b@x.test'] })) });

describe('renderPlanForReview', () => {
  it('shows the whole plan on a terminal, and in a log up to the threshold', () => {
    expect(renderPlanForReview(plan(3), { tty: true, color: false, compactAbove: 2 })).toBe(renderPlan(plan(3), 'text', { color: false }));
    expect(renderPlanForReview(plan(2), { tty: false, color: false, compactAbove: 2 })).toBe(renderPlan(plan(2), 'text', { color: false }));
  });

  it('shows a digest in a log past the threshold, never coloured', () => {
    const digest = renderPlanForReview(plan(3), { tty: false, color: true, compactAbove: 2 });
    expect(digest).toContain('orgform will perform 3 changes:');
    expect(digest).not.toContain('\u001b[');
  });

  it('colours as the caller says, in a log too (FORCE_COLOR)', () => {
    expect(renderPlanForReview(plan(1), { tty: false, color: true })).toContain('\u001b[');
    expect(renderPlanForReview(plan(1), { tty: true, color: false })).not.toContain('\u001b[');
  });
});
