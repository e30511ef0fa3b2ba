import { describe, expect, it } from 'vitest';
import { ThroughputWindow } from '../../../../src/commands/apply/views/throughput-window.js';

describe('ThroughputWindow', () => {
  it('measures from the start until the window is full', () => {
    const w = new ThroughputWindow(1_000, 30_000);
    w.record(3_000, 20);
    expect(w.rate(11_000, 100)).toBe(10);
  });

  it('follows the recent rate, not the average since the start', () => {
    const w = new ThroughputWindow(0, 10_000);
    // 100/s for 20 s, then 10/s for 20 s.
    let count = 0;
    for (let t = 100; t <= 20_000; t += 100) w.record(t, (count += 10));
    for (let t = 20_100; t <= 40_000; t += 100) w.record(t, (count += 1));
    const rate = w.rate(40_000, count)!;
    expect(rate).toBeGreaterThan(9);
    expect(rate).toBeLessThan(11);
  });

  it('drops to zero when nothing completes for a whole window', () => {
    const w = new ThroughputWindow(0, 10_000);
    for (let t = 500; t <= 5_000; t += 500) w.record(t, t / 10);
    expect(w.rate(30_000, 500)).toBe(0);
  });

  it('has no rate before any time has passed', () => {
    expect(new ThroughputWindow(5_000).rate(5_000, 0)).toBeUndefined();
  });

  it('keeps a bounded number of samples however many changes complete', () => {
    const w = new ThroughputWindow(0, 1_000);
    for (let i = 1; i <= 100_000; i += 1) w.record(i, i);
    expect((w as unknown as { samples: unknown[] }).samples.length).toBeLessThanOrEqual(22);
    expect(w.rate(100_000, 100_000)).toBe(1000);
  });
});
