// @ts-check
/**
 * Runs orgform as the pipelines do: its standard output (the document: Markdown, or apply's events)
 * into a file, its standard error both to the job's log as it comes (its annotations among it) and
 * into a file, for a comment when it fails; a cancelled job's SIGINT or SIGTERM passed on to it
 * (which finishes what is in flight and keeps its journal) and waited for.
 *
 * Plain Node, no dependencies: the Action runs it from its checkout, the component from the release.
 */
import { spawn } from 'node:child_process';
import { closeSync, createWriteStream, openSync } from 'node:fs';
import { constants } from 'node:os';

/** orgform could not be started at all (not found, not executable). */
export class RunError extends Error {}

/**
 * @param {string} bin  a release's bin/orgform.js (run by this node), or an executable
 * @param {string[]} args
 * @param {NodeJS.ProcessEnv} env
 * @param {{ stdout: string, stderr: string, quiet?: boolean }} files  stderr is also shown as it comes unless quiet
 * @returns {Promise<number>} the exit code (128 + the signal's number when killed)
 */
export async function runOrgform(bin, args, env, files) {
  const stdout = openSync(files.stdout, 'w');
  const saved = createWriteStream(files.stderr);
  try {
    return await new Promise((resolve, reject) => {
      const [command, first] = commandOf(bin);
      const child = spawn(command, [...first, ...args], { env, stdio: ['ignore', stdout, 'pipe'] });
      child.stderr?.on('data', (/** @type {Buffer} */ chunk) => {
        if (!files.quiet) process.stderr.write(chunk);
        saved.write(chunk);
      });
      const pass = (/** @type {NodeJS.Signals} */ signal) => child.kill(signal);
      process.on('SIGINT', pass);
      process.on('SIGTERM', pass);
      child.on('error', (err) => reject(new RunError(`could not run ${bin}: ${err.message}`)));
      child.on('close', (code, signal) => {
        process.off('SIGINT', pass);
        process.off('SIGTERM', pass);
        resolve(code ?? 128 + (signal === null ? 0 : constants.signals[signal]));
      });
    });
  } finally {
    closeSync(stdout);
    await new Promise((resolve) => saved.end(resolve));
  }
}

/**
 * A release's bin/orgform.js is run by this node; an installed one (node_modules/.bin) as it is.
 * @param {string} bin
 * @returns {[string, string[]]}
 */
export function commandOf(bin) {
  return bin.endsWith('.js') ? [process.execPath, [bin]] : [bin, []];
}
