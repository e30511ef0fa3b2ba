/**
 * The settings of a run, read once from the command line's options and the environment, here at
 * the edge and nowhere else: the commands, their flows and the engines receive the part they use
 * (a slice whose type lives with its consumer), never the environment. An option beats its
 * variable; a whole number outside its range (settings-table.ts) is a usage error, naming the
 * variable, before anything is done.
 *
 * A command reads only its groups (cli/program.ts says which), so that a variable a command
 * ignores cannot stop it. What must be present to connect (a service URL, a token) is checked by
 * the command that connects, when it does: `plan` of a broken file still shows the file's problems.
 */
import { homedir } from 'node:os';
import type { ConnectionSettings, TokenSetting } from '../api/connect/resolve-connection.js';
import type { ClientSettings } from '../api/connect/open-client.js';
import { readProxySettings, type NetworkSettings } from '../transport/proxy-settings.js';
import { MAX_RPS_FORM, parseMaxRps } from '../api/rate/parse-max-rps.js';
import { pullRequestJob, type CiSettings } from '../ci/ci-settings.js';
import { checkCredential } from '../check-credential.js';
import { VARIABLE_PREFIX, type ConfigVariables } from '../config/interpolate.js';
import { UsageError } from '../errors.js';
import { MIN_PLAN_KEY_LENGTH } from '../plan/saved-plan.js';
import { DEFAULT_STATE_SETTINGS, type StateSettings } from '../state/state-settings.js';
import type { ColorSettings } from '../text/ansi.js';
import { nonEmpty, readOutputSettings, type Env, type OutputSettings } from './output-settings.js';
import { WHOLE_NUMBER_RANGES, type SettingGroup } from './settings-table.js';

export type { Env } from './output-settings.js';

export interface Settings {
  color: ColorSettings;
  ci: CiSettings;
  connection: ConnectionSettings;
  client: ClientSettings;
  network: NetworkSettings;
  /** ORGFORM_PLAN_KEY: plan --out signs with it, apply and show refuse a plan not signed with it. */
  planKey: string | undefined;
  apply: { readMaxAgeMs?: number; progressIntervalMs?: number };
  state: StateSettings;
  /** What `${ORGFORM_VAR_…}` in the config files reads: those variables, and no other. */
  config: ConfigVariables;
  emulatorToken: { baseUrl?: string; user?: string };
}

/** The options that set what a variable would: each beats its variable. */
export interface SettingOptions {
  baseUrl?: string;
  tokenFile?: string;
  tokenCommand?: string;
  /** Refused: a token on the command line is visible to every user of the machine. */
  token?: string;
  maxRps?: number;
}

/** The groups every command reads: they cannot be wrong. */
export type AlwaysRead = 'color' | 'ci';

/** The settings of `groups`, and the colour and CI ones (`output`, when main has read them already), each read once. */
export function readSettings<G extends SettingGroup>(env: Env, options: SettingOptions, groups: readonly G[], output: OutputSettings = readOutputSettings(env)): Pick<Settings, G | AlwaysRead> {
  const settings: Partial<Settings> = { ...output };
  for (const group of new Set<SettingGroup>(groups)) Object.assign(settings, { [group]: readGroup(group, env, options, settings) });
  return settings as Pick<Settings, G | AlwaysRead>;
}

function readGroup(group: SettingGroup, env: Env, options: SettingOptions, read: Partial<Settings>): Settings[SettingGroup] {
  switch (group) {
    case 'color':
      return read.color!;
    case 'ci':
      return read.ci!;
    case 'connection':
      return readConnectionSettings(env, options, read.ci!);
    case 'client':
      return readClientSettings(env, options);
    case 'network':
      return readNetworkSettings(env);
    case 'planKey':
      return readPlanKey(env, read.ci!);
    case 'apply':
      return { ...whole(env, 'ORGFORM_READ_MAX_AGE_MS', 'readMaxAgeMs'), ...whole(env, 'ORGFORM_PROGRESS_INTERVAL_MS', 'progressIntervalMs') };
    case 'state':
      return readStateSettings(env);
    case 'config':
      return readConfigVariables(env);
    case 'emulatorToken':
      return { ...present(env, 'ORGFORM_BASE_URL', 'baseUrl'), ...present(env, 'ORGFORM_EMULATOR_USER', 'user') };
    default: {
      const unreachable: never = group;
      throw new Error(`unknown setting group ${String(unreachable)}`);
    }
  }
}

/** A whole number from the environment, or undefined when unset; anything else, or out of its range, is a usage error. */
export function readWholeNumber(env: Env, name: string): number | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  const range = WHOLE_NUMBER_RANGES[name];
  if (range === undefined) throw new Error(`${name} is not a whole-number setting`);
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(n) || n < range.min || n > range.max) {
    throw new UsageError(`${name} must be a whole number from ${range.min} to ${range.max} (got "${raw}").`);
  }
  return n;
}

/** `{ [key]: n }` for a whole number that is set, `{}` otherwise. */
function whole<K extends string>(env: Env, name: string, key: K): Partial<Record<K, number>> {
  const n = readWholeNumber(env, name);
  return n === undefined ? {} : ({ [key]: n } as Record<K, number>);
}

/** `{ [key]: value }` for a variable that is set and not empty, `{}` otherwise. */
function present<K extends string>(env: Env, name: string, key: K): Partial<Record<K, string>> {
  const value = nonEmpty(env, name);
  return value === undefined ? {} : ({ [key]: value } as Record<K, string>);
}

/**
 * Where to connect and where the token comes from: `--token-command`, then `--token-file`, then
 * ORGFORM_TOKEN_COMMAND, then ORGFORM_TOKEN (a command set in the environment is the token's
 * source there, as a credential helper is). An empty variable counts as unset; an empty option is
 * a mistake, pointed out when connecting. The token never comes from argv: `ps` shows it.
 */
export function readConnectionSettings(env: Env, options: SettingOptions, ci: CiSettings): ConnectionSettings {
  if (options.token !== undefined) {
    throw new UsageError(
      'Refusing --token: a token on the command line is visible to other users through `ps` and lands in shell history. Set ORGFORM_TOKEN or pass --token-file FILE.',
    );
  }
  if (env.NODE_TLS_REJECT_UNAUTHORIZED === '0') {
    throw new UsageError(
      'Refusing to run with NODE_TLS_REJECT_UNAUTHORIZED=0: it turns off certificate checks, so the token could be sent to an impostor. Unset it; for a private certificate authority use NODE_EXTRA_CA_CERTS.',
    );
  }
  if (options.tokenCommand !== undefined && options.tokenFile !== undefined) {
    throw new UsageError('Pass --token-command or --token-file, not both: each is a source of the token.');
  }
  const baseUrl = options.baseUrl ?? env.ORGFORM_BASE_URL;
  const token = tokenSetting(env, options);
  const directory = tokenCommandDirectory(env, ci);
  return { ...(baseUrl === undefined ? {} : { baseUrl }), ...(token === undefined ? {} : { token }), childEnv: env, ...(directory === undefined ? {} : { tokenCommandDirectory: directory }) };
}

/**
 * Where the token command runs, when not in the working directory: in a pull request's job, the
 * home directory (HOME). There the working directory is the pull request's, and what a command
 * such as `npx token-helper` runs would be its node_modules/.bin, its .npmrc, its scripts: its
 * code, with the job's secrets.
 */
function tokenCommandDirectory(env: Env, ci: CiSettings): string | undefined {
  return pullRequestJob(ci) === undefined ? undefined : (nonEmpty(env, 'HOME') ?? homedir());
}

function tokenSetting(env: Env, options: SettingOptions): TokenSetting | undefined {
  if (options.tokenCommand !== undefined) return { command: options.tokenCommand, source: '--token-command' };
  if (options.tokenFile !== undefined) return { file: options.tokenFile };
  const command = env.ORGFORM_TOKEN_COMMAND;
  if (command !== undefined && command !== '') return { command, source: 'ORGFORM_TOKEN_COMMAND' };
  const token = env.ORGFORM_TOKEN;
  return token === undefined || token === '' ? undefined : { value: token, source: 'ORGFORM_TOKEN' };
}

/** The request budget and the rate cap (`--max-rps` beats ORGFORM_MAX_RPS); unset, the client's defaults. */
export function readClientSettings(env: Env, options: Pick<SettingOptions, 'maxRps'> = {}): ClientSettings {
  const maxRps = options.maxRps ?? readMaxRps(env);
  return {
    ...(maxRps === undefined ? {} : { maxRps }),
    ...whole(env, 'ORGFORM_REQUEST_TIMEOUT_MS', 'requestTimeoutMs'),
    ...whole(env, 'ORGFORM_MAX_ATTEMPTS', 'maxAttempts'),
    ...whole(env, 'ORGFORM_RETRY_BASE_MS', 'retryBaseMs'),
    ...whole(env, 'ORGFORM_NO_PROGRESS_TIMEOUT_MS', 'noProgressMs'),
    ...whole(env, 'ORGFORM_TOKEN_COMMAND_TIMEOUT_MS', 'tokenCommandTimeoutMs'),
  };
}

function readMaxRps(env: Env): number | undefined {
  const raw = env.ORGFORM_MAX_RPS;
  if (raw === undefined || raw === '') return undefined;
  const n = parseMaxRps(raw);
  if (n === undefined) throw new UsageError(`ORGFORM_MAX_RPS must be ${MAX_RPS_FORM} (got "${raw}").`);
  return n;
}

/** The proxies and the private certificate authority, for the service and a remote state alike; a proxy's mistake is refused here, naming it. */
export function readNetworkSettings(env: Env): NetworkSettings {
  const proxy = readProxySettings(env);
  const extraCaCerts = env.NODE_EXTRA_CA_CERTS;
  return { ...(proxy === undefined ? {} : { proxy }), ...(extraCaCerts === undefined || extraCaCerts === '' ? {} : { extraCaCerts }) };
}

/**
 * ORGFORM_PLAN_KEY, when set: at least MIN_PLAN_KEY_LENGTH characters, no control character, and
 * never in a pull request's job, where the request's author could read it and sign any plan with it
 * (a pull request's plan is for review and is not signed).
 */
export function readPlanKey(env: Env, ci: CiSettings): string | undefined {
  const key = env.ORGFORM_PLAN_KEY;
  if (key === undefined || key === '') return undefined;
  checkCredential(key, 'ORGFORM_PLAN_KEY');
  if (key.length < MIN_PLAN_KEY_LENGTH) {
    throw new UsageError(`ORGFORM_PLAN_KEY must be at least ${MIN_PLAN_KEY_LENGTH} characters long (it has ${key.length}); make one with: openssl rand -hex 32`);
  }
  const job = pullRequestJob(ci);
  if (job !== undefined) {
    throw new UsageError(
      `ORGFORM_PLAN_KEY is set in ${job}, where the pull request's author can read it and sign any plan with it. Nothing was done. ` +
        'Give the key only to the jobs of the default branch (a GitHub environment with protection rules, a GitLab protected variable): see docs/pipelines.md#split-credentials.',
    );
  }
  return key;
}

/**
 * The state: where (ORGFORM_STATE; `--state` beats it where a command takes it), the numbers a
 * remote state works by, a Terraform HTTP backend's credentials and lock requests (checked against
 * the state's own address when it is opened), PostgreSQL's password and role (for redaction and
 * hints: pg reads its PG* variables itself), and who a lock names as its holder.
 */
export function readStateSettings(env: Env): StateSettings {
  const defaults = DEFAULT_STATE_SETTINGS;
  const github = env.GITHUB_SERVER_URL && env.GITHUB_REPOSITORY && env.GITHUB_RUN_ID ? `${env.GITHUB_SERVER_URL}/${env.GITHUB_REPOSITORY}/actions/runs/${env.GITHUB_RUN_ID}` : undefined;
  const jobUrl = env.CI_JOB_URL || github;
  const user = env.USER ?? env.USERNAME;
  return {
    ...present(env, 'ORGFORM_STATE', 'location'),
    batch: {
      maxEntries: readWholeNumber(env, 'ORGFORM_STATE_BATCH') ?? defaults.batch.maxEntries,
      maxDelayMs: readWholeNumber(env, 'ORGFORM_STATE_FLUSH_MS') ?? defaults.batch.maxDelayMs,
    },
    timeoutMs: readWholeNumber(env, 'ORGFORM_STATE_TIMEOUT_MS') ?? defaults.timeoutMs,
    http: {
      ...present(env, 'ORGFORM_STATE_USERNAME', 'username'),
      ...present(env, 'ORGFORM_STATE_PASSWORD', 'password'),
      ...present(env, 'ORGFORM_STATE_LOCK_ADDRESS', 'lockAddress'),
      ...present(env, 'ORGFORM_STATE_UNLOCK_ADDRESS', 'unlockAddress'),
      ...present(env, 'ORGFORM_STATE_LOCK_METHOD', 'lockMethod'),
      ...present(env, 'ORGFORM_STATE_UNLOCK_METHOD', 'unlockMethod'),
    },
    postgres: { ...present(env, 'PGPASSWORD', 'password'), ...(env.PGUSER || env.USER ? { user: (env.PGUSER || env.USER)! } : {}) },
    owner: { ...(user === undefined ? {} : { user }), ...(jobUrl ? { jobUrl } : {}) },
  };
}

/** The variables `${NAME}` may read: ORGFORM_VAR_… only, so that no file can read a credential. */
export function readConfigVariables(env: Env): ConfigVariables {
  const variables: Record<string, string | undefined> = {};
  for (const name of Object.keys(env)) if (name.startsWith(VARIABLE_PREFIX)) variables[name] = env[name];
  return variables;
}
