import { OrgformError } from '../errors.js';

/** Longest identifier orgform will put in a path; longer ones are surely a mistake. */
export const MAX_IDENTIFIER_LENGTH = 512;

/**
 * Why an identifier cannot be carried as one URL path segment, or undefined when it can.
 * `encodeURIComponent` leaves `.` and `..` as they are, and URL resolution would collapse them
 * into another path, so they are refused rather than encoded.
 */
export function checkIdentifier(value: string): string | undefined {
  if (value.length === 0) return 'it is empty';
  if (value === '.' || value === '..') return `"${value}" would change the path`;
  if (value.length > MAX_IDENTIFIER_LENGTH) return `it is ${value.length} characters long (at most ${MAX_IDENTIFIER_LENGTH})`;
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(value)) return 'it contains a control character';
  if (value !== value.trim()) return 'it starts or ends with white space';
  return undefined;
}

/** Encodes an identifier as exactly one path segment, or throws before any request is made. */
export function encodePathSegment(value: string, what: string): string {
  const problem = checkIdentifier(value);
  if (problem !== undefined) {
    const shown = value.length > 40 ? `${value.slice(0, 40)}…` : value;
    throw new OrgformError('UNSAFE_INPUT', `Refusing ${what} "${shown}": ${problem}. Check the identifier in your configuration.`);
  }
  return encodeURIComponent(value);
}
