/**
 * The plan page in a real browser (test/support/browser.ts): it shows every organisation and every
 * change of the 300-organisation example and filters them, runs nothing of a hostile plan's values
 * and shows them as text, makes no request, and passes axe-core. Screenshots and the pages
 * themselves are kept under test-artifacts/pages/.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { Plan } from '../../../src/plan/types.js';
import { itemsOf } from '../../../src/text/plan/group-same-changes.js';
import { renderPlanPage } from '../../../src/text/plan/render-plan-page.js';
import { findAccessibilityViolations, openPage, useBrowser, type OpenedPage } from '../../support/browser.js';
import { planBulkExample } from './bulk-example-plan.js';
import { HOSTILE_VALUES, hostilePlan } from './hostile-plan.js';
import { billing, makePlan, problem, revokeInvitation } from '../../support/plan-fixtures.js';

const browser = useBrowser();
let bulk: Plan;

beforeAll(async () => {
  bulk = await planBulkExample();
}, 60_000);

/** What the table shows now, row by row: its cells' text. */
async function shownRows(opened: OpenedPage): Promise<string[][]> {
  return opened.page.locator('#rows tr').evaluateAll((trs) => trs.map((tr) => [...tr.children].map((cell) => cell.textContent ?? '')));
}

async function showAll(opened: OpenedPage): Promise<void> {
  const all = opened.page.locator('#all');
  if (await all.isVisible()) await all.click();
  const more = opened.page.locator('#more');
  while (await more.isVisible()) await more.click();
}

function expectNothingRunOrFetched(opened: OpenedPage): void {
  expect(opened.requests).toEqual([]);
  expect(opened.dialogs).toEqual([]);
  expect(opened.errors).toEqual([]);
}

describe('the plan page of the 300-organisation example, in Chromium', () => {
  it('shows every organisation and every change, and its groups', async () => {
    const opened = await openPage(browser(), 'plan-300', renderPlanPage(bulk));
    await opened.screenshot('plan-300-top');
    await showAll(opened);
    const rows = await shownRows(opened);
    const items = bulk.changes.flatMap(itemsOf);
    expect(rows).toHaveLength(items.length);
    expect(new Set(rows.map((r) => r[0]))).toEqual(new Set(bulk.changes.map((c) => c.organisation.slug)));
    expect(new Set(bulk.changes.map((c) => c.organisation.slug)).size).toBe(300);
    expect(rows.map((r) => `${r[0]} ${r[3]}`)).toEqual(items.map((i) => `${i.change.organisation.slug} ${i.field}`));
    expect(await opened.page.locator('#status').textContent()).toBe(`${items.length} rows.`);
    expect(await opened.page.getByRole('button', { name: 'Show these 100' }).count()).toBe(3);
    expectNothingRunOrFetched(opened);
  });

  it('finds one organisation by its slug, and shows one group at the press of its button', async () => {
    const opened = await openPage(browser(), 'plan-300-filtered', renderPlanPage(bulk));
    const items = bulk.changes.flatMap(itemsOf);
    const slug = 'apex-acme-010';
    await opened.page.getByLabel('Organisation', { exact: true }).fill(slug);
    const rows = await shownRows(opened);
    expect(rows.map((r) => r[0])).toEqual(items.filter((i) => i.change.organisation.slug === slug).map(() => slug));
    expect(rows.length).toBeGreaterThan(0);
    expect(await opened.page.locator('#status').textContent()).toBe(`${rows.length} of ${items.length} rows match.`);
    await opened.page.evaluate("document.getElementById('every-change').scrollIntoView()");
    await opened.screenshot('plan-300-one-organisation');

    await opened.page.getByRole('button', { name: 'Clear the filters' }).click();
    await opened.page.getByRole('button', { name: 'Show these 100' }).first().click();
    expect(await opened.page.locator('#group-label').textContent()).toContain('Billing: platformID:');
    const group = await shownRows(opened);
    expect(group).toHaveLength(100);
    expect(new Set(group.map((r) => r[5]))).toEqual(new Set(['"plat_bulk_1"']));
    await opened.page.getByLabel('Kind', { exact: true }).selectOption('revoke invitation');
    expect(await opened.page.locator('#status').textContent()).toBe(`0 of ${items.length} rows match.`);
    await opened.page.getByRole('button', { name: 'Show every row' }).click();
    expect((await shownRows(opened)).every((r) => r[2] === 'revoke invitation')).toBe(true);
    expectNothingRunOrFetched(opened);
  });

  it('has no serious or critical accessibility violation (axe-core)', async () => {
    const opened = await openPage(browser(), 'plan-300-axe', renderPlanPage(bulk));
    const violations = await findAccessibilityViolations(opened.page);
    expect(violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')).toEqual([]);
  });
});

describe('the plan page of hostile values, in Chromium', () => {
  it('keeps a long value without a space (a slug of 500 characters, an id, a message) within the page’s width', async () => {
    const slug = `${'a'.repeat(300)}-${'b'.repeat(199)}`;
    const plan = makePlan({
      changes: [billing(slug, { customerID: [null, 'c'.repeat(600)] }), revokeInvitation(slug, 'i'.repeat(500)), revokeInvitation('acme', 'i'.repeat(500))],
      problems: [problem(slug, 'm'.repeat(600))],
    });
    const opened = await openPage(browser(), 'plan-long-values', renderPlanPage(plan));
    await opened.screenshot('plan-long-values', { fullPage: true });
    const width = await opened.page.evaluate('[document.documentElement.scrollWidth, document.documentElement.clientWidth]');
    expect(width).toEqual([1280, 1280]);
    // The group's button stays in view, beside the names.
    const button = await opened.page.getByRole('button', { name: 'Show these 2' }).boundingBox();
    expect(button!.x + button!.width).toBeLessThanOrEqual(1280);
    expectNothingRunOrFetched(opened);
  });

  it('runs no script of theirs, loads nothing, and shows every value as text, escaped as the text plan shows it', async () => {
    const opened = await openPage(browser(), 'plan-hostile', renderPlanPage(hostilePlan()));
    await showAll(opened);
    await opened.page.getByRole('button', { name: /^Show these/ }).first().click();
    await opened.page.getByRole('button', { name: 'Show every row' }).click();
    await opened.screenshot('plan-hostile', { fullPage: true });
    expect(await opened.page.evaluate('typeof window.pwned')).toBe('undefined');
    const cells = (await shownRows(opened)).flat();
    for (const value of HOSTILE_VALUES.filter((v) => !/[\u200b\u202e\u2066\u2069\ufeff\u2028]/.test(v))) expect(cells.join('\n')).toContain(JSON.stringify(value));
    expect(cells).toContain('"sub\\u200B_acme"contains invisible characters');
    expect(cells.join('\n')).not.toMatch(/[\u200b\u202e\u2066\u2069\ufeff\u2028]/);
    // The page's own elements only: none made from a value.
    expect(await opened.page.locator('img, iframe, svg, a[href^="javascript"], main script').count()).toBe(0);
    expectNothingRunOrFetched(opened);
  });

  it('finds the marked changes by their mark: invisible characters, and what cannot be checked before apply', async () => {
    const plan = hostilePlan();
    const opened = await openPage(browser(), 'plan-hostile-marked', renderPlanPage(plan));
    const marked = opened.page.getByLabel('Marked', { exact: true });
    await marked.fill('invisible');
    const invisible = await shownRows(opened);
    // Each row with a value (or a slug) holding one: the four hostile values, old and new, and the slug zw\u200Bslug.
    expect(invisible.map((r) => r[0]).sort()).toEqual(['o6', 'o7', 'o8', 'o9', 'p6', 'p7', 'p8', 'p9', 'zw\\u200Bslugcontains invisible characters'].sort());
    expect(invisible.every((r) => r.join(' ').includes('contains invisible characters'))).toBe(true);
    await marked.fill('cannot be checked');
    expect((await shownRows(opened)).map((r) => r[2])).toEqual(['revoke invitation']);
    await marked.fill('acme');
    // A mark's words only: not a value that happens to hold them.
    expect(await shownRows(opened)).toEqual([]);
    expectNothingRunOrFetched(opened);
  });

  it('has no serious or critical accessibility violation (axe-core)', async () => {
    const opened = await openPage(browser(), 'plan-hostile-axe', renderPlanPage(hostilePlan()));
    const violations = await findAccessibilityViolations(opened.page);
    expect(violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')).toEqual([]);
  });
});
