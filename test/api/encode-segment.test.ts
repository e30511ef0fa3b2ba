import { describe, expect, it } from 'vitest';
import { checkIdentifier, encodePathSegment } from '../../src/api/encode-segment.js';

describe('encodePathSegment', () => {
  it.each([
    ['org:hooli/eu', 'org%3Ahooli%2Feu'],
    ['a?x', 'a%3Fx'],
    ['a#b', 'a%23b'],
    ['%2e%2e', '%252e%252e'],
    ['...', '...'],
    ['ünïcode', '%C3%BCn%C3%AFcode'],
  ])('carries %s as the one segment %s', (raw, encoded) => {
    expect(encodePathSegment(raw, 'id')).toBe(encoded);
    expect(decodeURIComponent(encoded)).toBe(raw);
    expect(encoded).not.toContain('/');
  });

  it.each([
    ['', 'empty'],
    ['.', 'would change the path'],
    ['..', 'would change the path'],
    ['x'.repeat(10_240), 'at most 512'],
    ['a\nb', 'control character'],
    [' a', 'white space'],
  ])('refuses %j before any request', (raw, reason) => {
    expect(checkIdentifier(raw)).toContain(reason);
    expect(() => encodePathSegment(raw, 'organisation id')).toThrow(/Refusing organisation id/);
  });
});
