/**
 * JSON pointers (RFC 6901), the form ajv gives an error's place in (`instancePath`) and schemas
 * give a `$ref` in: "/"-separated segments, with "~" and "/" inside a segment escaped.
 */
import type { DocPath } from './source-tree.js';

export function escapePointerSegment(segment: string): string {
  // Most segments have neither character: skip the two scans of replaceAll for them.
  return segment.includes('~') || segment.includes('/') ? segment.replaceAll('~', '~0').replaceAll('/', '~1') : segment;
}

function unescapePointerSegment(segment: string): string {
  // ~1 first: "~01" stands for "~1", not "/".
  return segment.replaceAll('~1', '/').replaceAll('~0', '~');
}

export function toPointer(path: DocPath): string {
  return path.map((segment) => `/${escapePointerSegment(String(segment))}`).join('');
}

export function parsePointer(pointer: string): string[] {
  if (pointer === '') return [];
  return pointer.slice(1).split('/').map(unescapePointerSegment);
}
