/**
 * Every wait speaks, and every network wait is bounded (issue 31), for what a run waits for besides
 * the service: the token command, the state's lock, and a proxy, slow or not a proxy at all. The
 * built CLI against the emulator over loopback; each wait is held until the test has seen it told.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { setupEmulatorWorkspace } from '../support/emulator-workspace.js';
import { startProxy } from '../support/http-proxy.js';
import { runCli, watchCli } from '../support/run-cli.js';
import { afterEachTest } from '../support/after-each-test.js';
import { startTerraformBackend } from '../support/terraform-http-backend.mjs';
import { CHANGING_CONFIG } from '../support/workspace.js';

const closing: Array<{ close(): Promise<unknown> }> = [];
afterEachTest(() => Promise.all(closing.splice(0).map((s) => s.close())));

describe('waits outside the service', () => {
  it('plan says it waits for the token command, and until when, and goes on once it prints a token', async () => {
    const { cwd, env } = await setupEmulatorWorkspace({ 'orgs.yaml': CHANGING_CONFIG });
    const { ORGFORM_TOKEN: _token, ...rest } = env;
    const run = watchCli(['plan', '--detailed-exitcode'], { cwd, env: { ...rest, ORGFORM_TOKEN_COMMAND: 'while [ ! -f go ]; do sleep 0.05; done; echo demo-token' } });
    const stderr = await run.written('stderr', /^Waiting.*\n/m);
    expect(stderr).toMatch(/^Waiting for the token command \(ORGFORM_TOKEN_COMMAND\) to print a token: none yet; orgform gives up at \d\d:\d\d:\d\d UTC \(in \d+ s\), ORGFORM_TOKEN_COMMAND_TIMEOUT_MS\.$/m);
    await writeFile(join(cwd, 'go'), '');
    const { code } = await run.done;
    expect(code).toBe(2);
  });

  it('apply says it waits for the lock on a remote state, and goes on once the lock is taken', async () => {
    const { cwd, env, emulator } = await setupEmulatorWorkspace({ 'orgs.yaml': CHANGING_CONFIG });
    const backend = await startTerraformBackend({ users: { ci: 'job-token-123' }, holdLocks: true });
    closing.push(backend);
    const state = `${backend.url}/api/v4/projects/42/terraform/state/orgform`;
    const run = watchCli(['apply', '--auto-approve'], { cwd, env: { ...env, ORGFORM_STATE: state, ORGFORM_STATE_USERNAME: 'ci', ORGFORM_STATE_PASSWORD: 'job-token-123' } });
    const stderr = await run.written('stderr', /^Waiting.*\n/m);
    expect(stderr).toMatch(/^Waiting for the lock on the state at http:\/\/127\.0\.0\.1:\d+\/api\/v4\/projects\/42\/terraform\/state\/orgform: no answer yet; orgform gives up at \d\d:\d\d:\d\d UTC \(in \d+ s\), ORGFORM_STATE_TIMEOUT_MS\.$/m);
    expect(emulator.counters.writes).toBe(0);
    backend.releaseLocks();
    const { code } = await run.done;
    expect(code).toBe(0);
    expect(emulator.counters.writes).toBeGreaterThan(0);
  });

  it('plan says it waits for an answer through a proxy that does not answer, naming the proxy', async () => {
    const { cwd, env } = await setupEmulatorWorkspace({ 'orgs.yaml': CHANGING_CONFIG });
    const proxy = await startProxy({ stall: true });
    closing.push(proxy);
    const run = watchCli(['plan'], { cwd, env: { ...env, HTTP_PROXY: proxy.url } });
    const stderr = await run.written('stderr', /^Waiting.*\n/m);
    expect(stderr).toMatch(new RegExp(`^Waiting for the answer to the first page of the listing \\(all pages\\), through the proxy ${proxy.url} \\(HTTP_PROXY\\): none yet; orgform gives up at \\d\\d:\\d\\d:\\d\\d UTC \\(in \\d+ s\\)\\.$`, 'm'));
    run.kill('SIGINT');
    await run.done;
  });

  it('plan fails, naming the proxy, when HTTPS_PROXY names a server that answers 407 and hangs up on every CONNECT, rather than try again for ever', async () => {
    const { cwd, env, emulator } = await setupEmulatorWorkspace({ 'orgs.yaml': CHANGING_CONFIG });
    const proxy = await startProxy({ notAProxy: true });
    closing.push(proxy);
    const result = await runCli(['plan'], { cwd, env: { ...env, HTTPS_PROXY: proxy.url, ORGFORM_BASE_URL: 'https://api.example.invalid' } });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`failed after 5 attempts: the proxy ${proxy.url} (from HTTPS_PROXY) closed the connection instead of answering the CONNECT to api.example.invalid: check that HTTPS_PROXY names a proxy`);
    expect(proxy.log).toEqual(Array.from({ length: 5 }, () => 'CONNECT api.example.invalid:443'));
    expect(emulator.requestLog).toHaveLength(0);
  });
});
