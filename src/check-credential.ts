/**
 * A credential (the service token, the state's user name and password, the plan key) holding a
 * control character is refused before it is used: sent, a line break in a header is refused by the
 * HTTP client with a message that quotes the header, or ends the header early; it is most often an
 * escape sequence or a second line pasted with the secret. The refusal names where the credential
 * came from, never its value.
 */
import { UsageError } from './errors.js';

// C0 controls, DEL and C1 controls.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

export function checkCredential(value: string, source: string): void {
  const at = value.search(CONTROL);
  if (at < 0) return;
  const code = value.charCodeAt(at).toString(16).toUpperCase().padStart(4, '0');
  throw new UsageError(
    `${source} holds a control character (U+${code}, at position ${at + 1}): refused before it is used (its value is never shown). Set it again without it: a line break or an escape sequence pasted with it?`,
  );
}
