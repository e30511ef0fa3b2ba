/**
 * The file state's lines, read a megabyte at a time: the base (a header line, then entry lines)
 * and the logs (entry lines). A run that asks only about some targets (its interest) tells each
 * line apart by the bytes of its key, without decoding or parsing it: at a million entries that is
 * the whole cost of reading the journal, and only the lines it wants are parsed.
 */
import type { FileHandle } from 'node:fs/promises';
import { targetOfKey } from '../../model/journal-key.js';
import { parseEntryLine, type LoggedEntry } from '../journal-entry.js';
import type { Interest } from '../state-backend.js';

/** The first line of a version 2 base. An orgform that reads only version 1 refuses it as not JSON. */
export const BASE_HEADER = '{"orgformJournal":2}';

const CHUNK = 1 << 20;

/** One read's worth of whole lines: `bounds` holds each line's start and end in `buf` (no newline), pairwise. */
export interface LineBatch {
  buf: Buffer;
  bounds: number[];
}

/**
 * Every whole line of `handle` from `position`, a batch per read (`buf` is reused: use a batch
 * before asking for the next). Returns whether the file ended in part of a line (a writer killed
 * or still at work: that part was never acknowledged).
 */
export async function* readLineBatches(handle: FileHandle, position = 0): AsyncGenerator<LineBatch, { torn: boolean }> {
  let buf = Buffer.allocUnsafe(CHUNK);
  let filled = 0;
  let at = position;
  for (;;) {
    if (filled === buf.length) {
      const bigger = Buffer.allocUnsafe(buf.length * 2);
      buf.copy(bigger, 0, 0, filled);
      buf = bigger;
    }
    const { bytesRead } = await handle.read(buf, filled, buf.length - filled, at);
    if (bytesRead === 0) return { torn: filled > 0 };
    at += bytesRead;
    const view = buf.subarray(0, filled + bytesRead);
    const bounds: number[] = [];
    let start = 0;
    for (let nl = view.indexOf(10, filled); nl >= 0; nl = view.indexOf(10, nl + 1)) {
      bounds.push(start, nl);
      start = nl + 1;
    }
    if (bounds.length > 0) yield { buf, bounds };
    buf.copy(buf, 0, start, view.length);
    filled = view.length - start;
  }
}

/** Each whole line of `handle` from `position` to `onLine`, numbered from `first`; returns whether the file ended in part of a line. */
export async function forEachLine(handle: FileHandle, position: number, first: number, onLine: (buf: Buffer, start: number, end: number, line: number) => void): Promise<{ torn: boolean; lines: number }> {
  let line = first - 1;
  const batches = readLineBatches(handle, position);
  for (;;) {
    const result = await batches.next();
    if (result.done === true) return { torn: result.value.torn, lines: line - first + 1 };
    const { buf, bounds } = result.value;
    for (let i = 0; i < bounds.length; i += 2) onLine(buf, bounds[i]!, bounds[i + 1]!, ++line);
  }
}

const SERVICE = Buffer.from('{"service":"');
const KEY = Buffer.from('","key":"');

/** FNV-1a over `buf[from, to)`, continuing from `hash`. */
function fnv(hash: number, buf: Uint8Array, from: number, to: number): number {
  let h = hash;
  for (let i = from; i < to; i += 1) h = Math.imul(h ^ buf[i]!, 0x01000193) >>> 0;
  return h;
}

const FNV_START = 0x811c9dc5;

/**
 * Tells the lines a run may ask about from the others by their bytes: the key's target (`KIND
 * TARGET`, its first and third parts) hashed in place. A line whose hash is one of the interest's
 * is parsed and checked exactly; a line of another shape is parsed whole, so damage is never missed.
 */
export class InterestScan {
  private readonly hashes = new Set<number>();

  constructor(private readonly interest: Interest) {
    for (const target of interest.targets) {
      const bytes = Buffer.from(target);
      this.hashes.add(fnv(FNV_START, bytes, 0, bytes.length));
    }
  }

  /** The entry of the line `buf[start, end)` if the interest holds its target; undefined if not; null if the line is no entry. */
  visit(buf: Buffer, start: number, end: number): LoggedEntry | undefined | null {
    const hash = this.targetHash(buf, start, end);
    if (hash === undefined) return this.parsed(buf.toString('utf8', start, end));
    if (!this.hashes.has(hash)) return undefined;
    return this.parsed(buf.toString('utf8', start, end));
  }

  private parsed(line: string): LoggedEntry | undefined | null {
    const logged = parseEntryLine(line);
    if (logged === undefined) return null;
    const target = targetOfKey(logged.key);
    return target !== undefined && this.interest.targets.has(target) ? logged : undefined;
  }

  /**
   * The hash of the line's target, or undefined when the line is not of the usual shape (escapes in
   * its key, fields in another order). One pass over the bytes up to the key's end, in plain loops:
   * at a million lines, a native call per line costs more than the bytes.
   */
  private targetHash(buf: Buffer, start: number, end: number): number | undefined {
    if (end - start < SERVICE.length + KEY.length) return undefined;
    for (let k = 0; k < SERVICE.length; k += 1) if (buf[start + k] !== SERVICE[k]) return undefined;
    // The service, up to its closing quote (a quote inside it is escaped).
    let i = start + SERVICE.length;
    for (; i < end; i += 1) {
      const c = buf[i]!;
      if (c === 0x22) break;
      if (c === 0x5c) i += 1;
    }
    for (let k = 0; k < KEY.length; k += 1) if (buf[i + k] !== KEY[k]) return undefined;
    // The key's first part, a space, its third part (`KIND TARGET`); the organisation is skipped.
    let hash = FNV_START;
    let part = 0;
    for (i += KEY.length; i < end; i += 1) {
      const c = buf[i]!;
      if (c === 0x22) return part === 2 ? hash : undefined;
      if (c === 0x5c) return undefined;
      if (c === 0x20) {
        part += 1;
        if (part === 3) return undefined;
        if (part === 1) continue;
      }
      if (part !== 1) hash = Math.imul(hash ^ c, 0x01000193) >>> 0;
    }
    return undefined;
  }
}
