/**
 * The release as users get it: the project is copied as a fresh clone would have it (the files git
 * tracks or would track, so no dist/), packed with `npm pack` (whose `prepack` builds dist/), and
 * the tarball installed into an empty directory with production dependencies only. Then the
 * installed command runs: `npx orgform --version`, `validate` on an example, `plan` against
 * `orgform emulator`.
 *
 * Offline: the install is `npm ci --offline` from a lockfile that holds the tarball and the project
 * lockfile's production entries, so npm takes every dependency from its cache by integrity (warm
 * after the `npm ci` that CI runs first; a cold cache fails with ENOTCACHED, and the message says so).
 */
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const PACKAGE = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { name: string; version: string; dependencies: Record<string, string> };

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** npm without the settings of an enclosing `npm test` (npm_*), but with the same cache. */
function npmEnv(): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k) || k === 'npm_config_cache'));
  return { ...env, NO_COLOR: '1', npm_config_update_notifier: 'false', npm_config_fund: 'false', npm_config_audit: 'false' };
}

function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = npmEnv()): Run {
  const result = spawnSync(command, args, { cwd, env, encoding: 'utf8', timeout: 170_000 });
  return { code: result.status, stdout: result.stdout ?? '', stderr: (result.stderr ?? '') + (result.error ? String(result.error) : '') };
}

let scratch: string;
let tarball: string;
let packed: string[];
let app: string;
let install: Run;

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

  // An empty project that depends on the tarball alone, locked to the project's production dependencies.
  app = join(scratch, 'app');
  mkdirSync(app);
  const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, { dev?: boolean }> };
  const spec = `file:${tarball}`;
  const packages: Record<string, unknown> = {
    '': { name: 'app', dependencies: { [PACKAGE.name]: spec } },
    [`node_modules/${PACKAGE.name}`]: { version: PACKAGE.version, resolved: spec, dependencies: PACKAGE.dependencies, bin: { orgform: 'bin/orgform.js' } },
  };
  for (const [path, entry] of Object.entries(lock.packages)) if (path !== '' && entry.dev !== true) packages[path] = entry;
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', private: true, dependencies: { [PACKAGE.name]: spec } }));
  writeFileSync(join(app, 'package-lock.json'), JSON.stringify({ name: 'app', lockfileVersion: 3, requires: true, packages }));
  install = run('npm', ['ci', '--offline', '--omit=dev'], app);
}, 300_000);

afterAll(async () => {
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

describe('the packed tarball', () => {
  it('holds the CLI built at pack time, the schemas, the examples, the GitLab note script, the licence and the changelog', () => {
    expect(packed).toEqual(
      expect.arrayContaining(['package.json', 'README.md', 'LICENSE', 'CHANGELOG.md', 'bin/orgform.js', 'dist/cli/main.js', 'dist/validators/orgs.cjs', 'schemas/orgs.schema.json', 'examples/emulator-data.json', 'pipeline/gitlab-note.mjs', 'pipeline/sticky-comment.mjs']),
    );
  });

  it('holds nothing from src/, test/ or scripts/, no source maps of sources it does not ship, and not the GitHub Action (it runs from its own checkout)', () => {
    expect(packed.length).toBeGreaterThan(50);
    expect(packed.filter((path) => /^(src|test|scripts|action|node_modules|\.github|\.ci)\//.test(path) || path.endsWith('.map') || path.endsWith('.ts'))).toEqual([]);
  });

  it('asks nothing of npm at install: no prepare, install or postinstall script', () => {
    const listed = run('tar', ['-xzOf', tarball, 'package/package.json'], scratch);
    const scripts = (JSON.parse(listed.stdout) as { scripts: Record<string, string> }).scripts;
    expect(Object.keys(scripts)).toContain('prepack');
    expect(Object.keys(scripts).filter((name) => /^(pre|post)?(prepare|install)$/.test(name))).toEqual([]);
  });
});

describe('installed from the tarball into an empty directory', { timeout: 120_000 }, () => {
  it('installs with production dependencies only, each within the range the package declares', () => {
    expect(install, `${install.stderr}\n(npm ci --offline needs the dependencies in npm's cache: run npm ci first)`).toMatchObject({ code: 0 });
    const installed = readdirSync(join(app, 'node_modules')).filter((name) => !name.startsWith('.')).sort();
    expect(installed).toContain(PACKAGE.name);
    for (const dependency of Object.keys(PACKAGE.dependencies)) expect(installed).toContain(dependency);
    for (const dev of ['typescript', 'vitest', 'nock', 'gitlab-ci-local', '@types']) expect(installed).not.toContain(dev);
    const ls = run('npm', ['ls', '--all', '--omit=dev'], app);
    expect(ls, ls.stdout + ls.stderr).toMatchObject({ code: 0 });
  });

  it('`npx orgform --version` prints the version of package.json', () => {
    const version = run('npx', ['--offline', 'orgform', '--version'], app);
    expect(version).toMatchObject({ code: 0, stdout: `${PACKAGE.version}\n` });
  });

  it('`orgform validate` checks an example offline, and `orgform plan` plans against `orgform emulator`, with its token from `orgform emulator token`', async () => {
    const validate = run('npx', ['--offline', 'orgform', 'validate', '-f', 'node_modules/orgform/examples/orgs.yaml'], app);
    expect(validate, validate.stderr).toMatchObject({ code: 0 });

    // The emulator started straight from the bin link: npx would leave it behind a shell when killed.
    const emulator = spawn(join(app, 'node_modules', '.bin', 'orgform'), ['emulator', '--port', '0', '--slug-delay', '0'], { cwd: app, stdio: ['ignore', 'pipe', 'inherit'] });
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
      copyFileSync(join(app, 'node_modules', 'orgform', 'examples', 'demo', 'orgs.yaml'), join(app, 'orgs.yaml'));
      const plan = run('npx', ['--offline', 'orgform', 'plan', '--detailed-exitcode'], app, { ...npmEnv(), ORGFORM_BASE_URL: url, ORGFORM_TOKEN: 'demo-token' });
      expect(plan, plan.stderr).toMatchObject({ code: 2 });
      expect(plan.stdout).toMatch(/Plan: \d+ to change/);
      // As the README and docs/emulator.md give them: the installed example, and a token command that the package holds.
      const token = run('npx', ['--offline', 'orgform', 'emulator', 'token', url], app, npmEnv());
      expect(token, token.stderr).toMatchObject({ code: 0 });
      const readme = run('npx', ['--offline', 'orgform', 'plan', '-f', 'node_modules/orgform/examples/orgs.yaml', '--detailed-exitcode'], app, {
        ...npmEnv(),
        ORGFORM_BASE_URL: url,
        ORGFORM_TOKEN_COMMAND: `npx --offline orgform emulator token ${url}`,
      });
      expect(readme, readme.stderr).toMatchObject({ code: 2 });
    } finally {
      emulator.kill('SIGTERM');
    }
  });
});
