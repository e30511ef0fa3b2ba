/**
 * The one ajv set-up that orgform's JSON Schema validators are compiled with, for the two ways they
 * are made: ahead of time, as standalone CommonJS (`emitStandalone`: the build writes
 * dist/validators/NAME.cjs with it, which the CLI loads in a few milliseconds), and at run time when
 * those are missing, as when the tests run from src (`compileValidator`). One set-up, so that the
 * two cannot disagree. This loads ajv's compiler, which is slow to load (docs/performance.md): only
 * schema-validator.ts's fallback and the build import it.
 */
import { readFileSync } from 'node:fs';
import { _ } from 'ajv';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import standaloneModule from 'ajv/dist/standalone/index.js';
import addFormatsModule from 'ajv-formats';

/** Each is compiled from schemas/NAME.schema.json to dist/validators/NAME.cjs. */
export const SCHEMA_NAMES = ['orgs', 'saved-plan'] as const;
export type SchemaName = (typeof SCHEMA_NAMES)[number];

// CommonJS modules whose default export TypeScript sees as the module itself.
const standaloneCode = standaloneModule.default;
const addFormats = addFormatsModule.default;

export function readSchema(name: SchemaName): Record<string, unknown> {
  // src/config/ and dist/config/ both sit two levels below the package root.
  return JSON.parse(readFileSync(new URL(`../../schemas/${name}.schema.json`, import.meta.url), 'utf8')) as Record<string, unknown>;
}

/**
 * ajv's code gathers the errors of a `$ref`'d schema with `vErrors = vErrors.concat(errors)`,
 * copying every error found so far once per organisation: quadratic in the errors (figures in
 * docs/performance.md). This appends them in place instead (the sub-schema's array is its own until
 * its next call, which starts a new one).
 */
export function appendErrorsInPlace(code: string): string {
  return code.replace(/\b(\w+) = \1 === null \? ([\w.]+) : \1\.concat\(\2\);/g, '$1 = $1 === null ? $2 : ($2.forEach((e) => $1.push(e)), $1);');
}

/**
 * The schema as it is compiled: without `uniqueItems`, which ajv checks on a list whose items are a
 * `$ref` by comparing every pair of items (quadratic in the list's length). Duplicate ids are found
 * once, with a Map, by check-across-documents.ts, which also says where the first one stands; the
 * schema file keeps the keyword for editors, which check one list as it is typed.
 */
export function withoutUniqueItems(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(withoutUniqueItems);
  if (typeof schema !== 'object' || schema === null) return schema;
  const copy: Record<string, unknown> = {};
  for (const [keyword, value] of Object.entries(schema)) if (keyword !== 'uniqueItems') copy[keyword] = withoutUniqueItems(value);
  return copy;
}

function createAjv(options: { standalone: boolean }): Ajv2020 {
  const ajv = new Ajv2020({
    allErrors: true,
    strict: true,
    allowUnionTypes: true,
    // The generated code must find the same format checks that ajv-formats adds at run time.
    code: options.standalone ? { source: true, formats: _`require("ajv-formats/dist/formats").fullFormats` } : { process: appendErrorsInPlace },
  });
  addFormats(ajv, ['email']);
  return ajv;
}

/** Compiles at run time: the fallback when the precompiled validator is missing. */
export function compileValidator(name: SchemaName): { validate: ValidateFunction; schema: Record<string, unknown> } {
  const schema = readSchema(name);
  return { validate: createAjv({ standalone: false }).compile(withoutUniqueItems(schema) as Record<string, unknown>), schema };
}

/** CommonJS source exporting the validate function, with the schema beside it as `.schema`. */
export function emitStandalone(name: SchemaName): string {
  const schema = readSchema(name);
  const ajv = createAjv({ standalone: true });
  // Standalone code is made from the compiled source before `process` would see it.
  const code = appendErrorsInPlace(standaloneCode(ajv, ajv.compile(withoutUniqueItems(schema) as Record<string, unknown>)));
  // The loader walks the schema too (which keys exist, where strings are expected), so it travels with its code.
  return `${code}\nmodule.exports.schema = ${JSON.stringify(schema)};\n`;
}
