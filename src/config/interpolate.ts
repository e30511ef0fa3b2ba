/**
 * `${VAR}` in string values, from the environment, so that secrets and per-environment values stay
 * out of git. `$${` stands for a literal `${`. An unset or empty variable is an error, never an empty
 * string: an empty billing e-mail or id would otherwise be applied silently and clear the field.
 */

export type InterpolationResult = { ok: true; value: string } | { ok: false; messages: string[] };

const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export function interpolate(text: string, env: Readonly<Record<string, string | undefined>>): InterpolationResult {
  if (!text.includes('${')) return { ok: true, value: text };
  let value = '';
  const messages: string[] = [];
  let i = 0;
  while (i < text.length) {
    if (text.startsWith('$${', i)) {
      value += '${';
      i += 3;
    } else if (text.startsWith('${', i)) {
      const end = text.indexOf('}', i + 2);
      if (end < 0) {
        messages.push('"${" without a closing "}" (write "$${" for a literal "${")');
        break;
      }
      const name = text.slice(i + 2, end);
      const resolved = VARIABLE_NAME.test(name) ? env[name] : undefined;
      if (!VARIABLE_NAME.test(name)) {
        messages.push(`"\${${name}}" is not a variable reference: names are letters, digits and _, not starting with a digit`);
      } else if (resolved === undefined) {
        messages.push(`environment variable ${name} is not set`);
      } else if (resolved === '') {
        // CI systems hand a missing secret over as an empty string: applying it would clear a field.
        messages.push(`environment variable ${name} is set but empty (a missing CI secret is often passed as ""); give it a value`);
      } else {
        value += resolved;
      }
      i = end + 1;
    } else {
      value += text[i];
      i += 1;
    }
  }
  return messages.length > 0 ? { ok: false, messages } : { ok: true, value };
}

/** The text to write so that interpolate() gives `text` back. */
export function escapeInterpolation(text: string): string {
  // A function, because in a replacement string "$$" means "$".
  return text.replaceAll('${', () => '$${');
}
