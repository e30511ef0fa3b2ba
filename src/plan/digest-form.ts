/**
 * How a plan's digest is written (plan-digest.ts makes it): `sha256:` and 64 lowercase hexadecimal
 * digits. Dependency-free, so that the command line checks `--expect-digest` before any command's
 * code is loaded.
 */

/** `sha256:` and 64 lowercase hexadecimal digits. */
export const DIGEST_PATTERN = /^sha256:[0-9a-f]{64}$/;

/** A digest as given (`sha256:HEX` or the 64 digits alone, any case), in its one form; undefined when it is not one. */
export function parseDigest(text: string): string | undefined {
  const trimmed = text.trim().toLowerCase();
  const digest = trimmed.startsWith('sha256:') ? trimmed : `sha256:${trimmed}`;
  return DIGEST_PATTERN.test(digest) ? digest : undefined;
}

/** The short form people read and compare (`sha256:` and 12 digits); apply takes only the whole digest. */
export function shortDigest(digest: string): string {
  return digest.slice(0, 'sha256:'.length + 12);
}
