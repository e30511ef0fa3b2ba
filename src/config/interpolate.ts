/**
 * `${VAR}` in string values, from the environment, so that per-environment values stay out of git.
 * Only variables named `ORGFORM_VAR_…` are read (Terraform's `TF_VAR_` habit): the pipeline marks
 * what is configuration by naming it so, and a pull request, which writes the files but not the
 * pipeline, cannot read the job's credentials (the service token, the state's password, the plan
 * key, the CI's own tokens) into a plan, a comment or a request. `$${` stands for a literal `${`.
 * An unset or empty variable is an error, never an empty string: an empty billing e-mail or id would
 * otherwise be applied silently and clear the field. No message here holds a variable's value.
 */

/** The variables `${NAME}` reads: ORGFORM_VAR_… only (cli/settings.ts hands no other over). */
export type ConfigVariables = Readonly<Record<string, string | undefined>>;

export type InterpolationResult = { ok: true; value: string } | { ok: false; messages: string[] };

/** The prefix of every variable `${NAME}` may read. */
export const VARIABLE_PREFIX = 'ORGFORM_VAR_';

const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** A name as a message quotes it: what the file wrote, cut (it may be anything up to the next "}"). */
const MAX_NAME_SHOWN = 60;

function showName(name: string): string {
  return JSON.stringify(name.length > MAX_NAME_SHOWN ? `${name.slice(0, MAX_NAME_SHOWN)}…` : name);
}

/** Why `${name}` cannot be read, or undefined when it may be (whether it is set is the caller's to check). */
function refuseName(name: string): string | undefined {
  if (!VARIABLE_NAME.test(name)) return `${showName(`\${${name}}`)} is not a variable reference: names are letters, digits and _, not starting with a digit`;
  if (name.startsWith(VARIABLE_PREFIX) && name.length > VARIABLE_PREFIX.length) return undefined;
  const suggested = `${VARIABLE_PREFIX}${name.replace(/^ORGFORM_(?:VAR_?)?/, '') || 'NAME'}`;
  return (
    `\${${name}} cannot be read: only variables named ${VARIABLE_PREFIX}… are (the pipeline's configuration, never its credentials). ` +
    `If it is configuration, set ${suggested} in the pipeline and write \${${suggested}}`
  );
}

export function interpolate(text: string, variables: ConfigVariables): InterpolationResult {
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
      const refused = refuseName(name);
      const resolved = refused === undefined ? variables[name] : undefined;
      if (refused !== undefined) {
        messages.push(refused);
      } else if (resolved === undefined) {
        messages.push(`environment variable ${name} is not set`);
      } else if (resolved === '') {
        // CI systems hand a missing variable over as an empty string: applying it would clear a field.
        messages.push(`environment variable ${name} is set but empty (a missing CI variable is often passed as ""); give it a value`);
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

/** Whether `text` holds a `${NAME}` reference (not only escaped `$${`): its value then came from the environment. */
export function hasReference(text: string): boolean {
  return text.replaceAll('$${', '').includes('${');
}

/** The text to write so that interpolate() gives `text` back. */
export function escapeInterpolation(text: string): string {
  // A function, because in a replacement string "$$" means "$".
  return text.replaceAll('${', () => '$${');
}
