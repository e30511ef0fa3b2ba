/**
 * The run's timeline (model/run-timeline.ts), recorded from the events that reach apply's view:
 * what the apply report's chart and the job summary's draw. It reads no clock: every event says
 * when it happened (the flow's clock), and so does whoever asks for the timeline.
 *
 * Two recorders, one shown. Request attempts, from the run's start (the plan's reads included),
 * as the transport tells them (AttemptEvent, through ClientHooks.onAttempt); without them (a client
 * that tells none, as in the flow's tests),
 * changes, from the start of apply: each change's start and end, with the client's 429 answers and
 * its rate read from the meter at each of them and at each rate event and wait (the rate also
 * moves between rate events, as it grows back). The rate held to and every pause come from the client's rate events, in both.
 */
import type { ApplyEvent } from '../../../executor/events.js';
import type { EventSink } from '../../../model/event-sink.js';
import { RunTimelineRecorder, type RunTimeline } from '../../../model/run-timeline.js';
import type { AttemptEvent, RateGauge } from '../view.js';

export type { AttemptEvent };

export class TimelineFeed implements EventSink<ApplyEvent | AttemptEvent> {
  private readonly requests: RunTimelineRecorder;
  private changes: RunTimelineRecorder | undefined;
  private attemptsTold = false;
  private meter: RateGauge | undefined;
  /** The meter's 429s and rate as last read. */
  private throttled = 0;
  private rps: number | undefined;
  /** The end of the latest pause told: a pause told again while it lasts is counted once. */
  private pausedUntil = 0;
  /** The changes started and not yet ended (at most --parallelism of them). */
  private readonly inFlight = new Set<string>();

  /** `startedAt`: the run's start, the flow's clock. */
  constructor(startedAt: number) {
    this.requests = new RunTimelineRecorder(startedAt, 'request');
  }

  /** Changes are about to run: the client's rate, read as they start and end. */
  metered(meter: RateGauge): void {
    this.meter = meter;
    const status = meter.rateStatus();
    this.throttled = status.throttled;
    this.rps = status.rps;
  }

  event(event: ApplyEvent | AttemptEvent): void {
    switch (event.type) {
      case 'attempt-sent':
        this.attemptsTold = true;
        this.requests.requestSent(event.at);
        return;
      case 'attempt-ended':
        this.requests.requestEnded(event.at, { ...(event.status === undefined ? {} : { status: event.status }), latencyMs: Math.max(0, event.at - event.sentAt) });
        return;
      case 'apply-start':
        this.changes = new RunTimelineRecorder(event.at, 'change');
        this.changes.rateChanged(event.at, this.rps);
        return;
      case 'rate':
        this.rateChanged(event.at, event.rps);
        this.paused(event.at, event.at + event.pausedMs);
        // A 429 that paused everyone is counted when it came, not when the next change ends.
        this.readMeter(event.at);
        return;
      case 'wait':
        this.readMeter(event.at);
        return;
      case 'change-start':
        this.inFlight.add(event.address);
        this.readMeter(event.at);
        this.changes?.changeStarted(event.at);
        return;
      case 'change-end':
        // A change ended without starting (not started, skipped, found done in the journal) was no work.
        if (!this.inFlight.delete(event.address)) return;
        this.readMeter(event.at);
        this.changes?.changeEnded(event.at, { failed: event.outcome === 'failed', durationMs: event.durationMs });
        return;
      default:
        return;
    }
  }

  /** The run so far, up to `at`: its requests once the transport told them, else its changes (none before apply started). */
  timeline(at: number): RunTimeline | undefined {
    if (this.attemptsTold) return this.requests.timeline(at);
    return this.changes?.timeline(at);
  }

  private readMeter(at: number): void {
    if (this.meter === undefined) return;
    const status = this.meter.rateStatus();
    this.changes?.throttledAnswers(at, status.throttled - this.throttled);
    this.throttled = status.throttled;
    // Rounded as the charts show it: a rate that grows a little with every answer is not a change a second.
    if (rounded(status.rps) !== rounded(this.rps)) this.rateChanged(at, status.rps);
  }

  private rateChanged(at: number, rps: number | undefined): void {
    this.rps = rps;
    this.requests.rateChanged(at, rps);
    this.changes?.rateChanged(at, rps);
  }

  private paused(from: number, until: number): void {
    const start = Math.max(from, this.pausedUntil);
    if (until <= start) return;
    this.pausedUntil = until;
    this.requests.paused(start, until);
    this.changes?.paused(start, until);
  }
}

function rounded(rps: number | undefined): number | undefined {
  return rps === undefined ? undefined : Math.round(rps * 10) / 10;
}
