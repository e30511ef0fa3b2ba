/**
 * A wait of the run that people should hear of: the client's (a 429's pause, an empty quota, the
 * pace it holds itself to, a backoff before a retry, an answer that does not come), the token
 * command's, and the state's (its lock, its read). Told once a wait has lasted WAIT_NOTICE_MS, with
 * what waits and until when at the latest; the flows pass it to their views, which decide the words.
 */

/** A wait is told once it has lasted this long. */
export const WAIT_NOTICE_MS = 2_000;

export type WaitReason =
  /** A 429: the service asked every request to wait (Retry-After), or orgform pauses after it. */
  | 'rate-limit'
  /** The service's request quota is used up until its reset. */
  | 'quota'
  /** Requests wait their turn at the rate orgform holds itself to (--max-rps, or the rate the service allows). */
  | 'pacing'
  /** A backoff before a failed request is sent again. */
  | 'retry'
  /** A request is on its way, and no whole answer has come (a slow service, or a slow proxy). */
  | 'answer'
  /** The token command has not printed a token yet. */
  | 'token-command'
  /** The state (its lock, its journal) has not answered yet. */
  | 'state';

export interface WaitEvent {
  reason: WaitReason;
  /** What waits, in words: `page 3 of the listing (all pages)`, `the lock on the state at …`. */
  what: string;
  /** When the wait ends at the latest (epoch ms): the pause's end, the request's deadline, a timeout. */
  until: number;
  /** When it was told (epoch ms). */
  at: number;
  /** Requests held back with it (rate-limit, quota, pacing). */
  waiting?: number;
  /** The rate requests go at (pacing), per second. */
  rps?: number;
  /** What is retried (retry): `HTTP 503`, `ECONNRESET`. */
  after?: string;
  /** The answer has begun (its status and headers came) but is not whole (answer): a body that trickles. */
  begun?: boolean;
  /** The proxy the request goes through (answer), redacted, with the variable that chose it. */
  via?: string;
  /** Where the deadline comes from, when a setting decides it (ORGFORM_REQUEST_TIMEOUT_MS, …). */
  setting?: string;
}

/**
 * Tells `onWait` once `work` has taken WAIT_NOTICE_MS and is still going (never when it ends
 * sooner): for a wait outside the client, such as the state's lock or the token command.
 */
export async function tellIfSlow<T>(work: Promise<T>, wait: () => Omit<WaitEvent, 'at'>, onWait: ((event: WaitEvent) => void) | undefined, now: () => number = Date.now): Promise<T> {
  if (onWait === undefined) return work;
  const timer = setTimeout(() => onWait({ ...wait(), at: now() }), WAIT_NOTICE_MS);
  // Never what keeps the process alive: the work does that.
  timer.unref?.();
  try {
    return await work;
  } finally {
    clearTimeout(timer);
  }
}
