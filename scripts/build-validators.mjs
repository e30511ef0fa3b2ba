// Precompiles the JSON Schemas to CommonJS standalone validators (dist/validators/NAME.cjs), so that
// the CLI loads a ready function (~18 ms) instead of importing and running ajv's compiler (~140 ms).
// CommonJS because ajv's ESM standalone output is broken (ajv#1976).
//
// Also imported by src/config/schema-validator.ts to compile at run time when dist/ is absent
// (tests run from src): both paths use createAjv() below, so they cannot disagree.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { _ } from 'ajv';
import standaloneCode from 'ajv/dist/standalone/index.js';
import addFormats from 'ajv-formats';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

/** One line per schema: dist/validators/NAME.cjs is compiled from schemas/NAME.schema.json. */
export const VALIDATORS = ['orgs'];

export function schemaPath(name) {
  return join(ROOT, 'schemas', `${name}.schema.json`);
}

export function readSchema(name) {
  return JSON.parse(readFileSync(schemaPath(name), 'utf8'));
}

function createAjv({ standalone }) {
  const ajv = new Ajv2020({
    allErrors: true,
    strict: true,
    allowUnionTypes: true,
    // The generated code must find the same format checks that ajv-formats adds at run time.
    code: standalone ? { source: true, formats: _`require("ajv-formats/dist/formats").fullFormats` } : {},
  });
  addFormats(ajv, ['email']);
  return ajv;
}

/** Compiles at run time: the fallback when the precompiled validator is missing. */
export function compileValidator(name) {
  const schema = readSchema(name);
  const validate = createAjv({ standalone: false }).compile(schema);
  return { validate, schema };
}

/** CommonJS source exporting the validate function, with the schema beside it as `.schema`. */
export function emitStandalone(name) {
  const schema = readSchema(name);
  const ajv = createAjv({ standalone: true });
  const code = standaloneCode(ajv, ajv.compile(schema));
  // The loader walks the schema too (which keys exist, where strings are expected), so it travels with its code.
  return `${code}\nmodule.exports.schema = ${JSON.stringify(schema)};\n`;
}

function main() {
  const outDir = join(ROOT, 'dist', 'validators');
  mkdirSync(outDir, { recursive: true });
  for (const name of VALIDATORS) {
    writeFileSync(join(outDir, `${name}.cjs`), emitStandalone(name));
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main();
}
