#!/usr/bin/env node
// @ts-check
/**
 * The action's first step: checks every input (so that a typo fails before anything is fetched),
 * then makes orgform ready to run and says which. By default that is the release of this action's
 * own version: its tarball, a self-contained build with every dependency inside, downloaded from
 * the GitHub release with its SHA256SUMS, checked against them (and against the `sha256` input when
 * given) and unpacked into the job's own directory (RUNNER_TEMP), never the checkout. Nothing is
 * resolved or installed by a package manager: what runs is what was released. `installed` instead
 * takes the orgform that the repository's own `npm ci` put in node_modules/.bin, and warns: a pull
 * request decides what that is. Outputs: `bin` (the orgform to run) and `version`.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { redactAddress } from '../pipeline/forge-api.mjs';
import { ActionError, runStep, setOutputs, warningCommand } from './github-runner.mjs';
import { readInputs } from './read-inputs.mjs';

const MIN_NODE = [20, 19];

/** A release's tarball is a few megabytes; anything far larger is not one. */
const MAX_TARBALL_BYTES = 64 * 1024 * 1024;

const INSTALLED_WARNING =
  'version: installed runs node_modules/.bin/orgform as this checkout installed it, with this job\'s secrets: on a pull request, the pull request decides what that is (its package.json and lockfile, every dependency). Use it only in a job that holds nothing its author may not have, or leave version empty to run the release of this action.';

async function main() {
  const env = process.env;
  const inputs = readInputs(env);
  const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
  if (major < (MIN_NODE[0] ?? 0) || (major === MIN_NODE[0] && minor < (MIN_NODE[1] ?? 0))) {
    throw new ActionError(`orgform needs Node.js ${MIN_NODE.join('.')} or newer, and this runner's node is ${process.versions.node}: add actions/setup-node (node-version: 20 or later) before this step`);
  }

  let bin;
  if (inputs.version === 'installed') {
    bin = resolve('node_modules', '.bin', 'orgform');
    if (!existsSync(bin)) throw new ActionError(`version is "installed", but there is no ${bin}: install orgform in the repository first (npm ci), or leave version empty`);
    console.log(warningCommand(INSTALLED_WARNING));
  } else {
    bin = await unpackRelease(releaseSource(inputs.version, inputs.sha256, env), join(env.RUNNER_TEMP || tmpdir(), 'orgform-action'));
  }

  const version = spawnSync(process.execPath, [bin, '--version'], { encoding: 'utf8' });
  if (version.status !== 0) throw new ActionError(`${bin} --version failed (exit ${version.status}): ${(version.stderr || version.error?.message || '').trim()}`);
  console.log(`orgform ${version.stdout.trim()} (${bin})`);
  setOutputs(env, { bin, version: version.stdout.trim() });
}

/**
 * @typedef {object} ReleaseSource
 * @property {string} tarball          a URL or a path
 * @property {string} name             the tarball's file name
 * @property {string} [sums]           the URL of the release's SHA256SUMS, when it is a release
 * @property {string} [sha256]         the checksum it must have (the `sha256` input)
 */

/**
 * Where the tarball comes from: empty, this action's own release; `X.Y.Z`, another release; a URL
 * or a path, that tarball, which then needs `sha256` (nothing else vouches for it).
 * @param {string} version
 * @param {string} sha256
 * @param {Record<string, string | undefined>} env
 * @returns {ReleaseSource}
 */
function releaseSource(version, sha256, env) {
  if (sha256 !== '' && !/^[0-9a-f]{64}$/.test(sha256)) throw new ActionError('sha256 must be 64 lower-case hexadecimal digits, as SHA256SUMS gives it');
  const wanted = version === '' ? ownVersion() : version;
  if (/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/.test(wanted)) {
    const releases = (env.ORGFORM_RELEASES_URL || `https://github.com/${env.GITHUB_ACTION_REPOSITORY || 'orgform/orgform'}/releases/download`).replace(/\/+$/, '');
    const name = `orgform-${wanted}.tgz`;
    return { tarball: `${releases}/v${wanted}/${name}`, name, sums: `${releases}/v${wanted}/SHA256SUMS`, ...(sha256 === '' ? {} : { sha256 }) };
  }
  const url = /^https?:\/\//i.test(version);
  if (!url && !/\.(tgz|tar\.gz)$/.test(version)) {
    throw new ActionError(`version must be empty (this action's release), a release's version (0.2.0), a tarball's URL or path with its sha256, or installed (got "${version}")`);
  }
  if (sha256 === '') throw new ActionError(`version is a tarball (${version}): give its sha256 too, so that what runs is what you checked`);
  const tarball = url ? version : isAbsolute(version) ? version : resolve(version);
  const path = url ? new URL(tarball).pathname : tarball;
  return { tarball, name: path.split('/').at(-1) || 'orgform.tgz', sha256 };
}

/** This action's own version (its package.json), so that `uses: …@v0.2.1` runs orgform 0.2.1. */
function ownVersion() {
  return JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version;
}

/**
 * The tarball fetched, checked and unpacked, once per checksum; its bin/orgform.js.
 * @param {ReleaseSource} source
 * @param {string} home
 */
async function unpackRelease(source, home) {
  console.log(`Fetching ${shown(source.tarball)}`);
  const data = await fetchBytes(source.tarball);
  const digest = createHash('sha256').update(data).digest('hex');
  const expected = [source.sha256, source.sums === undefined ? undefined : sumFor(await fetchBytes(source.sums), source.name, source.sums)].filter((sum) => sum !== undefined);
  for (const sum of expected) {
    if (sum !== digest) throw new ActionError(`${source.name} has the checksum ${digest}, not ${sum}: it is not the release, so it was not run`);
  }
  console.log(`${source.name}: sha256 ${digest}, as ${source.sums === undefined ? 'the sha256 input says' : `the release's SHA256SUMS${source.sha256 ? ' and the sha256 input say' : ' says'}`}`);
  const dir = join(home, digest.slice(0, 32));
  const bin = join(dir, 'package', 'bin', 'orgform.js');
  if (existsSync(bin)) return bin;
  const partial = `${dir}.partial`;
  rmSync(partial, { recursive: true, force: true });
  mkdirSync(partial, { recursive: true });
  writeFileSync(join(partial, source.name), data);
  const tar = spawnSync('tar', ['-xzf', source.name], { cwd: partial, encoding: 'utf8' });
  if (tar.status !== 0) throw new ActionError(`could not unpack ${source.name}: ${(tar.stderr || tar.error?.message || '').trim()}`);
  rmSync(dir, { recursive: true, force: true });
  renameSync(partial, dir);
  if (!existsSync(bin)) throw new ActionError(`${source.name} holds no package/bin/orgform.js: is it orgform's release tarball?`);
  return bin;
}

/**
 * @param {Buffer} sums  SHA256SUMS as fetched
 * @param {string} name
 * @param {string} url
 */
function sumFor(sums, name, url) {
  const line = sums.toString('utf8').split('\n').map((l) => /^([0-9a-f]{64}) [ *](.+)$/.exec(l.trim())).find((m) => m?.[2] === name);
  if (!line?.[1]) throw new ActionError(`${shown(url)} lists no checksum for ${name}`);
  return line[1];
}

/** A URL's bytes (redirects followed: GitHub serves release files from another host), or a file's. @param {string} source */
async function fetchBytes(source) {
  if (!/^https?:\/\//i.test(source)) {
    try {
      return readFileSync(source);
    } catch (err) {
      throw new ActionError(`could not read ${source}: ${/** @type {NodeJS.ErrnoException} */ (err).code ?? err}`);
    }
  }
  let res;
  try {
    res = await fetch(source, { signal: AbortSignal.timeout(120_000) });
  } catch (err) {
    const cause = /** @type {{ cause?: { message?: string } }} */ (err).cause;
    throw new ActionError(`could not fetch ${shown(source)}: ${cause?.message ?? /** @type {Error} */ (err).message}`);
  }
  if (!res.ok) throw new ActionError(`could not fetch ${shown(source)}: HTTP ${res.status}`);
  const data = Buffer.from(await res.arrayBuffer());
  if (data.length > MAX_TARBALL_BYTES) throw new ActionError(`${shown(source)} is ${data.length} bytes, far more than a release: not run`);
  return data;
}

/** A URL as printed: a presigned one's signature and any user info hidden. A path as it is. @param {string} source */
function shown(source) {
  return /^https?:\/\//i.test(source) ? redactAddress(source) : source;
}

await runStep(main);
