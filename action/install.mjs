#!/usr/bin/env node
// @ts-check
/**
 * The action's first step: checks every input (so that a typo fails before anything is installed),
 * then makes orgform ready to run and says which: the `version` input, as npm understands it, is
 * installed with production dependencies only and no install scripts into a directory of the job's
 * own (RUNNER_TEMP), so that nothing lands in the repository's checkout; `installed` takes the one
 * that the repository's own `npm ci` put in node_modules/.bin. Output: `bin`, the orgform to run.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { ActionError, runStep, setOutputs } from './github-runner.mjs';
import { readInputs } from './read-inputs.mjs';

const MIN_NODE = [20, 19];

function main() {
  const env = process.env;
  const inputs = readInputs(env);
  const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
  if (major < (MIN_NODE[0] ?? 0) || (major === MIN_NODE[0] && minor < (MIN_NODE[1] ?? 0))) {
    throw new ActionError(`orgform needs Node.js ${MIN_NODE.join('.')} or newer, and this runner's node is ${process.versions.node}: add actions/setup-node (node-version: 20 or later) before this step`);
  }

  let bin;
  if (inputs.version === 'installed') {
    bin = resolve('node_modules', '.bin', 'orgform');
    if (!existsSync(bin)) throw new ActionError(`version is "installed", but there is no ${bin}: install orgform in the repository first (npm ci), or give version a release`);
  } else {
    const spec = packageSpec(inputs.version);
    const prefix = join(env.RUNNER_TEMP || tmpdir(), 'orgform-action', createHash('sha256').update(spec).digest('hex').slice(0, 16));
    console.log(`Installing ${spec} into ${prefix}`);
    const npm = spawnSync('npm', ['install', '--prefix', prefix, '--no-save', '--no-package-lock', '--omit=dev', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error', spec], { stdio: 'inherit' });
    if (npm.error) throw new ActionError(`could not run npm: ${npm.error.message}`);
    if (npm.status !== 0) throw new ActionError(`npm install ${spec} failed (exit ${npm.status}): see above`);
    bin = join(prefix, 'node_modules', '.bin', 'orgform');
    if (!existsSync(bin)) throw new ActionError(`${spec} installed no orgform command (${bin}): is it orgform?`);
  }

  const version = spawnSync(bin, ['--version'], { encoding: 'utf8' });
  if (version.status !== 0) throw new ActionError(`${bin} --version failed (exit ${version.status}): ${(version.stderr || version.error?.message || '').trim()}`);
  console.log(`orgform ${version.stdout.trim()} (${bin})`);
  setOutputs(env, { bin, version: version.stdout.trim() });
}

/**
 * What npm installs for the `version` input: a URL or a tarball path as given (a relative path from
 * the working directory), anything else as a version, range or tag of orgform, and nothing at all as
 * the version of this action (its package.json), so that `uses: …@v0.2.1` runs orgform 0.2.1.
 * @param {string} version
 */
function packageSpec(version) {
  if (version === '') {
    const own = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
    return `orgform@${own.version}`;
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(version) || version.startsWith('file:')) return version;
  if (version.startsWith('.') || isAbsolute(version) || /\.(tgz|tar\.gz)$/.test(version)) return resolve(version);
  return `orgform@${version}`;
}

await runStep(main);
