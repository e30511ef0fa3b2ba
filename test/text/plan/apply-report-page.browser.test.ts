/**
 * The apply report in a real browser (test/support/browser.ts): the chart is drawn, the table
 * filters by outcome, the service's hostile text runs nothing, nothing is fetched, and axe-core
 * finds no serious violation. Screenshots under test-artifacts/pages/.
 */
import { describe, expect, it } from 'vitest';
import { renderApplyReportPage } from '../../../src/text/plan/render-apply-report-page.js';
import { findAccessibilityViolations, openPage, useBrowser } from '../../support/browser.js';
import { sampleApplyReport } from './sample-apply-report.js';

const browser = useBrowser();

describe('the apply report of a run under 429s, in Chromium', () => {
  it('draws the chart, lists the failures first and filters by outcome, running and fetching nothing', async () => {
    const opened = await openPage(browser(), 'apply-report', renderApplyReportPage(sampleApplyReport()));
    await opened.page.setViewportSize({ width: 1280, height: 1500 });
    await opened.screenshot('apply-report-top');
    const chart = await opened.page.locator('svg.chart').boundingBox();
    expect(chart?.height).toBeGreaterThan(400);
    expect(await opened.page.locator('svg.chart rect.throttled').count()).toBe(3);
    expect(await opened.page.locator('#rows tr th').first().textContent()).toBe('failed');
    await opened.page.getByLabel('Outcome', { exact: true }).selectOption('failed');
    expect(await opened.page.locator('#rows tr').count()).toBe(2);
    expect(await opened.page.locator('#status').textContent()).toBe('2 of 300 changes match.');
    expect(await opened.page.locator('#rows').textContent()).toContain('invalid: <script>window.pwned = 1</script></details> \\u202Eevil');
    await opened.page.locator('#every-change').scrollIntoViewIfNeeded();
    await opened.screenshot('apply-report-failed');
    expect(await opened.page.evaluate('typeof window.pwned')).toBe('undefined');
    expect([opened.requests, opened.dialogs, opened.errors]).toEqual([[], [], []]);
  });

  it('keeps a long answer without a space within the page’s width', async () => {
    const report = sampleApplyReport();
    const [first, ...rest] = report.summary.notApplied.filter((r) => r.outcome === 'failed');
    const long = { ...first!, failure: { ...first!.failure!, serviceMessage: 'x'.repeat(2_000), serviceCause: `https://example.test/${'y'.repeat(500)}` } };
    const notApplied = report.summary.notApplied.map((r) => (r === first ? long : r));
    const opened = await openPage(browser(), 'apply-report-long-values', renderApplyReportPage({ ...report, summary: { ...report.summary, notApplied } }));
    expect(rest).toHaveLength(1);
    const width = await opened.page.evaluate('[document.documentElement.scrollWidth, document.documentElement.clientWidth]');
    expect(width).toEqual([1280, 1280]);
    expect([opened.requests, opened.dialogs, opened.errors]).toEqual([[], [], []]);
  });

  it('has no serious or critical accessibility violation (axe-core), in light and in dark', async () => {
    const opened = await openPage(browser(), 'apply-report-axe', renderApplyReportPage(sampleApplyReport()));
    const light = await findAccessibilityViolations(opened.page);
    await opened.page.emulateMedia({ colorScheme: 'dark' });
    const dark = await findAccessibilityViolations(opened.page);
    await opened.screenshot('apply-report-dark');
    expect([...light, ...dark].filter((v) => v.impact === 'serious' || v.impact === 'critical')).toEqual([]);
  });
});
