/**
 * A stand-in for `npm` on PATH, for the pipelines that install orgform (the GitHub Action, the
 * GitLab component) without a registry: it records each call's arguments, and
 * `npm install --prefix DIR … SPEC` installs this repository as DIR/node_modules/orgform, with the
 * built CLI as DIR/node_modules/.bin/orgform. `node` is in the same directory, so that the
 * pipelines' scripts run on the test's own Node.
 */
import { existsSync } from 'node:fs';
import { chmod, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CLI_BIN } from './run-cli.js';
import { makeWorkspace } from './workspace.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface FakeNpm {
  /** The directory to put first on PATH. */
  dir: string;
  /** The arguments of each call so far. */
  calls(): Promise<string[][]>;
}

export async function makeFakeNpm(): Promise<FakeNpm> {
  const dir = await makeWorkspace();
  const log = join(dir, 'npm.log');
  await writeFile(
    join(dir, 'npm'),
    `#!${process.execPath}
const { appendFileSync, existsSync, mkdirSync, symlinkSync, writeFileSync } = require('node:fs');
const args = process.argv.slice(2);
appendFileSync(${JSON.stringify(log)}, JSON.stringify(args) + '\\n');
if (args[0] === 'install') {
  const prefix = args[args.indexOf('--prefix') + 1];
  mkdirSync(prefix + '/node_modules/.bin', { recursive: true });
  if (!existsSync(prefix + '/node_modules/orgform')) symlinkSync(${JSON.stringify(ROOT)}, prefix + '/node_modules/orgform', 'dir');
  writeFileSync(prefix + '/node_modules/.bin/orgform', ${JSON.stringify(`#!/bin/sh\nexec "${process.execPath}" "${CLI_BIN}" "$@"\n`)}, { mode: 0o755 });
}
`,
  );
  await chmod(join(dir, 'npm'), 0o755);
  await symlink(process.execPath, join(dir, 'node'));
  return {
    dir,
    async calls() {
      if (!existsSync(log)) return [];
      return (await readFile(log, 'utf8')).trim().split('\n').map((line) => JSON.parse(line) as string[]);
    },
  };
}
