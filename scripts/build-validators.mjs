// Precompiles the JSON Schemas to CommonJS standalone validators (dist/validators/NAME.cjs), so that
// the CLI loads a ready function (~18 ms) instead of importing and running ajv's compiler (~140 ms).
// CommonJS because ajv's ESM standalone output is broken (ajv#1976).
//
// Runs after tsc (see the "build" script of package.json): the ajv set-up lives in
// src/config/compile-schema.ts, which also compiles at run time when dist/validators is absent, so
// the two cannot disagree. This script only writes its output.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { emitStandalone, SCHEMA_NAMES } from '../dist/config/compile-schema.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

const outDir = join(ROOT, 'dist', 'validators');
mkdirSync(outDir, { recursive: true });
for (const name of SCHEMA_NAMES) {
  writeFileSync(join(outDir, `${name}.cjs`), emitStandalone(name));
}
