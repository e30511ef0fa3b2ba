/**
 * Messages for identifiers (slugs, organisation, invitation and channel ids) that the schema
 * refuses: what the identifier is, and which of the rules it breaks.
 */
import { MAX_IDENTIFIER_LENGTH } from '../api/encode-segment.js';
import { escapeInvisibleCharacters } from '../model/invisible-characters.js';

/** What an identifier at `path` is called in messages. */
export function nameIdentifier(path: readonly string[]): string {
  const [top, , field, list] = path;
  if (top === 'activeOrganisation') return 'activeOrganisation';
  if (top !== 'organisations') return 'identifier';
  if (path.length === 2) return 'organisation slug';
  if (field === 'id') return 'organisation id';
  if (field === 'invitations' && list !== undefined) return 'invitation id';
  if (field === 'notificationChannels' && list !== undefined) return 'channel id';
  return 'identifier';
}

/**
 * The field at `path`, for messages: `billing.customerID` and `invitations.accept[0]` inside an
 * organisation (whose slug is the key on the line above), `organisation "acme"` for the entry
 * itself, `defaults.billing` and `version` elsewhere.
 */
export function nameField(path: readonly string[]): string {
  if (path.length === 0) return 'the file';
  const inOrganisation = path[0] === 'organisations' && path.length >= 2;
  if (inOrganisation && path.length === 2) return `organisation ${escapeInvisibleCharacters(JSON.stringify(path[1]))}`;
  return (inOrganisation ? path.slice(2) : path).reduce((name, segment, i) => (/^(?:0|[1-9][0-9]*)$/.test(segment) ? `${name}[${segment}]` : i === 0 ? segment : `${name}.${segment}`), '');
}

/**
 * Why `value` cannot be this identifier. The same rules as the client's checkIdentifier (which
 * would refuse it at apply time), plus, for slugs, no "/" or whitespace at all.
 */
export function describeBadIdentifier(value: string, name: string): string {
  const shown = escapeInvisibleCharacters(JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value));
  const isSlug = name === 'organisation slug' || name === 'activeOrganisation';
  // eslint-disable-next-line no-control-regex
  const control = isSlug ? /[\u0000-\u001f\u007f-\u009f]/ : /[\u0000-\u001f\u007f]/;
  if (value === '') return `${name} must not be empty`;
  if (value === '.' || value === '..') return `${name} must not be "${value}": it would change the URL path`;
  if (value.length > MAX_IDENTIFIER_LENGTH) return `${name} is ${value.length} characters long (at most ${MAX_IDENTIFIER_LENGTH})`;
  if (control.test(value)) return `${name} ${shown} must not contain control characters`;
  if (isSlug && value.includes('/')) return `${name} ${shown} must not contain "/"`;
  if (isSlug) return `${name} ${shown} must not contain whitespace`;
  return `${name} ${shown} must not start or end with whitespace`;
}
