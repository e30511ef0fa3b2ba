/**
 * HTML built so that outside text cannot be forgotten unescaped, as markdown-escape.ts does for
 * Markdown: a page is written only as `Html` values, made by the `html` tag, in which the template's
 * own text is trusted and every interpolated string is escaped. Data for a page's script goes
 * through scriptJson, which keeps it data inside a `<script>` element.
 *
 * escapeHtml makes text safe in element content and in quoted attribute values: `&`, `<`, `>`, `"`
 * and `'` become character references. Invisible and bidirectional characters are not escaped here:
 * the views spell values as the text plan does (format-value.ts), which shows them as escapes.
 */

/** Made only in this module. */
let make: (text: string) => Html;

export class Html {
  static {
    make = (text) => new Html(text);
  }

  private constructor(readonly text: string) {}

  get length(): number {
    return this.text.length;
  }

  toString(): string {
    return this.text;
  }
}

const ENTITY: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(text: string): Html {
  return make(text.replace(/[&<>"']/g, (c) => ENTITY[c]!));
}

export type HtmlValue = Html | string | number | ReadonlyArray<Html>;

/** HTML from a template: its own text as written, each `${value}` escaped unless it is Html (or a list of Html) already. */
export function html(strings: TemplateStringsArray, ...values: ReadonlyArray<HtmlValue>): Html {
  let text = strings[0]!;
  values.forEach((value, i) => {
    if (value instanceof Html) text += value.text;
    else if (typeof value === 'number') text += String(value);
    else if (typeof value === 'string') text += escapeHtml(value).text;
    else text += value.map((v) => v.text).join('');
    text += strings[i + 1]!;
  });
  return make(text);
}

export const NO_HTML = make('');

const UNSAFE_IN_SCRIPT = /[<>&\u2028\u2029]/;
const UNSAFE_IN_SCRIPT_ALL = /[<>&\u2028\u2029]/g;

/**
 * Data as the text of a `<script type="application/json">` element: JSON in which nothing can end
 * the element or start a comment (`<` is written `\u003c`, so no `</script>` and no `<!--`), `>` and
 * `&` likewise, and the line and paragraph separators (U+2028, U+2029) as escapes. JSON.parse of
 * the element's text gives the data back exactly.
 */
export function scriptJson(data: unknown): Html {
  const json = JSON.stringify(data);
  // Tested first: the data of a bulk plan (megabytes) seldom holds one, and a replace copies it all.
  return make(UNSAFE_IN_SCRIPT.test(json) ? json.replace(UNSAFE_IN_SCRIPT_ALL, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`) : json);
}

/** A page's own script or style, trusted as written: only for constants of this folder. */
export function trustedCode(code: string): Html {
  return make(code);
}
