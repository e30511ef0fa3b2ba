/**
 * How far V8 lets the heap grow past what survived its last full collection before it collects
 * again. V8 chooses up to four times on a machine with memory to spare, and a bulk run whose live
 * data is 100 MB then peaks past 400 MB of heap, most of it garbage that nothing forced it to
 * collect (each request leaves some behind). Capped at one and a half times, the
 * peak stays near the live data, at the cost of more frequent, still short, collections: see the
 * memory figures in docs/performance.md (`npm run bench -- --only memory`). V8 reads this flag at every full
 * collection, so setting it after start-up takes effect. Process-wide, so the shell's to set.
 */
import { setFlagsFromString } from 'node:v8';

const HEAP_GROWING_PERCENT = 50;

export function limitHeapGrowth(): void {
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
}
