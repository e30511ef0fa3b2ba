/**
 * What `--state` / ORGFORM_STATE names: a file path (the default kind), a PostgreSQL URL or a
 * Terraform HTTP backend address. Pure: the text in, where the state is and how to show it out:
 * redacted (redactAddress), with no user information and no query value but state, schema and sslmode.
 *
 *   .orgform/state.json, file:///srv/orgform/state.json
 *   postgres://user:pass@db.example.com:5432/ops?sslmode=verify-full&state=prod&schema=orgform
 *   https://gitlab.example.com/api/v4/projects/42/terraform/state/orgform
 */
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isLoopbackHost } from '../api/base-url.js';
import { checkCredential } from '../check-credential.js';
import { UsageError } from '../errors.js';
import { redactAddress } from '../redact.js';

export type StateSpec =
  | { kind: 'file'; path: string; location: string }
  | {
      kind: 'postgres';
      /** What `pg` is given: the URL less orgform's own parameters (state, schema). Holds the password, if the URL did. */
      connectionString: string;
      /** The state's name: one lock and one set of entries per name (default `default`). */
      name: string;
      schema: string;
      location: string;
    }
  | { kind: 'http'; address: URL; location: string };

export const DEFAULT_STATE_NAME = 'default';
export const DEFAULT_SCHEMA = 'orgform';

const SCHEME = /^([a-zA-Z][a-zA-Z0-9+.-]*):\/\//;

/** libpq's sslmodes that pg 8 checks in full anyway (and warns about on stderr): said outright instead. */
const VERIFIED_IN_FULL = new Set(['prefer', 'require', 'verify-ca']);

export function parseStateSpec(raw: string, cwd: string): StateSpec {
  if (raw.trim() === '') throw new UsageError('--state (or ORGFORM_STATE) is empty: give a file path, a postgres:// URL or an https:// address.');
  const scheme = SCHEME.exec(raw)?.[1]?.toLowerCase();
  if (scheme === undefined) return fileSpec(resolve(cwd, raw));
  if (scheme === 'file') return fileSpec(fileURLToPath(raw));
  // The address as every message about it shows it: made once, here.
  const shown = redactAddress(raw);
  switch (scheme) {
    case 'postgres':
    case 'postgresql':
      return postgresSpec(raw, shown);
    case 'http':
    case 'https':
      return httpSpec(raw, shown);
    default:
      throw new UsageError(`--state ${shown}: orgform keeps state in a file, in PostgreSQL (postgres://…) or in a Terraform HTTP backend (https://…), not ${scheme}://.`);
  }
}

function fileSpec(path: string): StateSpec {
  return { kind: 'file', path, location: path };
}

function parseUrl(raw: string, shown: string): URL {
  try {
    return new URL(raw);
  } catch {
    throw new UsageError(`--state ${shown} is not a valid URL.`);
  }
}

function postgresSpec(raw: string, shown: string): StateSpec {
  const url = parseUrl(raw, shown);
  // Only a password with an unescaped `#` makes one, and the URL then splits inside the password:
  // part of it would show as a host or port, so none of the URL is shown.
  if (url.hash !== '' || raw.includes('#')) {
    throw new UsageError('--state postgres://…: the URL holds a "#". If it is part of the password, write it as %23 (or set PGPASSWORD instead).');
  }
  for (const [part, value] of [['user name', url.username], ['password', url.password], ['password parameter', url.searchParams.get('password') ?? '']] as const) {
    checkCredential(safeDecode(value), `The ${part} in the postgres:// state address`);
  }
  const name = url.searchParams.get('state') ?? DEFAULT_STATE_NAME;
  const schema = url.searchParams.get('schema') ?? DEFAULT_SCHEMA;
  url.searchParams.delete('state');
  url.searchParams.delete('schema');
  if (name === '' || name.length > 200 || /[\u0000-\u001f\u007f]/.test(name)) {
    throw new UsageError(`--state ${shown}: the state name (state=…) must be 1 to 200 printable characters.`);
  }
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) {
    throw new UsageError(`--state ${shown}: schema=${schema} must be a lower-case SQL name (letters, digits and _, not starting with a digit).`);
  }
  const sslmode = url.searchParams.get('sslmode');
  if (sslmode !== null && VERIFIED_IN_FULL.has(sslmode) && url.searchParams.get('uselibpqcompat') !== 'true') url.searchParams.set('sslmode', 'verify-full');
  const named = new URL(raw);
  if (!named.searchParams.has('state')) named.searchParams.set('state', name);
  return { kind: 'postgres', connectionString: url.toString(), name, schema, location: redactAddress(named.toString()) };
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

function httpSpec(raw: string, shown: string): StateSpec {
  const url = parseUrl(raw, shown);
  if (url.username !== '' || url.password !== '') {
    throw new UsageError(
      `--state ${shown}: an HTTP state address must not carry a user name or password (they would show in logs); set ORGFORM_STATE_USERNAME and ORGFORM_STATE_PASSWORD instead.`,
    );
  }
  if (url.protocol === 'http:' && !isLoopbackHost(url.hostname)) {
    throw new UsageError(`--state ${shown}: refusing plain http:// to ${url.hostname}, the state's credentials would travel unencrypted. Use https://.`);
  }
  if (url.hash !== '' || raw.includes('#')) throw new UsageError(`--state ${url.protocol}//…: an HTTP state address must not hold a "#" (a #fragment, or an unescaped "#" in a password, which would show here).`);
  // GitLab also takes a token as ?private_token=…: shown nowhere.
  return { kind: 'http', address: url, location: redactAddress(url.toString()) };
}
