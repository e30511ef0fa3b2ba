/**
 * The live line on a terminal: `[ 120/1000 ] 2 failed · 12.3 s`, redrawn in place as changes end
 * and twice a second in between (so that the elapsed time moves while changes wait on the service,
 * and the rate or the pause shows whenever the rate limiter holds them back). Failures, rate
 * changes and an interrupt get a line of their own above it. The only terminal codes of apply.
 */
import type { ApplyEvent } from '../apply/events.js';
import { countEvent, emptyTally } from './apply-tally.js';
import type { DisplayContext, ProgressDisplay } from './progress-display.js';
import { formatApplyLine, formatProgress } from './render-apply.js';

/** Back to the start of the line, and clear it. */
const REDRAW = '\r\x1b[2K';
const TICK_MS = 500;

export function startLiveLine(ctx: DisplayContext): ProgressDisplay {
  const tally = emptyTally();
  const line = (): string => {
    const status = ctx.meter.rateStatus();
    const heldBack = status.waiting > 0 || status.pausedMs > 0;
    const held = heldBack ? { pausedMs: status.pausedMs, ...(status.rps === undefined ? {} : { rps: status.rps }) } : undefined;
    return formatProgress({ done: tally.done, total: ctx.total, failed: tally.failed, elapsedMs: ctx.now() - ctx.startedAt, ...(held === undefined ? {} : { held }) });
  };
  const ticker = setInterval(() => ctx.out.write(`${REDRAW}${line()}`), TICK_MS);
  // Never what keeps the process alive: the requests in flight do that.
  ticker.unref();
  ctx.out.write(`${REDRAW}${line()}`);
  const ownLine = (event: ApplyEvent) => ctx.out.write(`${REDRAW}${formatApplyLine(event) ?? ''}\n`);
  return {
    event(event) {
      countEvent(tally, event);
      if ((event.type === 'change-end' && event.outcome === 'failed') || event.type === 'rate') ownLine(event);
      if (event.type === 'change-end' || event.type === 'rate') ctx.out.write(`${REDRAW}${line()}`);
      if (event.type === 'interrupted') ownLine(event);
      if (event.type === 'apply-end') ctx.out.write(REDRAW);
    },
    stop() {
      clearInterval(ticker);
    },
  };
}
