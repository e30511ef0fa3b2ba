/**
 * The text apply's words, all pure: a log line per event (non-TTY), the progress line, and the
 * closing summary. (The NDJSON objects are render-apply-json.ts's, loaded only by --format json.)
 */
import type { ApplyEvent, ApplySummary, ChangeFailure, ChangeResult } from '../../../executor/events.js';
import { paint, terminalSafe as safe } from '../../../text/ansi.js';
import { formatDuration } from '../../../text/format-duration.js';
import { formatName, plural } from '../../../text/format-value.js';
import { formatRate } from './format-log-progress.js';

/** What a failure without its record says (a failure told by the summary, the annotations and the job summary alike). */
export const NO_FAILURE_DETAILS = 'no details were recorded';

/** `updateBillingDetails: HTTP 500 internal: database unavailable (cause: …)`, or the failure's message. */
export function describeFailure(f: ChangeFailure): string {
  const status = f.status === undefined ? '' : `HTTP ${f.status} `;
  const body = f.serviceCode !== undefined ? `${f.serviceCode}: ${f.serviceMessage ?? f.message}` : f.message;
  const cause = f.serviceCause === undefined ? '' : ` (cause: ${f.serviceCause})`;
  const head = f.serviceCode === undefined && f.message.startsWith(f.operation) ? '' : `${f.operation}: `;
  // Without an Error body the message already holds the note.
  const note = f.note === undefined || f.serviceCode === undefined ? '' : ` — ${f.note}`;
  return safe(`${head}${f.serviceCode === undefined ? '' : status}${body}${cause}${note}`);
}

/** One line per finished change, retry or interrupt; undefined for events that have no line of their own. */
export function formatApplyLine(event: ApplyEvent): string | undefined {
  switch (event.type) {
    case 'change-end':
      return resultLine(event);
    case 'change-retry': {
      const why = [event.status === undefined ? '' : `HTTP ${event.status}`, event.errorCode ?? ''].filter(Boolean).join(' ');
      return `↻ ${safe(event.address)} retrying in ${formatDuration(event.delayMs)} (attempt ${event.attempt}${why ? `, ${safe(why)}` : ''})`;
    }
    case 'interrupted':
      return `Interrupted: no new changes will start; waiting for ${plural(event.inFlight, 'change')} in flight to finish.`;
    case 'rate':
      return rateLine(event);
    case 'apply-start':
    case 'change-start':
    case 'apply-end':
    // A wait is a note of the view's (text-apply-view.ts), whether or not changes run.
    case 'wait':
      return undefined;
    default: {
      const unreachable: never = event;
      throw new Error(`unknown apply event ${JSON.stringify(unreachable)}`);
    }
  }
}

/** `47 requests/s`, `2.5 requests/s`. */
function perSecond(rps: number): string {
  return `${formatRate(rps)} requests/s`;
}

function rateLine(e: Extract<ApplyEvent, { type: 'rate' }>): string {
  const pause = e.pausedMs > 0 ? `every request paused ${formatDuration(e.pausedMs)}` : '';
  switch (e.reason) {
    case 'throttled':
      return `⏸ rate limited (HTTP 429): ${[pause, e.rps === undefined ? '' : `then ${perSecond(e.rps)}`].filter(Boolean).join(', ')}`;
    case 'announced':
      return e.rps === undefined ? '⏱ the service announced no limit' : `⏱ the service announced its limit: pacing at ${perSecond(e.rps)}`;
    case 'quota-empty':
      return `⏸ the service's quota is used up: ${pause || 'waiting for it'}`;
    case 'stalled':
      return '✗ only 429s came back for too long: no new changes will start';
    default: {
      const unreachable: never = e.reason;
      throw new Error(`unknown rate reason ${String(unreachable)}`);
    }
  }
}

function resultLine(r: ChangeResult): string {
  const address = safe(r.address);
  const took = ` (${formatDuration(r.durationMs)})`;
  const reason = r.reason === undefined ? '' : `: ${safe(r.reason)}`;
  switch (r.outcome) {
    case 'applied':
      return `✓ ${address} applied${took}`;
    case 'already-done':
      return `✓ ${address} already done${reason}${took}`;
    case 'skipped':
      return `– ${address} skipped${reason}`;
    case 'not-started':
      return `– ${address} not started${reason}`;
    case 'stale':
      return `! ${address} stale, not written${reason}`;
    case 'failed':
      return `✗ ${address} failed: ${r.failure ? describeFailure(r.failure) : 'no details'}${took}`;
    default: {
      const unreachable: never = r.outcome;
      throw new Error(`unknown outcome ${String(unreachable)}`);
    }
  }
}

/** The live TTY line: `[ 120/1000 ] 2 failed · 12.3 s`, the count padded so the line keeps its width. */
export function formatProgress(state: {
  done: number;
  total: number;
  failed: number;
  elapsedMs: number;
  /** While the rate limiter holds requests back: its rate, or the pause everyone waits out. */
  held?: { rps?: number; pausedMs: number };
  /** Changes completed per second over a recent window (throughput-window.ts); absent until measured. */
  changesPerSecond?: number;
}): string {
  const total = String(state.total);
  const failed = state.failed > 0 ? ` ${state.failed} failed ·` : '';
  const h = state.held;
  const held = h === undefined ? '' : h.pausedMs > 0 ? ` · paused ${formatDuration(h.pausedMs)} (HTTP 429)` : h.rps === undefined ? '' : ` · ${perSecond(h.rps)}`;
  const rate = state.changesPerSecond;
  const left = state.total - state.done;
  // The same rate and ETA as the log's progress line; the ETA rounded up, never optimistic.
  const pace = rate === undefined ? '' : ` · ${formatRate(rate)}/s${left > 0 && rate > 0 ? ` · ETA ${formatDuration(Math.ceil(left / rate) * 1000, 'clock')}` : ''}`;
  return `[ ${String(state.done).padStart(total.length)}/${total} ]${failed} ${(state.elapsedMs / 1000).toFixed(1)} s${pace}${held}`;
}

export function formatApplySummary(summary: ApplySummary, options: { color: boolean }): string {
  const { color } = options;
  const s = summary;
  const counts = [
    paint(`${s.applied} applied`, 'green', color && s.applied > 0),
    `${s.alreadyDone} already done`,
    paint(`${s.skipped} skipped`, 'yellow', color && s.skipped > 0),
    paint(`${s.notStarted} not started`, 'yellow', color && s.notStarted > 0),
    ...(s.stale > 0 ? [paint(`${s.stale} stale`, 'yellow', color)] : []),
    paint(`${s.failed} failed`, 'red', color && s.failed > 0),
  ];
  const lines = [`${paint('Apply results:', 'bold', color)} ${counts.join(', ')} (${plural(s.total, 'change')} in ${formatDuration(s.elapsedMs)}).`];
  const stale = s.notApplied.filter((r) => r.outcome === 'stale');
  if (stale.length > 0) {
    lines.push('', paint('Stale (changed on the service since the plan; nothing was written for them):', 'bold', color));
    for (const r of stale) lines.push(`  ${paint('!', 'yellow', color)} ${safe(r.address)}: ${safe(r.reason ?? 'changed since the plan')}`);
  }
  const failures = s.notApplied.filter((r) => r.outcome === 'failed');
  if (failures.length > 0) {
    lines.push('', paint('Failures:', 'bold', color));
    for (const r of failures) lines.push(...failureLines(r, color));
  }
  lines.push('', closingSentence(s, color));
  return lines.join('\n') + '\n';
}

function failureLines(r: ChangeResult, color: boolean): string[] {
  const lines = [`  ${paint('✗', 'red', color)} ${formatName(r.organisation)}: ${safe(r.address)}`];
  const f = r.failure;
  if (f === undefined) return [...lines, `      ${NO_FAILURE_DETAILS}`];
  lines.push(`      operation: ${safe(f.operation)}${f.status === undefined ? '' : ` (HTTP ${f.status})`}`);
  if (f.serviceCode !== undefined) lines.push(`      error: ${safe(f.serviceCode)}: ${safe(f.serviceMessage ?? '')}`);
  else lines.push(`      error: ${safe(f.message)}`);
  if (f.serviceCause !== undefined) lines.push(`      cause: ${safe(f.serviceCause)}`);
  if (f.note !== undefined && f.serviceCode !== undefined) lines.push(`      note: ${safe(f.note)}`);
  return lines;
}

function closingSentence(s: ApplySummary, color: boolean): string {
  if (s.interrupted) {
    const failed = s.failed > 0 ? `, ${s.failed} failed` : '';
    const text = `Apply interrupted: ${s.applied} applied, ${s.alreadyDone} already done${failed}, ${s.notStarted} not started; run orgform apply again to finish.`;
    return paint(text, 'yellow', color);
  }
  if (s.failed > 0) {
    return paint(`Apply finished with ${plural(s.failed, 'failure')}: run orgform apply again to retry what is left.`, 'red', color);
  }
  if (s.stale > 0) {
    return paint(`Apply finished with ${plural(s.stale, 'stale change')}: run orgform plan again to review ${s.stale === 1 ? 'it' : 'them'}.`, 'yellow', color);
  }
  return paint(`Apply complete: ${s.applied} applied, ${s.alreadyDone} already done.`, 'green', color);
}
