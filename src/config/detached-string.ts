/**
 * A value kept from a parsed file, as a string of its own. V8 makes a substring of 13 characters
 * or more a view into the string it was cut from (a "sliced string", V8 issue 2869), so one billing
 * e-mail kept from a file keeps the whole file's text alive for the whole of an apply
 * (docs/performance.md). A JSON round trip is the cheapest copy that is certain to be flat; shorter
 * strings are copies already.
 */
const SLICED_MIN_LENGTH = 13;

export function detachString(value: string): string {
  return value.length < SLICED_MIN_LENGTH ? value : (JSON.parse(JSON.stringify(value)) as string);
}
