/**
 * Reading the plain value that readTree builds, without trusting its shape: the schema errors
 * about it are reported elsewhere, and what is read here must not throw on the same faults.
 */
import type { DocPath } from './source-tree.js';

export type JsonObject = Record<string, unknown>;

export function isRecord(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Own properties only: a key such as "constructor" or "__proto__" must not reach Object.prototype. */
export function own(record: JsonObject, key: string): unknown {
  return Object.hasOwn(record, key) ? record[key] : undefined;
}

/** The value at `path` (map keys and list indexes), or undefined where the value has another shape. */
export function valueAt(value: unknown, path: DocPath): unknown {
  let current = value;
  for (const segment of path) {
    if (Array.isArray(current)) current = current[Number(segment)];
    else if (isRecord(current)) current = own(current, String(segment));
    else return undefined;
  }
  return current;
}
