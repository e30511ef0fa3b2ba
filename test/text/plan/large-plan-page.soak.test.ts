/**
 * The plan page of large plans in Chromium, in the soak project (each takes seconds): 10,000 changes
 * in five patterns and 100,000 single changes open, show every change on asking, find one
 * organisation, and fetch nothing. How fast is the bench's (scripts/bench/page-case.mjs), not this.
 */
import { describe, expect, it } from 'vitest';
import { renderPlanPage } from '../../../src/text/plan/render-plan-page.js';
import { openPage, useBrowser } from '../../support/browser.js';
import { fivePatternPlan, singlesPlan } from './pattern-plans.js';

const browser = useBrowser();

describe('the plan page of large plans, in Chromium', () => {
  it('shows 10,000 changes in five patterns as five groups, each a button away, and all of them on asking', async () => {
    const opened = await openPage(browser(), 'plan-10000', renderPlanPage(fivePatternPlan(10_000)));
    await opened.screenshot('plan-10000-top');
    expect(await opened.page.getByRole('button', { name: 'Show these 2,000' }).count()).toBe(5);
    await opened.page.getByRole('button', { name: 'Show these 2,000' }).nth(2).click();
    expect(await opened.page.locator('#status').textContent()).toBe('2,000 of 10,000 rows match; showing the first 500.');
    await opened.page.getByRole('button', { name: 'Show every row' }).click();
    await opened.page.getByRole('button', { name: 'Show all 10,000' }).click();
    expect(await opened.page.locator('#rows tr').count()).toBe(10_000);
    expect([opened.requests, opened.dialogs, opened.errors]).toEqual([[], [], []]);
  }, 60_000);

  it('opens 100,000 single changes and finds one organisation among them', async () => {
    const opened = await openPage(browser(), 'plan-100000', renderPlanPage(singlesPlan(100_000)));
    expect(await opened.page.locator('#rows tr').count()).toBe(500);
    await opened.page.getByLabel('Organisation', { exact: true }).fill('org-054321');
    expect(await opened.page.locator('#rows tr th').allTextContents()).toEqual(['org-054321']);
    expect(await opened.page.locator('#status').textContent()).toBe('1 of 100,000 rows match.');
    await opened.screenshot('plan-100000-one-organisation');
    expect([opened.requests, opened.dialogs, opened.errors]).toEqual([[], [], []]);
  }, 60_000);
});
