// The release build: dist/ (as `npm run build` leaves it) replaced by one self-contained build of
// orgform and every dependency, made by esbuild, so that the package runs with no node_modules
// beside it and installs nothing: what runs is what was released. `npm pack` (prepack) runs it.
//
//   dist/cli/main.js          the CLI, with its lazily loaded parts as chunks beside it (a command
//                             loads only what it uses, as the unbundled build does)
//   dist/validators/*.cjs     the precompiled schema validators, ajv's run-time helpers inlined
//   dist/THIRD-PARTY-LICENSES.md  the licence of every package bundled
//
// The layout keeps dist/'s depth, so that the files the CLI reads beside itself (schemas/,
// examples/, package.json) are found as from the unbundled build.
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const DIST = join(ROOT, 'dist');
const STAGE = join(ROOT, 'dist.bundle');

/** Node 20.19 is the oldest the package supports (package.json's engines). */
const TARGET = 'node20.19';

// pg-native: pg's optional native binding, loaded only when asked for (orgform never does);
// pg-cloudflare: loaded only on Cloudflare's runtime.
const NEVER_LOADED = ['pg-native', 'pg-cloudflare'];

/** CommonJS dependencies call require(): in an ES module it has to be made. */
const REQUIRE_BANNER = "import { createRequire as __orgformCreateRequire } from 'node:module'; const require = __orgformCreateRequire(import.meta.url);";

async function bundleCli() {
  return build({
    entryPoints: [join(DIST, 'cli', 'main.js')],
    outdir: join(STAGE, 'cli'),
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: TARGET,
    external: NEVER_LOADED,
    banner: { js: REQUIRE_BANNER },
    chunkNames: 'chunk-[hash]',
    legalComments: 'none',
    minifySyntax: true,
    minifyWhitespace: true,
    keepNames: true,
    metafile: true,
    logLevel: 'warning',
  });
}

async function bundleValidators() {
  const dir = join(DIST, 'validators');
  const names = readdirSync(dir).filter((name) => name.endsWith('.cjs'));
  return build({
    entryPoints: names.map((name) => join(dir, name)),
    outdir: join(STAGE, 'validators'),
    outExtension: { '.js': '.cjs' },
    bundle: true,
    format: 'cjs',
    platform: 'node',
    target: TARGET,
    legalComments: 'none',
    minifySyntax: true,
    minifyWhitespace: true,
    metafile: true,
    logLevel: 'warning',
  });
}

/** The packages whose files went into the build, by the node_modules path of each. @param {Array<{ inputs: Record<string, unknown> }>} metafiles */
function bundledPackages(metafiles) {
  const dirs = new Set();
  for (const { inputs } of metafiles) {
    for (const input of Object.keys(inputs)) {
      const m = /^(.*node_modules\/(?:@[^/]+\/)?[^/]+)\//.exec(input);
      if (m) dirs.add(m[1]);
    }
  }
  return [...dirs].sort();
}

/** @param {string[]} packageDirs */
function licences(packageDirs) {
  const sections = packageDirs.map((dir) => {
    const manifest = JSON.parse(readFileSync(join(ROOT, dir, 'package.json'), 'utf8'));
    const file = readdirSync(join(ROOT, dir)).find((name) => /^(licen[cs]e|copying)(\.|$)/i.test(name));
    const text = file === undefined ? `(no licence file; package.json says ${manifest.license})` : readFileSync(join(ROOT, dir, file), 'utf8').trim();
    return `## ${manifest.name}@${manifest.version} (${manifest.license})\n\n\`\`\`text\n${text}\n\`\`\`\n`;
  });
  return `# Third-party licences\n\norgform's release build bundles these packages.\n\n${sections.join('\n')}`;
}

if (!existsSync(join(DIST, 'cli', 'main.js'))) throw new Error('dist/cli/main.js is missing: run `npm run build` first');
rmSync(STAGE, { recursive: true, force: true });
mkdirSync(STAGE);
const cli = await bundleCli();
const validators = await bundleValidators();
writeFileSync(join(STAGE, 'THIRD-PARTY-LICENSES.md'), licences(bundledPackages([cli.metafile, validators.metafile])));
rmSync(DIST, { recursive: true, force: true });
renameSync(STAGE, DIST);
