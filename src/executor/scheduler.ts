/**
 * Apply's workers: `parallelism` of them share the work a WorkSource hands out. A worker reads ahead
 * (a page of the listing behind the writes) when the source wants it, holding its place among the
 * `parallelism` but not a turn; it runs a piece of work only in its turn. While nothing limits the
 * rate every worker has a turn; at a known rate only as many as the rate serves within the send
 * window (`workersAtRate`): more would hold writes at the rate limiter until the reads they were
 * built from are too old to send. Workers, not a task per organisation: those would all be queued
 * at once, each held until its turn. A worker that finds nothing to do waits while a read is on its
 * way or other work runs (either may bring more: an organisation's changes go once its accepts end).
 */

/** A worker's turn, as the work it runs sees it. */
export interface Turn {
  /** Steps out and waits for a turn again, at the rate known now (before a write held too long is read again). */
  again(): Promise<void>;
}

/** Where the workers take their work from (the work queue); `R` is what the runner says of a piece that ended. */
export interface WorkSource<W, R> {
  /** How many pieces of work there are at most: no more workers than this start. */
  readonly size: number;
  /** The next piece of work ready now, asked for only in a worker's turn (what it was read from ages while it waits). */
  next(): W | undefined;
  /** A piece of work has ended (in the worker's turn still): what waited for it may be handed out. */
  ended(work: W, result: R): void;
  /** Whether a worker should read ahead now (no read is on its way, and what was read is running out). */
  wantsRead(): boolean;
  /** Reads ahead; never throws. */
  readAhead(): Promise<void>;
  /** Whether a read ahead is on its way: more work may come with it. */
  readonly reading: boolean;
  /** Reads nothing more (an interrupt). */
  close(): void;
}

/** Runs one piece of work, in the worker's turn. */
export interface WorkRunner<W, R> {
  run(work: W, turn: Turn): Promise<R>;
}

export interface SchedulerOptions {
  parallelism: number;
  /** How long after its read a billing write may still be sent (turns follow it at a known rate). */
  sendWindowMs: number;
  /** The request rate the client holds itself to now, undefined while nothing limits it. */
  rps(): number | undefined;
}

/**
 * How many workers may run work at once: all of them while nothing limits the rate; at a known
 * rate, those whose requests (a read and a write each, at worst) the rate serves within a quarter
 * of the send window, at least one.
 */
export function workersAtRate(parallelism: number, rps: number | undefined, sendWindowMs: number): number {
  if (rps === undefined) return parallelism;
  return Math.max(1, Math.min(parallelism, Math.ceil((rps * sendWindowMs) / 4_000)));
}

export class Scheduler<W, R> implements Turn {
  /** Workers in their turn. */
  private working = 0;
  /** Workers running a piece of work. */
  private running = 0;
  private readonly waitingForTurn: Array<() => void> = [];
  /** Workers with nothing to do, waiting for a read to come or work to end. */
  private idle: Array<() => void> = [];

  constructor(
    private readonly source: WorkSource<W, R>,
    private readonly options: SchedulerOptions,
  ) {}

  /** Runs every piece of work the source hands out; resolves once all have ended. */
  async run(runner: WorkRunner<W, R>): Promise<void> {
    const workers = Math.max(1, Math.min(this.options.parallelism, this.source.size));
    const all: Array<Promise<void>> = [];
    for (let i = 0; i < workers; i++) all.push(this.work(runner));
    await Promise.all(all);
  }

  /** Nothing more is read ahead; the work already handed out still runs (an interrupt). */
  stop(): void {
    this.source.close();
  }

  async again(): Promise<void> {
    this.endTurn();
    await this.takeTurn();
  }

  private async work(runner: WorkRunner<W, R>): Promise<void> {
    for (;;) {
      if (this.source.wantsRead()) {
        await this.source.readAhead();
        this.wake();
        continue;
      }
      await this.takeTurn();
      const work = this.source.next();
      if (work === undefined) {
        this.endTurn();
        // What was read ran out while this worker waited for its turn, and nothing is on its way: read.
        if (this.source.wantsRead()) continue;
        if (!this.source.reading && this.running === 0) return this.wake();
        await new Promise<void>((resolve) => this.idle.push(resolve));
        continue;
      }
      this.running += 1;
      try {
        this.source.ended(work, await runner.run(work, this));
      } finally {
        this.running -= 1;
        this.endTurn();
        this.wake();
      }
    }
  }

  /** Lets the idle workers look again: a read came, or work ended. */
  private wake(): void {
    const idle = this.idle;
    this.idle = [];
    for (const resolve of idle) resolve();
  }

  private async takeTurn(): Promise<void> {
    while (this.working >= workersAtRate(this.options.parallelism, this.options.rps(), this.options.sendWindowMs)) {
      await new Promise<void>((resolve) => this.waitingForTurn.push(resolve));
    }
    this.working += 1;
  }

  private endTurn(): void {
    this.working -= 1;
    this.waitingForTurn.shift()?.();
  }
}
