/**
 * The live line on a terminal: `[ 120/1000 ] 2 failed · 12.3 s · 40/s · ETA 22s`, redrawn in place
 * as changes end, at most ten times a second (a fast apply ends hundreds of changes a second, and a
 * terminal redrawn that often flickers and costs CPU), and twice a second in between (so that the
 * elapsed time moves while changes wait on the service, and the rate or the pause shows whenever
 * the rate limiter holds them back). Failures, rate changes and an interrupt get a line of their
 * own above it, at once. The only terminal codes of apply.
 */
import type { ApplyEvent } from '../../../executor/events.js';
import { countEvent, emptyTally, type DisplayContext, type ProgressDisplay } from './progress-display.js';
import { formatApplyLine, formatProgress } from './render-apply.js';
import { ThroughputWindow } from './throughput-window.js';

/** Back to the start of the line, and clear it. */
const REDRAW = '\r\x1b[2K';
const TICK_MS = 500;
/** The least time between two redraws that a change's end asks for. */
export const MIN_REDRAW_MS = 100;

export function startLiveLine(ctx: DisplayContext): ProgressDisplay {
  const tally = emptyTally();
  const window = new ThroughputWindow(ctx.startedAt);
  let drawnAt = -Infinity;
  const line = (): string => {
    const status = ctx.meter.rateStatus();
    const heldBack = status.waiting > 0 || status.pausedMs > 0;
    const held = heldBack ? { pausedMs: status.pausedMs, ...(status.rps === undefined ? {} : { rps: status.rps }) } : undefined;
    const now = ctx.now();
    const rate = tally.done > 0 ? window.rate(now, tally.done) : undefined;
    return formatProgress({ done: tally.done, total: ctx.total, failed: tally.failed, elapsedMs: now - ctx.startedAt, ...(held === undefined ? {} : { held }), ...(rate === undefined ? {} : { changesPerSecond: rate }) });
  };
  const draw = () => {
    drawnAt = ctx.now();
    ctx.out.write(`${REDRAW}${line()}`);
  };
  const ticker = setInterval(draw, TICK_MS);
  // Never what keeps the process alive: the requests in flight do that.
  ticker.unref();
  draw();
  const ownLine = (event: ApplyEvent) => ctx.out.write(`${REDRAW}${formatApplyLine(event) ?? ''}\n`);
  return {
    event(event) {
      countEvent(tally, event);
      if (event.type === 'change-end') window.record(ctx.now(), tally.done);
      const ownLineNow = (event.type === 'change-end' && event.outcome === 'failed') || event.type === 'rate';
      if (ownLineNow) ownLine(event);
      // A line of its own cleared the live line: draw it again at once; otherwise not more often than MIN_REDRAW_MS.
      if (ownLineNow || (event.type === 'change-end' && (tally.done === ctx.total || ctx.now() - drawnAt >= MIN_REDRAW_MS))) draw();
      if (event.type === 'interrupted') ownLine(event);
      if (event.type === 'apply-end') ctx.out.write(REDRAW);
    },
    note(text) {
      ctx.out.write(`${REDRAW}${text}\n`);
      draw();
    },
    stop() {
      clearInterval(ticker);
    },
  };
}
