/**
 * What slugs check shows: a table for people, written a row at a time as results come (with a
 * progress line on a terminal's standard error), or one JSON document for scripts at the end.
 */
import type { OutputStream } from '../../cli-io.js';
import type { ClientEvent } from '../../api/connect/open-client.js';
import type { EventSink } from '../../model/event-sink.js';
import { formatWait } from '../../text/format-wait.js';
import type { SlugCheck } from './check-slugs.js';
import { renderSlugJson, slugTable, summariseSlugChecks, type SlugTable } from './views/render-slug-table.js';

/** What the client tells reaches the view as events from Connect on: it shows the waits. */
export interface SlugsView extends EventSink<ClientEvent> {
  /** Every slug, before any is checked. */
  checking(slugs: readonly string[]): void;
  /** One result, in the order the slugs were given. */
  checked(check: SlugCheck): void;
  /** All of them, at the end. */
  finished(checks: readonly SlugCheck[]): void;
}

export interface SlugsViewOptions {
  format: 'text' | 'json';
  out: OutputStream;
  err: OutputStream;
  color: boolean;
}

/** Back to the start of the line, and clear it. */
const CLEAR = '\r\x1b[2K';

export function createSlugsView(options: SlugsViewOptions): SlugsView {
  const { out, err } = options;
  if (options.format === 'json') {
    return { checking() {}, checked() {}, finished: (checks) => void out.write(renderSlugJson(checks)), event: (event) => event.type === 'wait' && void err.write(`${formatWait(event)}\n`) };
  }
  let table: SlugTable | undefined;
  let total = 0;
  let done = 0;
  // On a terminal, how far it has got, on standard error below the rows (cleared before each row
  // and at the end, so that a redirected standard output holds the table alone).
  const progress = err.isTTY === true;
  const showProgress = () => progress && err.write(`${CLEAR}checking slugs: ${done}/${total}`);
  const clearProgress = () => progress && err.write(CLEAR);
  return {
    checking(slugs) {
      table = slugTable(slugs, { color: options.color });
      total = slugs.length;
      out.write(`${table.header}\n`);
      showProgress();
    },
    checked(check) {
      done += 1;
      clearProgress();
      out.write(`${table?.row(check) ?? check.slug}\n`);
      showProgress();
    },
    event(event) {
      // A wait of 2 s (the service, its rate limit, the token command): a line on standard error.
      if (event.type !== 'wait') return;
      clearProgress();
      err.write(`${formatWait(event)}\n`);
      showProgress();
    },
    finished(checks) {
      clearProgress();
      out.write(`\n${summariseSlugChecks(checks)}\n`);
    },
  };
}
