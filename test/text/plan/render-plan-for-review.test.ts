import { describe, expect, it } from 'vitest';
import { renderPlan } from '../../../src/commands/plan/view.js';
import { renderPlanDigest, renderPlanForReview } from '../../../src/text/plan/render-plan-for-review.js';
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

      The first 4:
        ~ organisations.org-00000.billing: billingEmail "old-0@example.test" → "new-0@example.test"
        + organisations.org-00000.invitations.accept.inv_a0
        - organisations.org-00000.invitations.revoke.inv_r0 — note: cannot be checked before apply: the interface cannot list invitations
        ~ organisations.org-00001.billing: billingEmail "old-1@example.test" → "new-1@example.test"
        … and 58 more. See them all with \`orgform plan\` (same files and options), or save them with \`orgform plan --out FILE\` and apply exactly those with \`orgform apply FILE\`.

      1 organisation unchanged.
      1 one-shot change already done according to the journal, not planned again.

      Plan: 21 to change, 21 to remove, 20 to accept.
      "
    `);
  });

  it('stays the same length however many changes the plan has', () => {
    const lines = (n: number) => renderPlanDigest(largePlan(n), plain).split('\n').length;
    expect(lines(10_000)).toBe(lines(100));
    expect(lines(100)).toBeLessThan(25);
  });

  it('lists every change, without "and more", when there are no more than it shows', () => {
    const text = renderPlanDigest(makePlan({ changes: [billing('a', { billingEmail: ['x', 'y'] }), setActive('a', null)] }), plain);
    expect(text).toContain('The changes:\n  ~ organisations.a.billing: billingEmail "x" → "y"\n  ~ activeOrganisation: (none) → a\n');
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
    expect(renderPlanDigest(plan, { color: true })).toContain('\u001b[33m~\u001b[39m organisations.a.billing');
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
