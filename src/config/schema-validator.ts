/**
 * The compiled JSON Schema validators. `npm run build` precompiles them to dist/validators/*.cjs
 * (with compile-schema.ts), which load in a few milliseconds; without them (tests run from src)
 * compile-schema.ts compiles the schema at run time, with the same ajv set-up, which costs ajv's
 * compiler once.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { ErrorObject } from 'ajv';
import type { SchemaName } from './compile-schema.js';

export type JsonSchema = { readonly [keyword: string]: unknown };

export type ValidateFunction = ((data: unknown) => boolean) & { errors?: ErrorObject[] | null };

export interface SchemaValidator {
  validate: ValidateFunction;
  /** The schema the function was compiled from (the loader walks it, e.g. for the keys allowed). */
  schema: JsonSchema;
}

const loaded = new Map<SchemaName, Promise<SchemaValidator>>();

export function loadSchemaValidator(name: SchemaName): Promise<SchemaValidator> {
  let validator = loaded.get(name);
  if (validator === undefined) {
    validator = loadUncached(name);
    loaded.set(name, validator);
  }
  return validator;
}

async function loadUncached(name: SchemaName): Promise<SchemaValidator> {
  const precompiled = new URL(`../validators/${name}.cjs`, import.meta.url);
  if (existsSync(precompiled)) {
    const validate = createRequire(import.meta.url)(fileURLToPath(precompiled)) as ValidateFunction & { schema: JsonSchema };
    return { validate, schema: validate.schema };
  }
  const { compileValidator } = await import('./compile-schema.js');
  return compileValidator(name);
}
