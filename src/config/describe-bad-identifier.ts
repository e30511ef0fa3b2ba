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

/** Text quoted in a message, cut to `max` characters, every character visible. */
function quote(text: string, max: number): string {
  return escapeInvisibleCharacters(JSON.stringify(text.length > max ? `${text.slice(0, max)}…` : text));
}

/**
 * A value as a message quotes it: cut to 40 characters; or, where it came from the environment,
 * the text as written (`written`, which holds the `${ORGFORM_VAR_…}`), never the value.
 */
export function quoteValue(value: string, written: string | undefined): string {
  return written === undefined ? quote(value, 40) : `${quote(written, 80)} (its value is not shown)`;
}

/**
 * Why `value` cannot be this identifier. The same rules as the client's checkIdentifier (which
 * would refuse it at apply time), plus, for slugs, no "/" or whitespace at all. `written`: the text
 * as written, when the value came from the environment (see quoteValue).
 */
export function describeBadIdentifier(value: string, name: string, written?: string): string {
  const shown = quoteValue(value, written);
  const isSlug = name === 'organisation slug' || name === 'activeOrganisation';
  // eslint-disable-next-line no-control-regex
  const control = isSlug ? /[\u0000-\u001f\u007f-\u009f]/ : /[\u0000-\u001f\u007f]/;
  if (value === '') return `${name} must not be empty`;
  if (value === '.' || value === '..') return written === undefined ? `${name} must not be "${value}": it would change the URL path` : `${name} ${shown} must not be "." or "..": it would change the URL path`;
  if (value.length > MAX_IDENTIFIER_LENGTH) return `${name} is ${value.length} characters long (at most ${MAX_IDENTIFIER_LENGTH})`;
  if (control.test(value)) return `${name} ${shown} must not contain control characters`;
  if (isSlug && value.includes('/')) return `${name} ${shown} must not contain "/"`;
  if (isSlug) return `${name} ${shown} must not contain whitespace`;
  return `${name} ${shown} must not start or end with whitespace`;
}
