/**
 * An apply's report as a run under a rate limit gives it, simulated second by second (no clock, no
 * randomness): 300 billing changes at 16 in flight against a service that allows 20 requests a
 * second, whose 429s pause every request and cut the rate orgform holds itself to; a few failures,
 * one with hostile text from the service, and changes not started after an interrupt.
 */
import { RunTimelineRecorder, type RunTimeline } from '../../../src/model/run-timeline.js';
import type { ApplyReport, ReportedResult } from '../../../src/text/plan/render-apply-report-page.js';

const START = Date.UTC(2026, 0, 15, 9, 30, 0);

/** A minute of requests: steady at first, then 429s, a pause, a lower rate and a climb back. */
export function rateLimitedTimeline(): RunTimeline {
  const recorder = new RunTimelineRecorder(START);
  // What happened, then told to the recorder in the order of time, as a client tells it.
  const events: Array<{ at: number; tell: () => void }> = [];
  let rps: number | undefined;
  for (let second = 0; second < 60; second++) {
    const t = START + second * 1000;
    if (second === 8) {
      const cut = (rps = 10);
      events.push({ at: t, tell: () => (recorder.rateChanged(t, cut), recorder.paused(t, t + 3000)) });
    }
    if (second > 20 && second % 10 === 0 && rps !== undefined) {
      const raised = (rps = Math.min(20, rps + 3));
      events.push({ at: t, tell: () => recorder.rateChanged(t, raised) });
    }
    if (second >= 8 && second < 11) continue;
    const sending = rps === undefined ? 24 : rps;
    for (let k = 0; k < sending; k++) {
      const at = t + Math.floor((k * 1000) / sending);
      const throttled = second === 7 || (second === 6 && k % 3 === 0);
      // Answers take most of a second: about 16 requests in flight at 20 a second.
      const latency = throttled ? 120 : 550 + ((second * 37 + k * 53) % 300);
      const status = throttled ? 429 : second === 30 && k === 0 ? 503 : 200;
      events.push({ at, tell: () => recorder.requestSent(at) }, { at: at + latency, tell: () => recorder.requestEnded(at + latency, { status, latencyMs: latency }) });
    }
  }
  for (const e of events.sort((a, b) => a.at - b.at)) e.tell();
  return recorder.timeline(START + 61_000);
}

export function sampleApplyReport(): ApplyReport {
  const changes = Array.from({ length: 300 }, (_, i) => {
    const slug = `org-${String(i).padStart(3, '0')}`;
    return { address: `organisations.${slug}.billing`, kind: 'billing' as const, action: 'update' as const, organisation: { slug } };
  });
  const result = (i: number, parts: Omit<ReportedResult, 'address' | 'organisation' | 'kind' | 'durationMs'>): ReportedResult => ({
    address: changes[i]!.address,
    organisation: changes[i]!.organisation.slug,
    kind: 'billing',
    durationMs: 1_250,
    ...parts,
  });
  const notApplied: ReportedResult[] = [
    result(3, { outcome: 'already-done', reason: 'every declared field already holds its value' }),
    result(41, { outcome: 'failed', failure: { operation: 'updateBillingDetails', message: 'HTTP 500', status: 500, serviceCode: 'internal', serviceMessage: 'database unavailable', serviceCause: 'primary failover' } }),
    result(77, { outcome: 'stale', reason: 'billingEmail changed since the plan from "a@x.example" to "b@x.example"' }),
    result(120, {
      outcome: 'failed',
      failure: { operation: 'updateBillingDetails', message: 'HTTP 422', status: 422, serviceCode: 'invalid', serviceMessage: '<script>window.pwned = 1</script></details> \u202Eevil', note: 'see <img src=x onerror="window.pwned = 2">' },
    }),
    ...Array.from({ length: 20 }, (_, k) => result(280 + k, { outcome: 'not-started', reason: 'apply was interrupted before this change started' })),
  ];
  const count = (o: ReportedResult['outcome']) => notApplied.filter((r) => r.outcome === o).length;
  return {
    baseUrl: 'https://orgs.example.test',
    startedAt: START,
    changes,
    summary: {
      total: changes.length,
      applied: changes.length - notApplied.length,
      alreadyDone: count('already-done'),
      skipped: 0,
      notStarted: count('not-started'),
      stale: count('stale'),
      failed: count('failed'),
      interrupted: true,
      elapsedMs: 61_400,
      notApplied,
    },
    timeline: rateLimitedTimeline(),
  };
}
