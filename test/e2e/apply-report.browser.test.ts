/**
 * The apply report as `apply --report html=FILE` writes it, in a real browser (test/support/browser.ts):
 * of a run against the emulator with failures, of a refused run, and of 10,000 changes
 * (the page made as apply makes it, from its events, without running 10,000 of them here). Each
 * runs no script of the service's, fetches nothing, and axe-core finds no serious violation.
 * Screenshots under test-artifacts/pages/.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ApplyReportRecord } from '../../src/commands/apply/views/apply-report-record.js';
import { TimelineFeed } from '../../src/commands/apply/views/timeline-feed.js';
import type { ApplyEvent } from '../../src/executor/events.js';
import type { ApplicableChange } from '../../src/plan/types.js';
import { renderApplyReportPage } from '../../src/text/plan/render-apply-report-page.js';
import { findAccessibilityViolations, openPage, useBrowser, type OpenedPage } from '../support/browser.js';
import { setupBillingWorld } from '../support/emulator-workspace.js';
import { runCli } from '../support/run-cli.js';

const browser = useBrowser();
const T0 = Date.UTC(2026, 0, 15, 9, 30, 0);

async function reportOfRun(args: string[], prepare: (world: Awaited<ReturnType<typeof setupBillingWorld>>) => void): Promise<string> {
  const world = await setupBillingWorld(12);
  prepare(world);
  await runCli(['apply', '--auto-approve', '--parallelism', '3', '--report', 'html=apply.html', ...args], { cwd: world.cwd, env: world.env });
  return readFile(join(world.cwd, 'apply.html'), 'utf8');
}

async function expectAccessible(opened: OpenedPage): Promise<void> {
  const light = await findAccessibilityViolations(opened.page);
  await opened.page.emulateMedia({ colorScheme: 'dark' });
  const dark = await findAccessibilityViolations(opened.page);
  await opened.page.emulateMedia({ colorScheme: 'light' });
  expect([...light, ...dark].filter((v) => v.impact === 'serious' || v.impact === 'critical')).toEqual([]);
}

/**
 * n billing changes told to the report as apply tells them: 200 started a second, 20 in flight, a
 * 429 a quarter of the way that holds every request back for 2 s and cuts the rate, which grows
 * back; one change in 997 fails.
 */
function bulkReport(n: number): string {
  const pad = (i: number) => String(i).padStart(5, '0');
  const changes = Array.from({ length: n }, (_, i) => ({ address: `organisations.org-${pad(i)}.billing`, kind: 'billing', action: 'update', organisation: { slug: `org-${pad(i)}`, id: `org_${i}` } }));
  const feed = new TimelineFeed(T0);
  const record = new ApplyReportRecord();
  record.starting(changes as unknown as ApplicableChange[]);
  const events: ApplyEvent[] = [{ type: 'apply-start', total: n, parallelism: 20, at: T0 }];
  const pauseAt = Math.floor(n / 4);
  events.push({ type: 'rate', reason: 'throttled', rps: 120, pausedMs: 2_000, waiting: 20, at: T0 + pauseAt * 5 });
  for (let k = 1; k <= 4; k++) events.push({ type: 'rate', reason: 'announced', rps: 120 + k * 20, pausedMs: 0, waiting: 0, at: T0 + pauseAt * 5 + 2_000 + k * 5_000 });
  changes.forEach((c, i) => {
    const at = T0 + i * 5 + (i >= pauseAt ? 2_000 : 0);
    const common = { address: c.address, organisation: c.organisation.slug, kind: 'billing' as const };
    events.push({ type: 'change-start', ...common, at });
    const failure = i % 997 === 0 ? { outcome: 'failed' as const, failure: { operation: 'updateBillingDetails', message: 'HTTP 500', status: 500 } } : { outcome: 'applied' as const };
    events.push({ type: 'change-end', ...common, ...failure, durationMs: 100 + (i % 7) * 10, at: at + 100 + (i % 7) * 10 });
  });
  for (const event of events.sort((a, b) => a.at - b.at)) {
    feed.event(event);
    record.event(event);
  }
  const end = events.at(-1)!.at;
  return renderApplyReportPage(record.report(end, { baseUrl: 'https://orgs.example.test', startedAt: T0, timeline: feed.timeline(end)! }));
}

describe('the apply report as apply writes it, in Chromium', () => {
  it('of a run with failures: the failures first, the chart drawn, the service’s text inert', async () => {
    const page = await reportOfRun([], (world) => {
      world.emulator.faults.add({ operation: 'updateBillingDetails', times: 2, fault: { kind: 'status', status: 422, body: '{"code":"invalid","message":"<img src=x onerror=\\"window.pwned=1\\"> not an address"}', contentType: 'application/json' } });
    });
    const opened = await openPage(browser(), 'apply-report-run', page);
    await opened.page.setViewportSize({ width: 1280, height: 1600 });
    await opened.screenshot('apply-report-run');
    expect(await opened.page.locator('svg.chart rect.sent').count()).toBeGreaterThan(0);
    expect(await opened.page.locator('#rows tr th').first().textContent()).toBe('failed');
    await opened.page.getByLabel('Outcome', { exact: true }).selectOption('failed');
    expect(await opened.page.locator('#status').textContent()).toBe('2 of 12 changes match.');
    expect(await opened.page.locator('#failures-heading + p + h3 + dl dd').nth(1).textContent()).toBe('invalid: <img src=x onerror="window.pwned=1"> not an address');
    expect(await opened.page.evaluate('typeof window.pwned')).toBe('undefined');
    expect([opened.requests, opened.dialogs, opened.errors]).toEqual([[], [], []]);
    await expectAccessible(opened);
  });

  it('of a refused run: why it stopped, that nothing was changed, and nothing else', async () => {
    const page = await reportOfRun(['--max-changes', '5'], () => undefined);
    const opened = await openPage(browser(), 'apply-report-refused', page, { scripted: false });
    await opened.screenshot('apply-report-refused');
    expect(await opened.page.locator('.banner.bad').textContent()).toBe('Why apply stopped: The plan has 12 changes, more than --max-changes 5. Nothing was changed. Review the plan; then raise --max-changes to at least 12, or apply in parts with --target or --shard.');
    expect([opened.requests, opened.dialogs, opened.errors]).toEqual([[], [], []]);
    await expectAccessible(opened);
  });

  it('of 10,000 changes: a page of rows at a time, filtered to one organisation, with the wait in the chart', async () => {
    const opened = await openPage(browser(), 'apply-report-10000', bulkReport(10_000));
    await opened.page.setViewportSize({ width: 1280, height: 1600 });
    await opened.screenshot('apply-report-10000');
    expect(await opened.page.locator('#status').textContent()).toBe('10,000 changes; showing the first 500.');
    expect(await opened.page.locator('#run-heading + ul').textContent()).toContain('10,000 changes in 53 s, at most 26 in flight.');
    await opened.page.getByLabel('Organisation', { exact: true }).fill('org-04321');
    await expect.poll(() => opened.page.locator('#status').textContent()).toBe('1 of 10,000 changes match.');
    await opened.page.getByLabel('Organisation', { exact: true }).fill('');
    await opened.page.getByLabel('Outcome', { exact: true }).selectOption('failed');
    await expect.poll(() => opened.page.locator('#status').textContent()).toBe('11 of 10,000 changes match.');
    expect([opened.requests, opened.dialogs, opened.errors]).toEqual([[], [], []]);
  });
});
