import { describe, expect, it } from 'vitest';
import { LazyArray, stringifyPieces } from '../../src/plan/stringify-pieces.js';

/** Values of every shape JSON.stringify treats in its own way. */
const VALUES: Record<string, unknown> = {
  'an empty object': {},
  'an empty list': [],
  'a string with line breaks, quotes and non-ASCII text': 'a\nb "c" \u2028 é€😀 \\',
  'a number, true, null': [1.5, -0, 1e21, true, null],
  'members with no JSON form, left out; in lists, null': { a: undefined, b: () => 1, c: [undefined, () => 1, Symbol('s')], d: 1 },
  'an object with every member left out': { a: undefined },
  'a Date, a Map and a class instance, as their toJSON or their own keys': { when: new Date(0), map: new Map([[1, 2]]), point: new (class { x = 1; y = [2] })() },
  'deep nesting, lists in objects in lists': { a: [{ b: [{ c: [{ d: [[], {}, [1, [2, { e: 'f\n' }]]] }] }] }], g: { h: { i: { j: { k: [1] } } } } },
  'an object with no prototype': Object.assign(Object.create(null) as object, { z: 1, a: [2] }),
  'a number as the whole value': 7,
};

describe('stringifyPieces', () => {
  for (const [name, value] of Object.entries(VALUES)) {
    for (const space of ['', '  ', '\t']) {
      it(`joins to JSON.stringify's text for ${name} (space ${JSON.stringify(space)})`, () => {
        expect([...stringifyPieces(value, space)].join('')).toBe(JSON.stringify(value, null, space));
      });
    }
  }

  it('writes a LazyArray as the list of its items mapped, as JSON.stringify does through its toJSON', () => {
    const value = { list: new LazyArray([1, 2, 3], (n) => ({ n, half: n / 2, gone: undefined })), empty: new LazyArray([], (n) => n) };
    const mapped = { list: [1, 2, 3].map((n) => ({ n, half: n / 2 })), empty: [] };
    expect([...stringifyPieces(value, '  ')].join('')).toBe(JSON.stringify(mapped, null, 2));
    expect(JSON.stringify(value, null, 2)).toBe(JSON.stringify(mapped, null, 2));
  });

  it('hands a long list over in pieces of about 64 KB, each of whole members', () => {
    const rows = Array.from({ length: 50_000 }, (_, i) => ({ address: `organisations.org-${i}.billing`, after: { billingEmail: `b-${i}@example.test` } }));
    const pieces = [...stringifyPieces({ rows }, '  ')];
    expect(pieces.join('')).toBe(JSON.stringify({ rows }, null, 2));
    expect(pieces.length).toBeGreaterThan(20);
    for (const piece of pieces.slice(0, -1)) {
      expect(piece.length).toBeGreaterThanOrEqual(64 * 1024);
      expect(piece.length).toBeLessThan(64 * 1024 + 500);
    }
  });
});
