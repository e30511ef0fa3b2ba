import { describe, expect, it } from 'vitest';
import { call, callJson, ORG_API, useEmulator } from '../emulator/emulator-test-kit.js';
import { CLI_BIN, runCli } from '../support/run-cli.js';
import { runProcess } from '../support/run-process.js';

const LIST = `${ORG_API}/organisations`;

describe('orgform emulator token', () => {
  it('prints a fresh token for the URL given, or for ORGFORM_BASE_URL and the user asked for, usable at once', async () => {
    const emulator = await useEmulator({ tokenLifetime: { requests: 1 } });
    const byArg = await runCli(['emulator', 'token', emulator.url], { cwd: '.' });
    expect([byArg.code, byArg.stderr]).toEqual([0, '']);
    expect(byArg.stdout).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+\n$/);
    expect((await call(emulator, LIST, { token: byArg.stdout.trim() })).status).toBe(200);
    const byEnv = await runCli(['emulator', 'token'], { cwd: '.', env: { ORGFORM_BASE_URL: emulator.url, ORGFORM_EMULATOR_USER: 'bob@globex.example' } });
    expect((await callJson(emulator, LIST, { token: byEnv.stdout.trim() })).body.totalCount).toBe(2);
    const byOption = await runCli(['emulator', 'token', emulator.url, '--user', 'bob@globex.example'], { cwd: '.' });
    expect((await callJson(emulator, LIST, { token: byOption.stdout.trim() })).body.totalCount).toBe(2);
  });

  it('works as a token command from the built CLI, as the docs give it', async () => {
    const emulator = await useEmulator();
    const result = await runProcess(process.execPath, [CLI_BIN, 'emulator', 'token', emulator.url], undefined, { PATH: process.env.PATH ?? '' });
    expect(result.code).toBe(0);
    expect((await call(emulator, LIST, { token: result.stdout.trim() })).status).toBe(200);
  });

  it('fails with a message and no output when there is no URL, no emulator there, or no such user', async () => {
    const none = await runCli(['emulator', 'token'], { cwd: '.', env: {} });
    expect([none.code, none.stdout]).toEqual([1, '']);
    expect(none.stderr).toContain('ORGFORM_BASE_URL');
    const nothing = await runCli(['emulator', 'token', 'http://127.0.0.1:9'], { cwd: '.' });
    expect([nothing.code, nothing.stdout]).toEqual([1, '']);
    expect(nothing.stderr).toContain('Cannot reach the emulator at http://127.0.0.1:9');
    const emulator = await useEmulator();
    const unknownUser = await runCli(['emulator', 'token', emulator.url, '--user', 'carol@wonka.example'], { cwd: '.' });
    expect([unknownUser.code, unknownUser.stdout]).toEqual([1, '']);
    expect(unknownUser.stderr).toContain('answered HTTP 404: no user has the token or e-mail address "carol@wonka.example"');
    expect(unknownUser.stderr).not.toContain('bug in orgform');
  });
});
