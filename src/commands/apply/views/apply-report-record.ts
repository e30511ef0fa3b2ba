/**
 * What the apply report page (`apply --report html=FILE`, text/plan/render-apply-report-page.ts)
 * is made of, collected from the run as it goes: the changes handed to apply (their address, kind
 * and organisation, copied as apply starts, since apply lets each change go as it ends), how each
 * one ended, and the summary. A run that stops without its summary (an error part way) is reported
 * from the changes' own ends: what ended as it ended, what was in flight as not known, the rest
 * as not started. So the page says what was done and what was not, however the run ended.
 */
import type { ApplyEvent, ApplySummary, ChangeResult } from '../../../executor/events.js';
import type { EventSink } from '../../../model/event-sink.js';
import type { RunTimeline } from '../../../model/run-timeline.js';
import type { ApplicableChange } from '../../../plan/types.js';
import type { ApplyReport, ReportedResult, ReportedSummary } from '../../../text/plan/render-apply-report-page.js';

type ReportedChange = ApplyReport['changes'][number];

/** How a report describes the run around the changes: the service, when it started, its timeline, why it stopped. */
export interface ReportContext {
  baseUrl: string;
  startedAt: number;
  timeline?: RunTimeline;
  stopped?: string;
}

export class ApplyReportRecord implements EventSink<ApplyEvent> {
  private changes: ReportedChange[] = [];
  private applyStartedAt: number | undefined;
  private summary: ApplySummary | undefined;
  private interrupted = false;
  /** Until the summary comes: how each change ended (an applied one by its outcome alone), and those in flight. */
  private readonly ended = new Map<string, ChangeResult | 'applied'>();
  private readonly inFlight = new Set<string>();

  /** The changes apply is given, in plan order. */
  starting(changes: readonly ApplicableChange[]): void {
    this.changes = changes.map(({ address, kind, action, organisation }) => ({ address, kind, action, organisation: { slug: organisation.slug } }));
  }

  event(event: ApplyEvent): void {
    switch (event.type) {
      case 'apply-start':
        this.applyStartedAt = event.at;
        return;
      case 'change-start':
        this.inFlight.add(event.address);
        return;
      case 'change-end': {
        this.inFlight.delete(event.address);
        const { type: _type, at: _at, ...result } = event;
        this.ended.set(event.address, result.outcome === 'applied' ? 'applied' : result);
        return;
      }
      case 'interrupted':
        this.interrupted = true;
        return;
      case 'apply-end':
        this.summary = event.summary;
        this.ended.clear();
        return;
      default:
        return;
    }
  }

  /** The report as of `at`: the run's summary, or, when it stopped without one, what its changes' ends say. */
  report(at: number, context: ReportContext): ApplyReport {
    const summary = this.summary ?? this.summaryFromEnds(at - (this.applyStartedAt ?? context.startedAt));
    return { ...context, changes: this.changes, summary };
  }

  private summaryFromEnds(elapsedMs: number): ReportedSummary {
    const counts = { applied: 0, alreadyDone: 0, skipped: 0, notStarted: 0, stale: 0, failed: 0 };
    const notApplied: ReportedResult[] = [];
    for (const change of this.changes) {
      const result = this.ended.get(change.address) ?? this.unended(change);
      if (result === 'applied') {
        counts.applied += 1;
        continue;
      }
      notApplied.push(result);
      counts[COUNTED[result.outcome]] += 1;
    }
    return { total: this.changes.length, ...counts, interrupted: this.interrupted, elapsedMs, notApplied };
  }

  /** A change with no end: in flight when the run stopped (whether it was made is not known), or never started. */
  private unended(change: ReportedChange): ReportedResult {
    const base = { address: change.address, organisation: change.organisation.slug, kind: change.kind, durationMs: 0 };
    if (!this.inFlight.has(change.address)) return { ...base, outcome: 'not-started', reason: 'the run stopped before this change started' };
    return { ...base, outcome: 'failed', failure: { operation: 'unknown', message: 'in flight when the run stopped: whether it was made is not known; run orgform plan to see' } };
  }
}

const COUNTED = {
  'already-done': 'alreadyDone',
  skipped: 'skipped',
  'not-started': 'notStarted',
  stale: 'stale',
  failed: 'failed',
  applied: 'applied',
} as const;
