/**
 * A wait as people read it: one line (no newline) saying what waits, for what, and until when at
 * the latest, as a clock time in UTC (the same in a terminal and in a CI log) and as a time from
 * now. `what` may quote the files (an organisation's id): made terminal-safe here; a CI view
 * guards the line as it guards all outside text.
 */
import type { WaitEvent } from '../api/wait-event.js';
import { terminalSafe } from './ansi.js';
import { formatDuration } from './format-duration.js';
import { plural } from './format-value.js';

export function formatWait(event: WaitEvent): string {
  const what = terminalSafe(event.what);
  const until = `${formatClock(event.until, event.at)} (in ${formatDuration(event.until - event.at, 'rounded')})`;
  const among = event.waiting !== undefined && event.waiting > 1 ? `; ${plural(event.waiting, 'request')} wait, ${what} among them` : `; ${what} waits`;
  const givesUp = `orgform gives up at ${until}${event.setting === undefined ? '' : `, ${event.setting}`}`;
  switch (event.reason) {
    case 'rate-limit':
      return `Waiting until ${until}: the service answered 429 (too many requests), and every request waits${among}.`;
    case 'quota':
      return `Waiting until ${until}: the service's request quota is used up until then${among}.`;
    case 'pacing':
      return `Waiting: requests go at ${formatRps(event.rps ?? 0)} a second, the rate the service allows (or --max-rps)${among}, the last until about ${until}.`;
    case 'retry':
      return `Waiting until ${until} to send ${what} again, after ${terminalSafe(event.after ?? 'a failure')}.`;
    case 'answer':
      return `Waiting for ${event.begun === true ? 'the rest of ' : ''}the answer to ${what}${event.via === undefined ? '' : `, through the proxy ${terminalSafe(event.via)}`}: ${event.begun === true ? 'it has begun, but is not whole yet' : 'none yet'}; ${givesUp}.`;
    case 'token-command':
      return `Waiting for ${what} to print a token: none yet; ${givesUp}.`;
    case 'state':
      return `Waiting for ${what}: no answer yet; ${givesUp}.`;
    default: {
      const unreachable: never = event.reason;
      throw new Error(`unknown wait reason ${String(unreachable)}`);
    }
  }
}

/** `12:03:20 UTC`, with the date when it is not the day of `from`. */
function formatClock(at: number, from: number): string {
  if (!Number.isFinite(at) || Math.abs(at) > 8.64e15) return 'an unknown time';
  const iso = new Date(at).toISOString();
  const sameDay = Math.abs(from) <= 8.64e15 && new Date(from).toISOString().slice(0, 10) === iso.slice(0, 10);
  return `${sameDay ? '' : `${iso.slice(0, 10)} `}${iso.slice(11, 19)} UTC`;
}

function formatRps(rps: number): string {
  return rps >= 10 ? String(Math.round(rps)) : String(Math.round(rps * 10) / 10);
}
