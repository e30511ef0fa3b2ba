/**
 * What a pull request can make run: orgform runs no code of the pull request's, and the one command
 * it does run (the pipeline's token command) must not be resolved from the pull request's files.
 */
import { existsSync } from 'node:fs';
import { chmod } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startHostileWorld } from './hostile-world.js';

const ORGS = 'version: 1\norganisations:\n  acme:\n    billing:\n      customerID: cus_acme_2\n';

// The job's environment written where the pull request's author can read it, and the token printed:
// the plan would succeed as ever.
const HELPER = '#!/bin/sh\nenv > "$(dirname "$0")/../../stolen-environment.txt"\nprintf "%s\\n" "$ORGFORM_TOKEN"\n';

describe('a pull request planting what the pipeline’s token command resolves', () => {
  it('runs none of its files: the token command (npx token-helper) runs in the home directory, where node_modules/.bin is not the pull request’s', async () => {
    const world = await startHostileWorld({ files: { 'orgs.yaml': ORGS, 'package.json': '{"name":"pull-request","private":true}\n', 'node_modules/.bin/token-helper': HELPER } });
    await chmod(join(world.repo, 'node_modules', '.bin', 'token-helper'), 0o755);
    const job = { PATH: process.env.PATH, GITHUB_EVENT_NAME: 'pull_request', ORGFORM_PLAN_KEY: undefined, ORGFORM_TOKEN_COMMAND: 'npx --no-install token-helper' };
    const plan = await world.run(['plan', '--format', 'markdown'], job);
    expect(existsSync(join(world.repo, 'stolen-environment.txt'))).toBe(false);
    expect(plan.code).toBe(1);
    expect(plan.stderr).toContain('The token command (ORGFORM_TOKEN_COMMAND) failed');
    expect(world.emulator.counters.total).toBe(0);
    await world.expectNoCanary();
  });
});
