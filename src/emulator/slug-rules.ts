/**
 * The slug rules of the project decisions ("Slug rules"): each broken rule yields one
 * user-friendly message, so a client can show them all at once.
 */
import type { SlugAvailability } from '../api/types.js';

export const RESERVED_SLUGS: ReadonlySet<string> = new Set([
  'admin',
  'api',
  'app',
  'billing',
  'help',
  'login',
  'organisations',
  'root',
  'settings',
  'signup',
  'support',
  'www',
]);

export const SLUG_PATTERN = /^[a-z][a-z0-9]*(-[a-z0-9]+)*$/;
export const SLUG_MIN_LENGTH = 3;
export const SLUG_MAX_LENGTH = 40;

/** `isTaken` is asked last and only for slugs that could otherwise be used or are merely reserved. */
export function checkSlug(slug: string, isTaken: (slug: string) => boolean): SlugAvailability {
  const messages = listSlugFormatProblems(slug);
  if (RESERVED_SLUGS.has(slug)) messages.push('This slug is reserved.');
  if (isTaken(slug.toLowerCase())) messages.push('This slug is already taken.');
  return { ok: messages.length === 0, messages };
}

function listSlugFormatProblems(slug: string): string[] {
  const messages: string[] = [];
  const length = [...slug].length;
  if (length < SLUG_MIN_LENGTH) messages.push(`A slug must be at least ${SLUG_MIN_LENGTH} characters long.`);
  if (length > SLUG_MAX_LENGTH) messages.push(`A slug must be at most ${SLUG_MAX_LENGTH} characters long.`);
  if (SLUG_PATTERN.test(slug)) return messages;
  if (/[^a-z0-9-]/.test(slug)) messages.push('A slug may contain only lowercase letters, digits and hyphens.');
  if (slug.length > 0 && !/^[a-z]/i.test(slug)) messages.push('A slug must start with a letter.');
  if (slug.endsWith('-')) messages.push('A slug must not end with a hyphen.');
  if (slug.includes('--')) messages.push('A slug must not contain two hyphens in a row.');
  return messages;
}
