/**
 * Runs the apply engine with the view the output calls for: NDJSON events, a live line on a
 * terminal, or one line per completed change in a log; then the summary.
 */
import type { OrganisationsClient } from '../api/client.js';
import type { RetryEvent } from '../api/dispatcher.js';
import type { ApplyEvent, ApplySummary } from '../apply/events.js';
import type { Plan } from '../plan/types.js';
import type { Journal } from '../state/journal.js';
import type { CliIO } from './io.js';
import type { PipelineOutput } from './pipeline-output.js';

/** Where the client's retry events go; the apply view sets the listener. */
export interface RetryRelay {
  listener?: (event: RetryEvent) => void;
}

export interface ApplyRunContext {
  format: 'text' | 'json';
  parallelism: number;
  io: CliIO;
  client: OrganisationsClient;
  journal: Journal;
  service: string;
  color: boolean;
  retries?: RetryRelay;
  /** In GitHub Actions, the per-change lines are folded in a group and the summary guarded. */
  pipeline?: Pick<PipelineOutput, 'openSection' | 'closeSection' | 'guard'>;
}

export async function runApplyWithProgress(plan: Plan, ctx: ApplyRunContext): Promise<ApplySummary> {
  const { applyPlan } = await import('../apply/apply-plan.js');
  const view = await import('../render/render-apply.js');
  const { io } = ctx;
  const flags = { format: ctx.format, parallelism: ctx.parallelism };
  const live = flags.format === 'text' && io.stdout.isTTY === true;
  // A log (not a terminal, not NDJSON): its per-change lines go in one folded section.
  const section = flags.format === 'text' && !live ? ctx.pipeline : undefined;
  let sectionOpen = false;
  const closeSection = () => {
    if (sectionOpen && section) io.stdout.write(section.closeSection());
    sectionOpen = false;
  };
  let done = 0;
  let failed = 0;
  const started = io.now();
  const total = plan.changes.length;
  const onEvent = (event: ApplyEvent) => {
    if (flags.format === 'json') {
      io.stdout.write(view.formatApplyEventJson(event) + '\n');
      return;
    }
    if (event.type === 'change-end') {
      done += 1;
      if (event.outcome === 'failed') failed += 1;
    }
    if (live) {
      if (event.type === 'change-end' && event.outcome === 'failed') {
        io.stdout.write(`\r\x1b[2K${view.formatApplyLine(event) ?? ''}\n`);
      }
      if (event.type === 'change-end' || event.type === 'apply-start') {
        io.stdout.write(`\r\x1b[2K${view.formatProgress({ done, total, failed, elapsedMs: io.now() - started })}`);
      }
      if (event.type === 'apply-end') io.stdout.write('\r\x1b[2K');
      if (event.type === 'interrupted') io.stdout.write(`\r\x1b[2K${view.formatApplyLine(event) ?? ''}\n`);
      return;
    }
    if (event.type === 'apply-start' && section) {
      io.stdout.write(section.openSection(`Applying ${total} ${total === 1 ? 'change' : 'changes'}`));
      sectionOpen = true;
    }
    const line = view.formatApplyLine(event);
    if (line !== undefined) io.stdout.write(line + '\n');
    if (event.type === 'apply-end') closeSection();
  };
  // Only bulk applies need it; a handful of changes never comes near the ceiling.
  const governor = plan.changes.length >= 1000 ? (await import('./memory-governor.js')).startMemoryGovernor() : undefined;
  // The live line keeps its elapsed time moving while changes wait on the service.
  const ticker = live
    ? setInterval(() => io.stdout.write(`\r\x1b[2K${view.formatProgress({ done, total, failed, elapsedMs: io.now() - started })}`), 500)
    : undefined;
  ticker?.unref();
  if (ctx.retries) {
    ctx.retries.listener = (retry) => {
      if (retry.label === undefined) return;
      const { requestId: _requestId, label, ...rest } = retry;
      onEvent({ type: 'change-retry', address: label, ...rest, at: io.now() });
    };
  }
  let summary: ApplySummary;
  try {
    summary = await applyPlan(plan.changes, {
      client: ctx.client,
      journal: ctx.journal,
      service: ctx.service,
      parallelism: flags.parallelism,
      signal: io.signal,
      onEvent,
      now: io.now,
    });
  } finally {
    if (ctx.retries) ctx.retries.listener = undefined;
    governor?.stop();
    if (ticker) clearInterval(ticker);
    // Also when the engine failed half-way: a section left open would swallow the rest of the log.
    closeSection();
  }
  if (flags.format === 'text') {
    const text = view.formatApplySummary(summary, { color: ctx.color });
    io.stdout.write(section ? section.guard(text) : text);
  }
  return summary;
}
