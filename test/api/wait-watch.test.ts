import { describe, expect, it } from 'vitest';
import type { WaitEvent } from '../../src/api/wait-event.js';
import { WaitWatch } from '../../src/api/wait-watch.js';
import { FakeClock } from '../support/fake-clock.js';

const answer = (what: string, at: number): WaitEvent => ({ reason: 'answer', what, until: at + 60_000, at });

/** A watch over a fake clock, told what `now` says the requests wait for. */
function watching(describe: (at: number) => WaitEvent | undefined = (at) => answer('page 2 of the listing', at)) {
  const clock = new FakeClock(1_000_000);
  const told: WaitEvent[] = [];
  const watch = new WaitWatch(describe, (event) => told.push(event), clock);
  return { clock, told, watch };
}

describe('WaitWatch', () => {
  it('tells a wait once no request has ended for 2 s, once however long it lasts', async () => {
    const { clock, told, watch } = watching();
    watch.begin();
    await clock.runUntil(clock.time + 1_999);
    expect(told).toEqual([]);
    await clock.runUntil(clock.time + 1);
    expect(told).toHaveLength(1);
    await clock.runUntil(clock.time + 60_000);
    expect(told).toHaveLength(1);
  });

  it('tells nothing while requests keep ending, each within 2 s of the one before', async () => {
    const { clock, told, watch } = watching();
    watch.begin();
    watch.begin();
    for (let i = 0; i < 10; i += 1) {
      await clock.runUntil(clock.time + 1_500);
      watch.end();
      watch.begin();
    }
    expect(told).toEqual([]);
  });

  it('tells again when what the wait is for changes, or when a new wait follows a request that ended', async () => {
    let wait: (at: number) => WaitEvent = (at) => answer('page 2 of the listing', at);
    const { clock, told, watch } = watching((at) => wait(at));
    watch.begin();
    await clock.runUntil(clock.time + 2_000);
    const pauseEnds = clock.time + 200_000;
    wait = (at) => ({ reason: 'rate-limit', what: 'page 2 of the listing', until: pauseEnds, waiting: 1, at });
    await clock.runUntil(clock.time + 6_000);
    expect(told.map((t) => t.reason)).toEqual(['answer', 'rate-limit']);
    watch.end();
    watch.begin();
    wait = (at) => answer('page 3 of the listing', at);
    await clock.runUntil(clock.time + 2_000);
    expect(told.map((t) => t.what)).toEqual(['page 2 of the listing', 'page 2 of the listing', 'page 3 of the listing']);
  });

  it('tells a pace once for each rate: at one request every 5 s, not every request', async () => {
    let rps = 0.2;
    const { clock, told, watch } = watching((at) => ({ reason: 'pacing', what: 'a read', until: at + 5_000, rps, waiting: 3, at }));
    watch.begin();
    for (let i = 0; i < 4; i += 1) {
      await clock.runUntil(clock.time + 5_000);
      watch.end();
      watch.begin();
    }
    rps = 0.1;
    await clock.runUntil(clock.time + 5_000);
    expect(told.map((t) => t.rps)).toEqual([0.2, 0.1]);
  });

  it('tells a wait at 2 s even when its timer fires a little early, as one set from a stale loop time does', async () => {
    const { clock, told, watch } = watching();
    // Node counts a timer from the time its event loop last read, which lags behind the clock
    // after long synchronous work (the CLI's start): the first look comes a few ms short of 2 s.
    const set = clock.setTimeout;
    let first = true;
    clock.setTimeout = (fn, ms) => set(fn, first ? ((first = false), ms - 5) : ms);
    watch.begin();
    await clock.runUntil(clock.time + 2_000);
    expect(told).toHaveLength(1);
  });

  it('tells a storm of 429s, each a new short pause, again only as the wait doubles: not every 2 s', async () => {
    let until = 0;
    const { clock, told, watch } = watching((at) => ({ reason: 'rate-limit', what: 'page 2 of the listing', until, waiting: 1, at }));
    watch.begin();
    // Ten minutes of 429s, each asking for one more second: nothing ends meanwhile.
    for (let t = 0; t < 600_000; t += 1_000) {
      until = clock.time + 1_000;
      await clock.runUntil(clock.time + 1_000);
    }
    const ages = told.map((t) => t.at - 1_000_000);
    expect(ages).toEqual([2_000, 4_000, 8_000, 16_000, 32_000, 64_000, 128_000, 256_000, 512_000]);
  });

  it('sets no timer while nothing is outstanding', async () => {
    const { clock, told, watch } = watching();
    watch.begin();
    watch.end();
    expect(clock.pending).toBe(0);
    await clock.runUntil(clock.time + 10_000);
    expect(told).toEqual([]);
  });
});
