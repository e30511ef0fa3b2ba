import { describe, expect, it } from 'vitest';
import { Scheduler, workersAtRate, type Turn, type WorkRunner, type WorkSource } from '../../src/executor/scheduler.js';
import { gate } from '../support/scripted-client.js';

describe('workersAtRate', () => {
  it('lets every worker run while nothing limits the rate', () => {
    expect(workersAtRate(256, undefined, 5_000)).toBe(256);
  });

  it('at a known rate, lets run only those whose requests the rate serves in a quarter of the read age bound, at least one', () => {
    expect(workersAtRate(256, 5, 5_000)).toBe(7);
    expect(workersAtRate(16, 12, 5_000)).toBe(15);
    expect(workersAtRate(32, 50, 5_000)).toBe(32);
    expect(workersAtRate(16, 0.5, 1_000)).toBe(1);
  });
});

type Gate = ReturnType<typeof gate>;
const call = { operation: 'getOrganisations' as const };
/** Lets pending callbacks run (no timing: every promise settled by now has run its callbacks). */
const settled = () => new Promise((resolve) => setImmediate(resolve));

/**
 * A source of named work: `ready` is handed out now; each read ahead brings the next of `pages`
 * (held at `page` when given). It wants a read while fewer than `lowWater` (1) are ready and pages
 * are left, unless
 * `wants` (a script: one answer a question, then the rule) says otherwise: where the listing stands
 * each time a worker asks.
 */
class FakeSource implements WorkSource<string, void> {
  readonly size = 100;
  readonly done: string[] = [];
  reading = false;

  constructor(
    private readonly ready: string[],
    private readonly pages: string[][],
    private readonly options: { wants?: boolean[]; page?: Gate; lowWater?: number; releases?: Record<string, string[]> } = {},
  ) {}

  next(): string | undefined {
    return this.ready.shift();
  }

  ended(work: string): void {
    this.done.push(work);
    this.ready.push(...(this.options.releases?.[work] ?? []));
  }

  wantsRead(): boolean {
    return this.options.wants?.shift() ?? (!this.reading && this.ready.length < (this.options.lowWater ?? 1) && this.pages.length > 0);
  }

  async readAhead(): Promise<void> {
    this.reading = true;
    await this.options.page?.script(call);
    this.ready.push(...(this.pages.shift() ?? []));
    this.reading = false;
  }

  close(): void {
    this.pages.length = 0;
  }
}

/** Runs each piece of work, holding those in `holds` until released; counts how many run at once. */
function runner(holds: Record<string, Gate> = {}) {
  const ran: string[] = [];
  const count = { now: 0, most: 0 };
  const run: WorkRunner<string, void> = {
    async run(work: string, _turn: Turn) {
      ran.push(work);
      count.most = Math.max(count.most, (count.now += 1));
      await holds[work]?.script(call);
      count.now -= 1;
    },
  };
  return { run, ran, count };
}

const unlimited = { sendWindowMs: 5_000, rps: () => undefined };
/** A rate that serves one worker at a time. */
const oneAtATime = { sendWindowMs: 5_000, rps: () => 0.5 };

describe('Scheduler', () => {
  it('runs every piece of work, as many at once as the parallelism and no more', async () => {
    const [a, b] = [gate(), gate()];
    const source = new FakeSource(['a', 'b', 'c', 'd', 'e'], []);
    const { run, ran, count } = runner({ a, b });
    const running = new Scheduler(source, { parallelism: 2, ...unlimited }).run(run);
    await Promise.all([a.held, b.held]);
    await settled();
    expect(ran).toEqual(['a', 'b']);
    a.release();
    b.release();
    await running;
    expect(ran).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(source.done.sort()).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(count.most).toBe(2);
  });

  it('at a known rate lets only the workers it serves take work', async () => {
    const a = gate();
    const source = new FakeSource(['a', 'b', 'c', 'd'], []);
    const { run, ran, count } = runner({ a });
    const running = new Scheduler(source, { parallelism: 4, ...oneAtATime }).run(run);
    await a.held;
    await settled();
    expect(ran).toEqual(['a']);
    a.release();
    await running;
    expect(count.most).toBe(1);
  });

  it('reads ahead with a worker, not a turn: a read and a write in flight together at one turn', async () => {
    const [a, page] = [gate(), gate()];
    const source = new FakeSource(['a'], [['b']], { page, lowWater: 2 });
    const { run, ran } = runner({ a });
    const running = new Scheduler(source, { parallelism: 2, ...oneAtATime }).run(run);
    // a runs in the only turn, and the page is on its way at the same time.
    await Promise.all([a.held, page.held]);
    a.release();
    page.release();
    await running;
    expect(ran).toEqual(['a', 'b']);
  });

  it('keeps the workers that found nothing to do until the work running ends, and runs what it lets go at once', async () => {
    // An organisation's accept (a) runs alone; its three removals go once it has ended.
    const [a, b, c, d] = [gate(), gate(), gate(), gate()];
    const source = new FakeSource(['a'], [], { releases: { a: ['b', 'c', 'd'] } });
    const { run, ran, count } = runner({ a, b, c, d });
    const running = new Scheduler(source, { parallelism: 3, ...unlimited }).run(run);
    await a.held;
    a.release();
    await Promise.all([b.held, c.held, d.held]);
    expect(count.now).toBe(3);
    for (const held of [b, c, d]) held.release();
    await running;
    expect(ran).toEqual(['a', 'b', 'c', 'd']);
  });

  it('a worker that gets its turn as what was read runs dry, with no page on its way, reads the next page rather than stopping for good', async () => {
    // Two workers, one turn at the known rate. X takes the turn; Y waits for it (held there) while
    // X finds nothing ready and stops, the listing needing no page yet. When Y gets the turn the
    // listing has run dry: the page it now wants is read by Y, or by no one.
    const source = new FakeSource([], [['late']], { wants: [false, false, false, true] });
    const { run, ran } = runner();
    await new Scheduler(source, { parallelism: 2, ...oneAtATime }).run(run);
    expect(ran).toEqual(['late']);
  });
});
