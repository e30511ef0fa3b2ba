/**
 * The release as users get it: the project is copied as a fresh clone would have it (the files git
 * tracks or would track, so no dist/), packed with `npm pack` (whose `prepack` builds dist/ and
 * replaces it with the self-contained bundle, scripts/bundle.mjs), and the tarball unpacked into an
 * empty directory with no node_modules in it or above it. Then it runs as the Action and the GitLab
 * component run it, `node package/bin/orgform.js`: `--version`, `validate` on an example, and
 * `plan`, `apply` and `plan` again against `orgform emulator` (the release's own), with the journal
 * in a file and in PostgreSQL. `npm install` of the tarball, offline and with an empty cache,
 * shows that it asks npm for nothing.
 */
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, parse as parsePath } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../support/postgres.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const PACKAGE = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { name: string; version: string };

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The environment of a machine without this repository: no npm_* settings of an enclosing `npm test`, no NODE_PATH. */
function cleanEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k) && k !== 'NODE_PATH' && !k.startsWith('ORGFORM_')));
  return { ...env, NO_COLOR: '1', npm_config_update_notifier: 'false', npm_config_fund: 'false', npm_config_audit: 'false', ...extra };
}

function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = cleanEnv()): Run {
  const result = spawnSync(command, args, { cwd, env, encoding: 'utf8', timeout: 170_000 });
  return { code: result.status, stdout: result.stdout ?? '', stderr: (result.stderr ?? '') + (result.error ? String(result.error) : '') };
}

let scratch: string;
let tarball: string;
let packed: string[];
/** Where the tarball was unpacked: `${unpacked}/package`. */
let unpacked: string;

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'orgform-release-'));

  // A fresh clone: what git tracks, or would track (new files not yet committed), and no build.
  const clone = join(scratch, 'clone');
  const listed = run('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], ROOT);
  expect(listed.code).toBe(0);
  for (const file of listed.stdout.split('\0').filter(Boolean)) {
    if (!existsSync(join(ROOT, file))) continue;
    mkdirSync(dirname(join(clone, file)), { recursive: true });
    copyFileSync(join(ROOT, file), join(clone, file));
  }
  expect(existsSync(join(clone, 'dist'))).toBe(false);
  symlinkSync(join(ROOT, 'node_modules'), join(clone, 'node_modules'), 'dir');

  const out = join(scratch, 'out');
  mkdirSync(out);
  const pack = run('npm', ['pack', '--json', '--pack-destination', out], clone);
  expect(pack, pack.stderr).toMatchObject({ code: 0 });
  const report = JSON.parse(pack.stdout.slice(pack.stdout.indexOf('['))) as Array<{ filename: string; files: Array<{ path: string }> }>;
  tarball = join(out, report[0]!.filename);
  packed = report[0]!.files.map((f) => f.path).sort();

  unpacked = join(scratch, 'empty');
  mkdirSync(unpacked);
  expect(run('tar', ['-xzf', tarball, '-C', unpacked], scratch).code).toBe(0);
}, 300_000);

afterAll(async () => {
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

describe('the packed tarball', () => {
  it('holds the bundled CLI, its validators and their licences, the schemas, the examples, the pipeline scripts, the licence and the changelog', () => {
    expect(packed).toEqual(
      expect.arrayContaining([
        'package.json', 'README.md', 'LICENSE', 'CHANGELOG.md', 'bin/orgform.js', 'dist/cli/main.js', 'dist/validators/orgs.cjs', 'dist/THIRD-PARTY-LICENSES.md',
        'schemas/orgs.schema.json', 'examples/emulator-data.json', 'pipeline/gitlab-note.mjs', 'pipeline/sticky-comment.mjs', 'pipeline/forge-api.mjs',
      ]),
    );
  });

  it('is the bundle, not the compiled sources: dist/ holds only the CLI’s entry and chunks and the validators', () => {
    const dist = packed.filter((path) => path.startsWith('dist/'));
    expect(dist.filter((path) => !/^dist\/(cli\/(main|chunk-[A-Z0-9]+)\.js|validators\/[a-z-]+\.cjs|THIRD-PARTY-LICENSES\.md)$/.test(path))).toEqual([]);
    expect(packed.filter((path) => /^(src|test|scripts|action|node_modules|\.github|\.ci)\//.test(path) || path.endsWith('.map') || path.endsWith('.ts'))).toEqual([]);
    const licences = readFileSync(join(unpacked, 'package', 'dist', 'THIRD-PARTY-LICENSES.md'), 'utf8');
    for (const bundled of ['undici', 'yaml', 'ajv', 'commander', 'pg']) expect(licences).toMatch(new RegExp(`^## ${bundled}@\\d`, 'm'));
  });

  it('declares no dependency and no install script: npm has nothing to resolve or run at install', () => {
    const manifest = JSON.parse(readFileSync(join(unpacked, 'package', 'package.json'), 'utf8')) as Record<string, Record<string, string> | undefined>;
    for (const field of ['dependencies', 'optionalDependencies', 'peerDependencies', 'bundleDependencies']) expect(manifest[field], field).toBeUndefined();
    expect(Object.keys(manifest.scripts ?? {}).filter((name) => /^(pre|post)?(prepare|install)$/.test(name))).toEqual([]);
  });

  it('installs with npm offline from an empty cache, bringing nothing but itself', () => {
    const app = join(scratch, 'app');
    mkdirSync(app);
    const install = run('npm', ['install', '--offline', '--cache', join(scratch, 'empty-cache'), '--no-package-lock', tarball], app);
    expect(install, install.stderr).toMatchObject({ code: 0 });
    expect(readdirSync(join(app, 'node_modules')).filter((name) => !name.startsWith('.'))).toEqual([PACKAGE.name]);
    expect(run(join(app, 'node_modules', '.bin', 'orgform'), ['--version'], app)).toMatchObject({ code: 0, stdout: `${PACKAGE.version}\n` });
    // The README's example, from the installed package.
    const validate = run(join(app, 'node_modules', '.bin', 'orgform'), ['validate', '-f', 'node_modules/orgform/examples/orgs.yaml'], app);
    expect(validate, validate.stderr).toMatchObject({ code: 0 });
  });
});

describe('unpacked into an empty directory, with no node_modules beside it', { timeout: 120_000 }, () => {
  const orgform = (args: string[], env: NodeJS.ProcessEnv = {}) => run(process.execPath, [join(unpacked, 'package', 'bin', 'orgform.js'), ...args], unpacked, cleanEnv(env));

  it('has no node_modules in its directory or any above it', () => {
    const above: string[] = [];
    for (let dir = unpacked; ; dir = dirname(dir)) {
      above.push(dir);
      if (dir === parsePath(dir).root) break;
    }
    expect(above.filter((dir) => existsSync(join(dir, 'node_modules')))).toEqual([]);
  });

  it('`--version` prints the version of package.json, and `validate` checks an example offline', () => {
    expect(orgform(['--version'])).toMatchObject({ code: 0, stdout: `${PACKAGE.version}\n` });
    const validate = orgform(['validate', '-f', 'package/examples/orgs.yaml']);
    expect(validate, validate.stderr).toMatchObject({ code: 0 });
    expect(validate.stdout).toMatch(/^Valid: 4 organisations/);
  });

  it('plans and applies against its own emulator, with the journal in a file and then in PostgreSQL, and plans nothing after', async () => {
    // The emulator started from the release too; killed by its pid.
    const emulator = spawn(process.execPath, [join(unpacked, 'package', 'bin', 'orgform.js'), 'emulator', '--port', '0', '--slug-delay', '0'], { cwd: unpacked, env: cleanEnv(), stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = '';
        emulator.stdout.on('data', (chunk: Buffer) => {
          out += chunk.toString();
          const m = /listening on (http:\/\/\S+)/.exec(out);
          if (m) resolve(m[1]!);
        });
        emulator.on('exit', (code) => reject(new Error(`the emulator exited (${code}) before it listened`)));
      });
      copyFileSync(join(unpacked, 'package', 'examples', 'demo', 'orgs.yaml'), join(unpacked, 'orgs.yaml'));
      const service = { ORGFORM_BASE_URL: url, ORGFORM_TOKEN: 'demo-token' };
      // As docs/emulator.md gives it: a token command that the package holds.
      const token = orgform(['emulator', 'token', url]);
      expect(token, token.stderr).toMatchObject({ code: 0 });
      const byCommand = orgform(['plan', '--detailed-exitcode'], { ORGFORM_BASE_URL: url, ORGFORM_TOKEN_COMMAND: `${process.execPath} ${join(unpacked, 'package', 'bin', 'orgform.js')} emulator token ${url}` });
      expect(byCommand, byCommand.stderr).toMatchObject({ code: 2 });
      const plan = orgform(['plan', '--detailed-exitcode'], service);
      expect(plan, plan.stderr).toMatchObject({ code: 2 });
      expect(plan.stdout).toMatch(/Plan: \d+ to change/);
      const apply = orgform(['apply', '--auto-approve'], service);
      expect(apply, apply.stderr).toMatchObject({ code: 0 });
      expect(apply.stdout).toMatch(/Apply complete: \d+ applied/);
      expect(existsSync(join(unpacked, '.orgform', 'state.json'))).toBe(true);
      expect(orgform(['plan', '--detailed-exitcode'], service)).toMatchObject({ code: 0 });

      // The PostgreSQL state: pg is loaded only for it, from the bundle's chunks.
      const state = await createTestDatabase('release');
      const migrate = orgform(['state', 'migrate', '--to', state], service);
      expect(migrate, migrate.stderr).toMatchObject({ code: 0 });
      const listed = orgform(['state', 'list'], { ...service, ORGFORM_STATE: state });
      expect(listed, listed.stderr).toMatchObject({ code: 0 });
      expect(orgform(['plan', '--detailed-exitcode'], { ...service, ORGFORM_STATE: state })).toMatchObject({ code: 0 });
    } finally {
      emulator.kill('SIGTERM');
    }
  });
});
