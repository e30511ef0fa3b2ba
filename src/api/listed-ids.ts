/**
 * The organisation ids a listing has given so far, each with the page it came on, kept compactly:
 * a listing of a million holds them all until it ends (to refuse an id listed again), and a map of
 * a million strings costs about 60 MB. Here each page's ids are one string (their concatenation)
 * with where each ends, and an open-addressing table of 32-bit hashes finds an id's earlier
 * listing: about 30 bytes an id instead of 60 (docs/performance.md, Memory).
 *
 * A hash only points at candidates: every candidate is compared with the id itself, character for
 * character, so two ids whose hashes collide are never taken for one (a good listing is never
 * refused by a collision, and a repeated id is never missed). The hash is seeded afresh in every
 * run, so a service cannot choose ids that collide to slow the table down.
 */
import { randomInt } from 'node:crypto';

const EMPTY = 0;
const FIRST_CAPACITY = 1024;

export class ListedIds {
  readonly #seed: number;
  /** Each page's ids, concatenated; `#pageFirst[p]` is the ordinal of page p+1's first id. */
  readonly #pageTexts: string[] = [];
  #pageFirst = new Uint32Array(64);
  /** For each id by ordinal (the nth listed), where it ends in its page's text. */
  #ends = new Uint32Array(FIRST_CAPACITY);
  #count = 0;
  /** Open addressing, linear probing: the ordinal + 1 of the id in each slot (0: empty), and its hash. */
  #slots = new Uint32Array(FIRST_CAPACITY * 2);
  #hashes = new Uint32Array(FIRST_CAPACITY * 2);

  constructor(seed = randomInt(0, 2 ** 32 - 1)) {
    this.#seed = seed >>> 0;
  }

  /** How many ids are held. */
  get size(): number {
    return this.#count;
  }

  /** The page (1 for the first) an id was listed on, or undefined if it has not been. */
  pageOf(id: string): number | undefined {
    const hash = this.#hash(id);
    const mask = this.#slots.length - 1;
    for (let slot = hash & mask; this.#slots[slot] !== EMPTY; slot = (slot + 1) & mask) {
      if (this.#hashes[slot] !== hash) continue;
      const ordinal = this.#slots[slot]! - 1;
      const page = this.#pageOfOrdinal(ordinal);
      if (this.#idAt(ordinal, page) === id) return page + 1;
    }
    return undefined;
  }

  /**
   * Adds the ids of the next page (page `pageTexts.length + 1`): none of them listed before, and
   * each once (the caller checks both with `pageOf` and its own set of the page's ids).
   */
  addPage(ids: readonly string[]): void {
    const page = this.#pageTexts.length;
    if (page === this.#pageFirst.length) this.#pageFirst = grown(this.#pageFirst);
    this.#pageFirst[page] = this.#count;
    // One flat string of the page's ids (join flattens): the ids' own strings, and the page's
    // text they may be views into, can then be collected.
    this.#pageTexts.push(ids.join(''));
    let end = 0;
    for (const id of ids) {
      end += id.length;
      this.#add(id, end);
    }
  }

  #add(id: string, end: number): void {
    if (this.#count === this.#ends.length) this.#ends = grown(this.#ends);
    // Grown before half full, so that probes stay short.
    if ((this.#count + 1) * 2 > this.#slots.length) this.#rehash(this.#slots.length * 2);
    const ordinal = this.#count;
    this.#ends[ordinal] = end;
    this.#count += 1;
    this.#place(ordinal, this.#hash(id));
  }

  #place(ordinal: number, hash: number): void {
    const mask = this.#slots.length - 1;
    let slot = hash & mask;
    while (this.#slots[slot] !== EMPTY) slot = (slot + 1) & mask;
    this.#slots[slot] = ordinal + 1;
    this.#hashes[slot] = hash;
  }

  #rehash(capacity: number): void {
    const slots = this.#slots;
    const hashes = this.#hashes;
    this.#slots = new Uint32Array(capacity);
    this.#hashes = new Uint32Array(capacity);
    for (let i = 0; i < slots.length; i += 1) if (slots[i] !== EMPTY) this.#place(slots[i]! - 1, hashes[i]!);
  }

  /** The page index (0 for the first) holding the id of `ordinal`: the last page starting at or before it. */
  #pageOfOrdinal(ordinal: number): number {
    let low = 0;
    let high = this.#pageTexts.length - 1;
    while (low < high) {
      const mid = (low + high + 1) >>> 1;
      if (this.#pageFirst[mid]! <= ordinal) low = mid;
      else high = mid - 1;
    }
    return low;
  }

  #idAt(ordinal: number, page: number): string {
    const start = ordinal === this.#pageFirst[page] ? 0 : this.#ends[ordinal - 1]!;
    return this.#pageTexts[page]!.slice(start, this.#ends[ordinal]);
  }

  #hash(id: string): number {
    return hashId(id, this.#seed);
  }
}

/** FNV-1a over the UTF-16 code units, seeded, with murmur3's finaliser to spread the bits: 32 bits. */
export function hashId(id: string, seed: number): number {
  let h = (0x811c9dc5 ^ seed) >>> 0;
  for (let i = 0; i < id.length; i += 1) h = Math.imul(h ^ id.charCodeAt(i), 0x01000193);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

function grown(array: Uint32Array<ArrayBuffer>): Uint32Array<ArrayBuffer> {
  const bigger = new Uint32Array(array.length * 2);
  bigger.set(array);
  return bigger;
}
