/**
 * Removes secrets from text before it goes into an error. Errors are redacted where they are
 * made, in their constructors (a Redactor is handed to each), so that nothing later can leak what
 * was never stored.
 *
 * Secrets, not words: every token handed out is removed wherever it stands, and beyond those only
 * what has the shape of a credential: a JWT, the value of an Authorization header or a
 * `bearerToken` cookie, a credential after `Bearer`, a secret in a URL. "A valid bearer token is
 * required." comes out as it went in.
 */

/** A value after `Bearer ` (or in an Authorization header): the token68 alphabet of RFC 7235. */
const TOKEN68 = '[A-Za-z0-9._~+/=-]+';

/**
 * Whether a word after `Bearer` or `Authorization:` is a credential rather than a word of a sentence:
 * a digit, a character words do not have (`_~+/=`, a dot inside), or 16 characters and more.
 */
function looksLikeCredential(value: string): boolean {
  const bare = value.replace(/[.,;:]+$/, '');
  // `realm=`, `error=invalid_token`: auth parameters (token68 has `=` only as trailing padding).
  if (/=[^=]/.test(bare) || /^[A-Za-z]+=$/.test(bare)) return false;
  return /\d/.test(bare) || /[_~+/=]/.test(bare) || /\.\w/.test(bare) || bare.length >= 16;
}

/** The credential part of `value` replaced, keeping a full stop or comma that ended a sentence. */
function redactValue(value: string): string {
  const trailing = /[.,;:]+$/.exec(value)?.[0] ?? '';
  return `[REDACTED]${trailing}`;
}

/**
 * Query parameters that carry a credential, for text that names no scheme (`?token=…` in a
 * service's message). In an address with a scheme every query value is hidden (redactAddress).
 */
const URL_SECRET_PARAMS =
  'access_token|id_token|refresh_token|private_token|job_token|token|api_key|apikey|key|password|passwd|secret|client_secret|signature|sig|auth|code|x-amz-signature|x-amz-credential|x-amz-security-token|x-goog-signature|x-goog-credential';

/**
 * The query parameters whose values an address shows: orgform's own settings of a state address,
 * known to hold no credential. Every other value is hidden, whatever its name: a signed URL's
 * `sig`, `X-Amz-Signature` or `private_token` needs no list to be kept out.
 */
const SHOWN_QUERY_NAMES = new Set(['state', 'schema', 'sslmode']);

/** An address with a scheme, where it stands in text: up to a space, a quote or an angle bracket. */
const ADDRESS_IN_TEXT = /\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>`]+/gi;

/** A query string (without its `?`), every value hidden but those of SHOWN_QUERY_NAMES. */
function redactQuery(query: string): string {
  return query
    .split('&')
    .map((part) => {
      const eq = part.indexOf('=');
      if (eq < 0) return part === '' ? part : '[REDACTED]';
      const name = part.slice(0, eq);
      let decoded = name;
      try {
        decoded = decodeURIComponent(name.replaceAll('+', ' '));
      } catch {
        // shown as written
      }
      return SHOWN_QUERY_NAMES.has(decoded.toLowerCase()) ? part : `${name}=[REDACTED]`;
    })
    .join('&');
}

/**
 * An address found in text, redacted as redactAddress does but in place, without parsing it (text
 * around it stays as it was): everything up to the last `@` after the scheme is user information
 * (a password may hold `#`, `/` or `?`); the query's values, and a fragment's that has any, hidden.
 */
function redactAddressInText(address: string): string {
  const withoutUser = address.replace(/^([a-z][a-z0-9+.-]*:\/\/)\S*@/i, '$1[REDACTED]@');
  const hash = withoutUser.indexOf('#');
  const [before, fragment] = hash < 0 ? [withoutUser, undefined] : [withoutUser.slice(0, hash), withoutUser.slice(hash + 1)];
  const question = before.indexOf('?');
  const main = question < 0 ? before : `${before.slice(0, question)}?${redactQuery(before.slice(question + 1))}`;
  return fragment === undefined ? main : `${main}#${fragment.includes('=') ? redactQuery(fragment) : fragment}`;
}

/**
 * An address as orgform shows it (the service's, the state's, a proxy's, where a redirect points):
 * its user information and its fragment gone, and every query value hidden except those of a few
 * names known to be harmless (`state`, `schema`, `sslmode`). An address that does not parse shows
 * its scheme only; one without a scheme (a path, a relative redirect) keeps its path.
 */
export function redactAddress(raw: string): string {
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(raw);
  if (scheme === null) {
    const cut = raw.search(/[?#]/);
    if (cut < 0) return raw;
    return raw[cut] === '?' ? `${raw.slice(0, cut)}?${redactQuery(raw.slice(cut + 1).split('#')[0]!)}` : raw.slice(0, cut);
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return `${scheme[1]}://…`;
  }
  // An "@" that is not the end of user information: a password with an unescaped "#", "/" or "?"
  // split the address there, and part of it would show as the host or the port.
  if (url.username === '' && url.password === '' && raw.includes('@', scheme[0].length)) return `${scheme[1]}://…`;
  // A WHATWG URL of a special scheme (http, file...) has an origin; postgres: and the like do not.
  const auth = url.username !== '' || url.password !== '' ? '[REDACTED]@' : '';
  const search = url.search === '' ? '' : `?${redactQuery(url.search.slice(1))}`;
  return `${url.protocol}//${auth}${url.host}${url.pathname}${search}`;
}

export function redactSecrets(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) {
    if (secret.length < 4) continue;
    out = out.split(secret).join('[REDACTED]');
    const encoded = encodeURIComponent(secret);
    if (encoded !== secret) out = out.split(encoded).join('[REDACTED]');
  }
  return (
    out
      // A JWT wherever it stands: three base64url parts, the first two JSON objects (`eyJ`).
      .replace(/\beyJ[A-Za-z0-9_-]{4,}\.eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*/g, '[REDACTED]')
      // An Authorization header quoted as a value (a JSON dump of headers): whatever it holds.
      .replace(/(["']authorization["']\s*:\s*["'])[^"']*/gi, '$1[REDACTED]')
      // `Authorization: Basic X` as text: X, whatever it looks like; `Authorization: X`: X when it is a credential.
      .replace(new RegExp(`(authorization\\s*[:=]\\s*)((?:bearer|basic|token)\\s+)?(${TOKEN68})`, 'gi'), (all, head: string, scheme: string | undefined, value: string) =>
        scheme !== undefined || looksLikeCredential(value) ? `${head}${scheme ?? ''}${redactValue(value)}` : all,
      )
      // A credential after `Bearer` or `Basic` (a header quoted by a proxy or a state server).
      .replace(new RegExp(`(\\b(?:bearer|basic)\\s+)(${TOKEN68})`, 'gi'), (all, head: string, value: string) => (looksLikeCredential(value) ? `${head}${redactValue(value)}` : all))
      // The v2 endpoint's cookie.
      .replace(/(bearerToken=)[^;\s"']+/g, '$1[REDACTED]')
      // Addresses: their user information and every query value but the harmless ones; then, in
      // text with no scheme, the parameters named as credentials.
      .replace(ADDRESS_IN_TEXT, redactAddressInText)
      .replace(new RegExp(`([?&;](?:${URL_SECRET_PARAMS})=)(?!\\[REDACTED\\])[^&#\\s"']+`, 'gi'), '$1[REDACTED]')
  );
}

/**
 * A copy of an underlying error that is safe to keep as a `cause`: its name, code and redacted
 * message only. The original may hold request options, headers or sockets.
 */
export function sanitizeCause(err: unknown, secrets: readonly string[]): Error | undefined {
  if (err === undefined || err === null) return undefined;
  const source = err as { name?: unknown; message?: unknown; code?: unknown; cause?: unknown };
  const message = typeof source.message === 'string' ? source.message : String(err);
  const safe = new Error(redactSecrets(message, secrets));
  safe.name = typeof source.name === 'string' ? source.name : 'Error';
  if (typeof source.code === 'string') (safe as Error & { code?: string }).code = source.code;
  // One level of cause is enough to explain "fetch failed"; deeper chains only add noise.
  if (source.cause !== undefined && source.cause !== err) {
    const inner = source.cause as { name?: unknown; message?: unknown; code?: unknown };
    const innerSafe = new Error(redactSecrets(typeof inner.message === 'string' ? inner.message : String(inner), secrets));
    innerSafe.name = typeof inner.name === 'string' ? inner.name : 'Error';
    if (typeof inner.code === 'string') (innerSafe as Error & { code?: string }).code = inner.code;
    (safe as Error & { cause?: unknown }).cause = innerSafe;
  }
  safe.stack = `${safe.name}: ${safe.message}`;
  return safe;
}

/** `text` on one line, cut to `max` characters (an ellipsis marks the cut). */
function oneLine(text: string, max: number): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max)}…` : line;
}

/**
 * What a run knows to keep out of everything it shows: the secrets it was given (a token, a state's
 * password, a proxy's credentials) and, whatever it was given, every credential's shape. Live: a
 * list handed over (a token command's tokens) is read each time, so a token that comes later is
 * redacted too. Errors take one and redact in their constructors; nothing else needs to.
 */
export class Redactor {
  readonly #own: string[] = [];
  readonly #lists: (readonly string[])[];

  /** `lists`: secret lists that grow as the run goes (kept, not copied). */
  constructor(...lists: readonly (readonly string[])[]) {
    this.#lists = [this.#own, ...lists];
  }

  /** Secrets to redact from now on (under 4 characters: not looked for, as in redactSecrets). */
  add(...secrets: readonly string[]): this {
    for (const secret of secrets) if (secret.length >= 4 && !this.#own.includes(secret)) this.#own.push(secret);
    return this;
  }

  /** Every secret known now. */
  get secrets(): string[] {
    return this.#lists.flat();
  }

  text(text: string): string {
    return redactSecrets(text, this.secrets);
  }

  /** Redacted, then on one line and cut to `max`: a cut made first could fall inside a secret and leave its start. */
  short(text: string, max: number): string {
    return oneLine(this.text(text), max);
  }

  /** An address as orgform shows one (redactAddress), less any secret it knows. */
  address(raw: string): string {
    return this.text(redactAddress(raw));
  }

  /** An underlying error made safe to keep as a cause (sanitizeCause). */
  cause(err: unknown): Error | undefined {
    return sanitizeCause(err, this.secrets);
  }

  /** Whether `text` holds a known secret, as it is or percent-encoded: checked on every answer, so it builds nothing. */
  holds(text: string): boolean {
    for (const list of this.#lists) {
      for (const secret of list) if (secret.length >= 4 && (text.includes(secret) || text.includes(encodeURIComponent(secret)))) return true;
    }
    return false;
  }
}
