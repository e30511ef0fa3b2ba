/**
 * ajv's errors, as people read them: at the key or value they are about, in the words of the file
 * format (a mapping, a list) rather than of JSON Schema, with a suggestion where one is likely.
 */
import type { ErrorObject } from 'ajv';
import { BILLING_RESPONSE_FIELD } from '../api/types.js';
import { BILLING_FIELDS } from '../model/billing.js';
import { escapeInvisibleCharacters } from '../model/invisible-characters.js';
import { describeBadIdentifier, nameField, nameIdentifier, quoteValue } from './describe-bad-identifier.js';
import { suggestKey } from './did-you-mean.js';
import { locate, parsePointer, type PositionedMessage, type SourceNode } from './source-tree.js';
import type { SchemaWalker } from './schema-walker.js';
import { SUPPORTED_VERSION } from '../model/desired-state.js';
import { valueAt, type JsonObject } from './value-at.js';

export interface SchemaErrorContext {
  root: SourceNode;
  /** The value that was validated, as readTree built it from `root`. */
  value: unknown;
  walker: SchemaWalker;
  /** Pointers whose value readTree already reported: errors there would repeat it. */
  claimed: ReadonlySet<string>;
  /** The text as written of each value that came from the environment, by pointer: quoted instead of the value. */
  interpolated: ReadonlyMap<string, string>;
}

function describeValue(value: unknown): string {
  if (value === null || value === undefined) return 'nothing (null)';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  if (typeof value === 'boolean') return 'true/false';
  return `a ${typeof value}`;
}

const TYPE_NAMES: Record<string, string> = {
  object: 'a mapping',
  array: 'a list',
  string: 'a string',
  number: 'a number',
  integer: 'an integer',
  boolean: 'true/false',
  null: 'nothing',
};

function describeTypes(type: unknown): string {
  const types = (Array.isArray(type) ? type : String(type).split(',')) as string[];
  return types.map((t) => TYPE_NAMES[t] ?? t).join(' or ');
}

function describeUnknownKey(key: string, path: readonly string[], walker: SchemaWalker): string {
  if (key === '<<') return 'merge keys (<<) are not supported: put what organisations share under defaults';
  if (path.length === 1 && path[0] === 'defaults') return `unknown key "${key}" under defaults: only billing can have defaults`;
  const responseSpelt = BILLING_FIELDS.find((field) => BILLING_RESPONSE_FIELD[field] === key && field !== key);
  if (responseSpelt !== undefined) {
    return `unknown key "${key}"; did you mean "${responseSpelt}"? (orgs files use the update spelling: customerID, subscriptionID, platformID)`;
  }
  const allowed = Object.keys((walker.at(path)?.properties as JsonObject | undefined) ?? {});
  const suggestion = suggestKey(key, allowed);
  if (suggestion !== undefined) return `unknown key "${key}"; did you mean "${suggestion}"?`;
  return allowed.length > 0 ? `unknown key "${key}"; expected one of: ${allowed.join(', ')}` : `unknown key "${key}"`;
}

function describeVersion(value: unknown): string {
  if (value === String(SUPPORTED_VERSION)) return `version must be the number ${SUPPORTED_VERSION}, unquoted`;
  const shown = typeof value === 'string' ? JSON.stringify(value) : String(value);
  return `unsupported version ${shown}: this orgform reads version ${SUPPORTED_VERSION}`;
}

/** The message for one ajv error, or undefined when it adds nothing to the others. */
export function describeSchemaError(error: ErrorObject, ctx: SchemaErrorContext): PositionedMessage | undefined {
  // propertyNames: the errors of the key itself follow, with propertyName set.
  if (error.keyword === 'propertyNames') return undefined;
  if (error.propertyName !== undefined) {
    const keyPath = parsePointer(error.instancePath).concat(error.propertyName);
    return { pos: locate(ctx.root, keyPath, 'key'), message: describeBadIdentifier(error.propertyName, nameIdentifier(keyPath)) };
  }
  if (ctx.claimed.has(error.instancePath)) return undefined;
  const path = parsePointer(error.instancePath);
  const value = valueAt(ctx.value, path);
  const written = ctx.interpolated.get(error.instancePath);
  const params = error.params as JsonObject;
  switch (error.keyword) {
    case 'additionalProperties': {
      const key = String(params.additionalProperty);
      return { pos: locate(ctx.root, [...path, key], 'key'), message: describeUnknownKey(key, path, ctx.walker) };
    }
    case 'required': {
      const missing = String(params.missingProperty);
      const message =
        missing === 'version' && path.length === 0
          ? `missing "version: ${SUPPORTED_VERSION}": every orgs file starts with its format version`
          : `${nameField(path)}: missing required key "${missing}"`;
      return { pos: locate(ctx.root, path), message };
    }
    case 'type': {
      let message = `${nameField(path)}: expected ${describeTypes(params.type)}, got ${describeValue(value)}`;
      if (params.type === 'array' && typeof value === 'string') message += `: write [${value}]`;
      return { pos: locate(ctx.root, path), message };
    }
    case 'const':
      return { pos: locate(ctx.root, path), message: path.join('/') === 'version' ? describeVersion(value) : `${nameField(path)} must be ${JSON.stringify(params.allowedValue)}` };
    case 'format':
      return {
        pos: locate(ctx.root, path),
        message: `${nameField(path)} ${quoteValue(String(value), written)} is not ${params.format === 'email' ? 'an e-mail address' : `a valid ${String(params.format)}`}`,
      };
    case 'minLength':
    case 'maxLength':
    case 'pattern':
    case 'not':
      return { pos: locate(ctx.root, path), message: describeBadIdentifier(String(value), nameIdentifier(path), written) };
    default:
      return { pos: locate(ctx.root, path), message: `${nameField(path)}: ${error.message ?? `fails ${error.keyword}`}` };
  }
}
