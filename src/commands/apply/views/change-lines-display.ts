/**
 * A short apply in a log: one line per finished change, retry, rate change and interrupt, folded
 * (in GitHub Actions) under `Applying N changes`.
 */
import type { DisplayContext, ProgressDisplay } from './progress-display.js';
import { applyingTitle } from './progress-display.js';
import { formatApplyLine } from './render-apply.js';

export function startChangeLines(ctx: DisplayContext): ProgressDisplay {
  ctx.out.write(ctx.frame.open(applyingTitle(ctx.total)));
  let open = true;
  const close = () => {
    if (open) ctx.out.write(ctx.frame.close());
    open = false;
  };
  return {
    event(event) {
      const line = formatApplyLine(event);
      if (line !== undefined) ctx.out.write(line + '\n');
      if (event.type === 'apply-end') close();
    },
    note(line) {
      ctx.out.write(`${ctx.frame.guard(line)}\n`);
    },
    // Also when the apply failed half-way: a fold left open would swallow the rest of the log.
    stop: close,
  };
}
