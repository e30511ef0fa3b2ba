/**
 * Strings that would be sent as something other than what a reviewer sees: a lone surrogate
 * (half of a UTF-16 pair, from an escape such as "\ud800"), which UTF-8 cannot carry, so that the
 * request could not be made; and invisible or bidirectional characters (the one list of
 * model/invisible-characters.ts), which make two different values look the same in a pull request.
 * An identifier (a slug, an organisation, invitation or channel id) must hold neither; any other
 * value must not hold a lone surrogate, and is warned about for the others.
 */
import { codePointName, describeInvisibleCharacter, escapeInvisibleCharacters, firstInvisibleCharacter, firstLoneSurrogate } from '../model/invisible-characters.js';

export interface HiddenCharacterFinding {
  level: 'error' | 'warning';
  message: string;
}

/** The value as a quoted string with every character visible, around `index` when it is long. */
function show(value: string, index: number): string {
  const part = value.length <= 60 ? value : `${index > 20 ? '…' : ''}${value.slice(Math.max(0, index - 20), index + 20)}${index + 20 < value.length ? '…' : ''}`;
  return escapeInvisibleCharacters(JSON.stringify(part));
}

/** `U+202E, a bidirectional control, which changes the order in which text is shown`. */
function describeFound(char: string): string {
  const what = describeInvisibleCharacter(char);
  const article = /^[aeiou]/i.test(what) ? 'an' : 'a';
  return `${codePointName(char)}, ${article} ${what}${what === 'bidirectional control' ? ', which changes the order in which text is shown' : ''}`;
}

/**
 * What is wrong with `value` where it stands, or undefined. `what` names it (`invitation id`,
 * `billing.customerID`); `written` is the text as written, shown instead of the value when it
 * holds a `${VAR}` (the value may be a secret).
 */
export function describeHiddenCharacter(value: string, what: string, identifier: boolean, written: string = value): HiddenCharacterFinding | undefined {
  const subject = (index: number) => (written !== value ? `${what} ${escapeInvisibleCharacters(JSON.stringify(written))}: its value` : `${what} ${show(value, index)}`);
  const lone = firstLoneSurrogate(value);
  if (lone !== undefined) {
    return {
      level: 'error',
      message: `${subject(lone.index)} holds a lone surrogate (${codePointName(lone.char)}): half of a UTF-16 pair, which UTF-8 cannot carry, so it cannot be sent. Write the whole character (both halves of the escape), or remove it`,
    };
  }
  const found = firstInvisibleCharacter(value);
  if (found === undefined) return undefined;
  if (identifier) return { level: 'error', message: `${subject(found.index)} holds ${describeFound(found.char)}: an identifier must not hold invisible or bidirectional characters` };
  return { level: 'warning', message: `${subject(found.index)} holds ${describeFound(found.char)}: it is sent as it is; remove it unless it is meant to be there` };
}
