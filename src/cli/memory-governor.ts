/**
 * Keeps a bulk apply's memory near what it really uses. Every request through fetch leaves
 * short-lived objects that survive into V8's old space, and V8 lets that space grow to several
 * times the live heap before collecting it: a 10,000-change apply with 45 MB live peaked near
 * 280 MB. A full collection whenever the heap passes a ceiling keeps the peak near 200 MB for a
 * few tens of milliseconds in all. Process-wide, so it lives in the CLI shell, not the engine.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

export interface MemoryGovernor {
  stop(): void;
}

export function startMemoryGovernor(options: { heapCeilingBytes?: number; intervalMs?: number } = {}): MemoryGovernor {
  const ceiling = options.heapCeilingBytes ?? 96 * 1024 * 1024;
  let gc: (() => void) | undefined;
  try {
    // Exposes gc() to contexts created from now on; the main context is unaffected.
    setFlagsFromString('--expose-gc');
    const candidate: unknown = runInNewContext('typeof gc === "function" ? gc : undefined');
    if (typeof candidate === 'function') gc = candidate as () => void;
  } catch {
    gc = undefined;
  }
  if (gc === undefined) return { stop: () => undefined };
  const collect = gc;
  const timer = setInterval(() => {
    if (process.memoryUsage().heapUsed > ceiling) collect();
  }, options.intervalMs ?? 250);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
