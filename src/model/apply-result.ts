/** How a change failed, as apply's events, its JSON lines and its report page say it. */
export interface ChangeFailure {
  /** The operation that failed, e.g. updateBillingDetails. */
  operation: string;
  message: string;
  status?: number;
  /** The Error body's code, message and cause, when the service sent one. */
  serviceCode?: string;
  serviceMessage?: string;
  serviceCause?: string;
  /**
   * What the Error body does not say, for people: orgform's hint (e.g. a Retry-After beyond the
   * budget) or why a 404 was not counted as done. Also part of `message`.
   */
  note?: string;
}

/** How many changes an apply ended with, by outcome, and how long it took: its summary and its report page both say it. */
export interface ApplyCounts {
  total: number;
  applied: number;
  alreadyDone: number;
  skipped: number;
  notStarted: number;
  stale: number;
  failed: number;
  interrupted: boolean;
  elapsedMs: number;
}
