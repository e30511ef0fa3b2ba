import { describe, expect, it } from 'vitest';
import type { ApplySummary, ChangeResult } from '../../../src/executor/events.js';
import { renderApplyReportPage, type ReportedResult, type ReportedSummary } from '../../../src/text/plan/render-apply-report-page.js';
import { sampleApplyReport } from './sample-apply-report.js';

function pageRows(page: string): string[][] {
  const json = /<script type="application\/json" id="orgform-data">([^<]*)<\/script>/.exec(page)![1]!;
  return (JSON.parse(json) as { rows: string[][] }).rows;
}

describe('renderApplyReportPage', () => {
  const page = renderApplyReportPage(sampleApplyReport());

  it('says how the apply ended and counts each outcome, failures first', () => {
    expect(page).toContain('<p><strong>Interrupted: 276 applied, 20 not started; run orgform apply again to finish.</strong></p>');
    expect([...page.matchAll(/<li><span class="n">(\d+)<\/span> ([a-z ]+)<\/li>/g)].map((m) => `${m[2]} ${m[1]}`)).toEqual([
      'failed 2',
      'stale 1',
      'not started 20',
      'skipped 0',
      'already done 1',
      'applied 276',
    ]);
  });

  it('lists every change once, failures first, then stale, not started, already done and applied, each in plan order', () => {
    const rows = pageRows(page);
    expect(rows).toHaveLength(300);
    expect(new Set(rows.map((r) => r[3])).size).toBe(300);
    expect(rows.slice(0, 5).map((r) => [r[0], r[1]])).toEqual([
      ['failed', 'org-041'],
      ['failed', 'org-120'],
      ['stale', 'org-077'],
      ['not started', 'org-280'],
      ['not started', 'org-281'],
    ]);
    expect(rows[23]!.slice(0, 2)).toEqual(['already done', 'org-003']);
    expect(rows[24]!.slice(0, 2)).toEqual(['applied', 'org-000']);
    expect(rows[0]![4]).toBe('updateBillingDetails (HTTP 500) · internal: database unavailable · primary failover');
  });

  it('shows the failures in full and the run as a chart with its numbers', () => {
    expect(page).toContain('<h2 id="failures-heading">Failures (2)</h2>');
    expect(page).toContain('<dt>cause</dt><dd>primary failover</dd>');
    expect(page).toContain('<li>Every request was held back once, 3 s in all; the longest wait began 8s in and lasted 3 s.</li>');
    expect(page).toMatch(/<svg class="chart" [^>]*role="img"/);
    expect(page).toContain("<summary>The chart's numbers (1 s a row)</summary>");
  });

  it('shows the service’s text escaped, its bidirectional characters as escapes', () => {
    expect(page).toContain('<dt>error</dt><dd>invalid: &lt;script&gt;window.pwned = 1&lt;/script&gt;&lt;/details&gt; \\u202Eevil</dd>');
    expect(page).toContain('<dt>note</dt><dd>see &lt;img src=x onerror=&quot;window.pwned = 2&quot;&gt;</dd>');
    expect(page).not.toMatch(/\u202E/);
  });

  it('says when no request was recorded', () => {
    const { timeline: _timeline, ...report } = sampleApplyReport();
    expect(renderApplyReportPage(report)).toContain('<p>No requests were recorded.</p>');
  });

  it('takes what apply reports as it is: its summary and results are a report’s', () => {
    const result: ChangeResult = { address: 'a', organisation: 'o', kind: 'billing', outcome: 'failed', durationMs: 1, failure: { operation: 'x', message: 'y' } };
    const summary: ApplySummary = { total: 1, applied: 0, alreadyDone: 0, skipped: 0, notStarted: 0, stale: 0, failed: 1, interrupted: false, elapsedMs: 1, notApplied: [result], changed: { organisations: 0, first: [] } };
    const reported: ReportedSummary = summary;
    const one: ReportedResult = result;
    expect([reported.failed, one.outcome]).toEqual([1, 'failed']);
  });

  it('leads with why the run stopped, and of a run stopped before any change says only that', () => {
    const stopped = renderApplyReportPage({ ...sampleApplyReport(), stopped: 'No request succeeded for 10 min: <the service> kept answering 429.' });
    expect(stopped).toContain('<p><strong>Stopped part way: 276 applied, 2 failed, 20 not started; run orgform apply again to finish.</strong></p>');
    expect(stopped).toContain('<div class="banner bad"><strong>Why apply stopped:</strong> No request succeeded for 10 min: &lt;the service&gt; kept answering 429.</div>');
    const before = renderApplyReportPage({ ...sampleApplyReport(), changes: [], stopped: 'The plan is over budget. Nothing was changed.' });
    expect(before).toContain('<p><strong>Apply stopped before it changed anything.</strong></p>');
    expect(before).toContain('The plan is over budget. Nothing was changed.');
    expect(before).not.toMatch(/<svg|id="orgform-data"|<script>/);
    // A refusal's difference spans lines: each is its own line on the page, never a literal \n.
    const refused = renderApplyReportPage({ ...sampleApplyReport(), changes: [], stopped: 'Not the reviewed plan. ~ organisations.acme.billing: changed\n    billingEmail: "a" when reviewed, "b\u202e" now' });
    expect(refused).toContain('<strong>Why apply stopped:</strong> Not the reviewed plan. ~ organisations.acme.billing: changed<br>    billingEmail: &quot;a&quot; when reviewed, &quot;b\\u202E&quot; now</div>');
  });

  it('names what a timeline of changes counts: changes started and in flight, how long they took', () => {
    const timeline = sampleApplyReport().timeline!;
    const changes = renderApplyReportPage({ ...sampleApplyReport(), timeline: { ...timeline, unit: 'change' } });
    expect(changes).toContain('<li><span class="key sent"></span>changes started a second</li>');
    expect(changes).toContain('<li><span class="key flight"></span>changes in flight</li>');
    expect(changes).toContain('<li>862 changes in 1 min, at most 18 in flight.</li>');
    expect(changes).toContain('<li>Changes took 677 ms on average, 849 ms at the slowest.</li>');
    expect(changes).toContain('>Changes started a second</text>');
    expect(changes).not.toMatch(/requests sent a second|Requests in flight/i);
  });
});
