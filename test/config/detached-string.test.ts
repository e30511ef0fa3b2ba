import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { detachString } from '../../src/config/detached-string.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** Heap that stays live after collection while `keep` holds 40-character values cut from 40 texts of 1 MB. */
function retainedMB(keep: (value: string) => string): number {
  gc();
  const before = process.memoryUsage().heapUsed;
  const kept: string[] = [];
  for (let i = 0; i < 40; i++) {
    const text = `${String(i).padStart(4, '0')}:${'billing@example.com '.repeat(50_000)}`;
    kept.push(keep(text.slice(5, 45)));
  }
  gc();
  const after = process.memoryUsage().heapUsed;
  expect(kept.every((value) => value === 'billing@example.com '.repeat(2))).toBe(true);
  return (after - before) / 1024 / 1024;
}

describe('detachString', () => {
  it('keeps a value cut from a large text without the text, where the cut itself keeps it all', () => {
    expect(retainedMB((value) => value)).toBeGreaterThan(30);
    expect(retainedMB(detachString)).toBeLessThan(5);
  });

  it('returns the same characters', () => {
    for (const value of ['', 'short', 'a "quoted" value with \\ and \u2028 and émoji 🎉 inside']) expect(detachString(value)).toBe(value);
  });
});
