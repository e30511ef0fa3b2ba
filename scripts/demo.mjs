#!/usr/bin/env node
// `npm run demo`: the whole story on the built-in emulator, no server of your own needed.
// Starts the emulator, then runs validate, plan, apply, plan again and export against it,
// in a scratch copy of examples/demo so that the repository stays clean.
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const cli = join(root, 'bin', 'orgform.js');
if (!existsSync(join(root, 'dist', 'cli', 'main.js'))) {
  console.error('orgform is not built yet: run npm run build first (npm run demo does).');
  process.exit(1);
}

const work = mkdtempSync(join(tmpdir(), 'orgform-demo-'));
cpSync(join(root, 'examples', 'demo'), work, { recursive: true });

const emulator = spawn(process.execPath, [cli, 'emulator', '--port', '0', '--slug-delay', '300'], { stdio: ['ignore', 'pipe', 'inherit'] });
const stop = () => {
  if (emulator.exitCode === null) emulator.kill('SIGTERM');
  rmSync(work, { recursive: true, force: true });
};
process.on('exit', stop);
process.on('SIGINT', () => process.exit(130));

const url = await new Promise((resolve, reject) => {
  let out = '';
  emulator.stdout.on('data', (chunk) => {
    out += chunk;
    const m = /listening on (http:\/\/\S+)/.exec(out);
    if (m) resolve(m[1]);
  });
  emulator.on('exit', (code) => reject(new Error(`the emulator exited (${code}) before it listened`)));
});

const env = { ...process.env, ORGFORM_BASE_URL: url, ORGFORM_TOKEN: 'demo-token' };
const bold = (s) => (process.stdout.isTTY && !process.env.NO_COLOR ? `\x1b[1m${s}\x1b[0m` : s);

function step(title, args, { expect = [0] } = {}) {
  console.log(`\n${bold(`$ orgform ${args.join(' ')}`)}    # ${title}`);
  const result = spawnSync(process.execPath, [cli, ...args], { cwd: work, env, stdio: 'inherit' });
  if (!expect.includes(result.status ?? -1)) {
    console.error(`\nThe demo stopped: orgform ${args[0]} exited ${result.status}, expected ${expect.join(' or ')}.`);
    process.exit(1);
  }
}

console.log(`Emulator running at ${url} (token demo-token). Working in ${work}.`);
step('check the file offline', ['validate']);
step('what would change (exit 2: changes present)', ['plan', '--detailed-exitcode'], { expect: [2] });
step('the same plan as a pull-request comment', ['plan', '--format', 'markdown']);
step('make the changes', ['apply', '--auto-approve']);
step('nothing left to do (exit 0)', ['plan', '--detailed-exitcode']);
step('write the current state as orgs.yaml', ['export']);
step('check slugs through the deliberately slow endpoint', ['slugs', 'check', 'acme', 'brand-new-co', 'admin'], { expect: [1] });
console.log(`\n${bold('Done.')} Try it yourself: npx orgform emulator, then ORGFORM_BASE_URL=http://127.0.0.1:4010 ORGFORM_TOKEN=demo-token npx orgform plan -f examples/demo/orgs.yaml`);
process.exit(0);
