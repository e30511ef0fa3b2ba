import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { MAX_MAX_RPS, MIN_MAX_RPS } from '../../src/api/rate/parse-max-rps.js';
import { readSettings, readStateSettings, readWholeNumber } from '../../src/cli/settings.js';
import { SETTINGS_TABLE, WHOLE_NUMBER_RANGES, type SettingGroup } from '../../src/cli/settings-table.js';
import { UsageError } from '../../src/errors.js';

const ALL_GROUPS: SettingGroup[] = ['color', 'ci', 'connection', 'client', 'network', 'planKey', 'apply', 'state', 'config', 'emulatorToken'];

describe('readWholeNumber', () => {
  const ranges = Object.entries(WHOLE_NUMBER_RANGES);

  it.each(ranges)('refuses %s outside its range, naming the variable, the range and the value', (name, { min, max }) => {
    for (const bad of [String(min - 1), String(max + 1), '2147483648', '1e3', '-1']) {
      expect(() => readWholeNumber({ [name]: bad }, name)).toThrow(new UsageError(`${name} must be a whole number from ${min} to ${max} (got "${bad}").`));
    }
    expect(readWholeNumber({ [name]: String(min) }, name)).toBe(min);
    expect(readWholeNumber({ [name]: String(max) }, name)).toBe(max);
  });

  it('keeps every millisecond setting below 2^31 ms, which a timer cannot hold', () => {
    for (const [name, { max }] of ranges) if (name.endsWith('_MS')) expect(max).toBeLessThan(2 ** 31);
  });

  it('docs/cli.md documents every numeric variable, ORGFORM_MAX_RPS included, with the range it is checked against', () => {
    const page = readFileSync(new URL('../../docs/cli.md', import.meta.url), 'utf8');
    const row = (name: string) => page.split('\n').find((line) => line.startsWith('|') && line.includes(`\`${name}\``))?.replaceAll(',', '');
    for (const [name, { min, max }] of ranges) expect(row(name), name).toContain(`${min} to ${max}`);
    expect(row('ORGFORM_MAX_RPS')).toContain(`${MIN_MAX_RPS} to ${MAX_MAX_RPS}`);
  });
});

describe('readStateSettings', () => {
  it('takes the batch, its delay and the timeout from the environment, within their documented ranges', () => {
    expect(readStateSettings({})).toMatchObject({ batch: { maxEntries: 500, maxDelayMs: 2_000 }, timeoutMs: 30_000 });
    expect(readStateSettings({ ORGFORM_STATE_BATCH: '50', ORGFORM_STATE_FLUSH_MS: '100', ORGFORM_STATE_TIMEOUT_MS: '5000' })).toMatchObject({ batch: { maxEntries: 50, maxDelayMs: 100 }, timeoutMs: 5_000 });
    expect(() => readStateSettings({ ORGFORM_STATE_BATCH: '0' })).toThrow('ORGFORM_STATE_BATCH must be a whole number from 1 to 10000 (got "0").');
    expect(() => readStateSettings({ ORGFORM_STATE_BATCH: '10001' })).toThrow('ORGFORM_STATE_BATCH must be a whole number from 1 to 10000 (got "10001").');
    expect(() => readStateSettings({ ORGFORM_STATE_FLUSH_MS: '60001' })).toThrow(/from 10 to 60000/);
    expect(() => readStateSettings({ ORGFORM_STATE_TIMEOUT_MS: 'soon' })).toThrow(/ORGFORM_STATE_TIMEOUT_MS must be a whole number/);
  });

  it('names a lock’s holder by the user and, under CI, the job’s address', () => {
    expect(readStateSettings({ USERNAME: 'ada', CI_JOB_URL: 'https://gitlab.example/p/-/jobs/7' }).owner).toEqual({ user: 'ada', jobUrl: 'https://gitlab.example/p/-/jobs/7' });
    const github = { USER: 'runner', GITHUB_SERVER_URL: 'https://github.com', GITHUB_REPOSITORY: 'o/r', GITHUB_RUN_ID: '9' };
    expect(readStateSettings(github).owner).toEqual({ user: 'runner', jobUrl: 'https://github.com/o/r/actions/runs/9' });
    expect(readStateSettings({ PGUSER: 'ops', USER: 'runner', PGPASSWORD: 'pw' }).postgres).toEqual({ user: 'ops', password: 'pw' });
  });
});

describe('readSettings', () => {
  const SERVICE = { ORGFORM_BASE_URL: 'http://127.0.0.1:9', ORGFORM_TOKEN: 'a-token' };

  it('refuses a request budget from the environment that is not a whole number, before anything else', () => {
    for (const [name, value] of [
      ['ORGFORM_MAX_ATTEMPTS', '0'],
      ['ORGFORM_REQUEST_TIMEOUT_MS', '99'],
      ['ORGFORM_RETRY_BASE_MS', 'fast'],
    ]) {
      expect(() => readSettings({ ...SERVICE, [name!]: value! }, {}, ['connection', 'client'])).toThrow(UsageError);
    }
  });

  it('reads ORGFORM_RETRY_BASE_MS, unset when empty', () => {
    const retryBaseMs = (env: Record<string, string>) => readSettings(env, {}, ['client']).client.retryBaseMs;
    expect(retryBaseMs({ ORGFORM_RETRY_BASE_MS: '25' })).toBe(25);
    expect(retryBaseMs({ ORGFORM_RETRY_BASE_MS: '' })).toBeUndefined();
    expect(() => retryBaseMs({ ORGFORM_RETRY_BASE_MS: '0' })).toThrow('ORGFORM_RETRY_BASE_MS must be a whole number from 1 to 10000 (got "0").');
  });

  it('reads only the groups a command names, so that a setting it ignores cannot stop it', () => {
    const broken = { ORGFORM_READ_MAX_AGE_MS: 'soon', ORGFORM_MAX_ATTEMPTS: '0', ORGFORM_STATE_BATCH: '0', ORGFORM_PLAN_KEY: 'short', HTTPS_PROXY: 'not a url' };
    const validate = readSettings(broken, {}, ['config']);
    expect(Object.keys(validate).sort()).toEqual(['ci', 'color', 'config']);
    for (const group of ['apply', 'client', 'state', 'planKey', 'network'] as const) expect(() => readSettings(broken, {}, [group]), group).toThrow(/must be/);
  });

  it('lets an option beat its variable: the base URL, the rate cap, and the token’s sources in their order', () => {
    const env = { ...SERVICE, ORGFORM_MAX_RPS: '5', ORGFORM_TOKEN_COMMAND: 'print-token' };
    const read = (options: Parameters<typeof readSettings>[1]) => readSettings(env, options, ['connection', 'client']);
    expect(read({ baseUrl: 'https://orgs.example', maxRps: 2.5 })).toMatchObject({ connection: { baseUrl: 'https://orgs.example' }, client: { maxRps: 2.5 } });
    expect(read({})).toMatchObject({ connection: { baseUrl: SERVICE.ORGFORM_BASE_URL, token: { command: 'print-token', source: 'ORGFORM_TOKEN_COMMAND' } }, client: { maxRps: 5 } });
    expect(read({ tokenFile: 'token.txt' }).connection.token).toEqual({ file: 'token.txt' });
    expect(read({ tokenCommand: 'other' }).connection.token).toEqual({ command: 'other', source: '--token-command' });
    expect(readSettings(SERVICE, {}, ['connection']).connection.token).toEqual({ value: 'a-token', source: 'ORGFORM_TOKEN' });
    expect(readSettings({ ORGFORM_TOKEN: '', ORGFORM_TOKEN_COMMAND: '' }, {}, ['connection']).connection.token).toBeUndefined();
  });

  it('refuses --token, NODE_TLS_REJECT_UNAUTHORIZED=0 and two sources of the token before anything is done', () => {
    expect(() => readSettings(SERVICE, { token: 'x' }, ['connection'])).toThrow(/^Refusing --token/);
    expect(() => readSettings({ ...SERVICE, NODE_TLS_REJECT_UNAUTHORIZED: '0' }, {}, ['connection'])).toThrow(/^Refusing to run with NODE_TLS_REJECT_UNAUTHORIZED=0/);
    expect(() => readSettings(SERVICE, { tokenFile: 'a', tokenCommand: 'b' }, ['connection'])).toThrow('Pass --token-command or --token-file, not both');
  });

  it('hands the files ORGFORM_VAR_… variables only, never a credential', () => {
    const config = readSettings({ ...SERVICE, ORGFORM_VAR_EMAIL: 'a@b.test', ORGFORM_PLAN_KEY: 'k'.repeat(40), HOME: '/root' }, {}, ['config']).config;
    expect(config).toEqual({ ORGFORM_VAR_EMAIL: 'a@b.test' });
  });

  it('hands the token command orgform’s environment as it is, and nothing else reads it', () => {
    const env = { ...SERVICE, PATH: '/bin' };
    expect(readSettings(env, {}, ['connection']).connection.childEnv).toBe(env);
  });

  it('runs the token command in the home directory in a pull request’s job, and in the working directory elsewhere', () => {
    const directory = (env: Record<string, string | undefined>) => readSettings({ ...SERVICE, HOME: '/home/runner', ...env }, {}, ['connection']).connection.tokenCommandDirectory;
    expect(directory({ GITHUB_ACTIONS: 'true', GITHUB_EVENT_NAME: 'pull_request_target' })).toBe('/home/runner');
    expect(directory({ GITLAB_CI: 'true', CI_MERGE_REQUEST_IID: '7' })).toBe('/home/runner');
    for (const env of [{}, { GITHUB_ACTIONS: 'true', GITHUB_EVENT_NAME: 'push' }, { GITLAB_CI: 'true' }]) expect(directory(env)).toBeUndefined();
  });

  it('reads no variable that cli/settings-table.ts does not list', () => {
    const listed = new Set(SETTINGS_TABLE.flatMap((row) => row.variables));
    const read = new Set<string>();
    // Every name asked for, in whichever case (the proxies are read in lower case too), and the ORGFORM_VAR_ prefix for the files.
    // In a pull request's job, so that what only such a job reads is read too.
    const env = new Proxy({ ORGFORM_VAR_NAME: 'x', GITHUB_ACTIONS: 'true', GITHUB_EVENT_NAME: 'pull_request' } as Record<string, string | undefined>, {
      get: (target, name) => (typeof name === 'string' && read.add(name), target[name as string]),
    });
    readSettings(env, {}, ALL_GROUPS);
    const unlisted = [...read].filter((name) => !listed.has(name) && !listed.has(name.toUpperCase()));
    expect(read.size).toBeGreaterThan(30);
    expect(unlisted).toEqual([]);
  });
});
