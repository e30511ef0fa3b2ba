/**
 * Every setting orgform takes from the environment, with the option that beats it, its range,
 * its default and the module that uses it. cli/settings.ts reads by this table (the ranges of the
 * whole numbers are checked there, before anything is done); docs/cli.md's table of settings says
 * the same, and test/cli/settings-table.test.ts holds the two together.
 *
 * Dependency-free: read while the command line is parsed, before any command is chosen.
 */

/**
 * The settings a command reads, by group: a command reads only its groups, so that `validate`,
 * which reads no service, is not refused for a request setting it ignores.
 * `color` and `ci` are read for every command (they cannot be wrong).
 */
export type SettingGroup = 'color' | 'ci' | 'connection' | 'client' | 'network' | 'planKey' | 'apply' | 'state' | 'config' | 'emulatorToken';

export interface SettingRow {
  /** The variables, as docs/cli.md names them (a proxy variable is also read in lower case). */
  variables: readonly string[];
  /** The option that beats the variables, where there is one. */
  option?: string;
  /** A whole number's range, checked when read. */
  range?: { min: number; max: number };
  /** The default, as docs/cli.md writes it; absent when there is none. */
  default?: string;
  group: SettingGroup;
  /** The module that acts on it (below src/). */
  consumer: string;
}

export const SETTINGS_TABLE: readonly SettingRow[] = [
  { variables: ['ORGFORM_BASE_URL'], option: '--base-url', group: 'connection', consumer: 'api/connect/resolve-connection.ts' },
  { variables: ['ORGFORM_TOKEN'], option: '--token-file', group: 'connection', consumer: 'api/connect/resolve-connection.ts' },
  { variables: ['ORGFORM_TOKEN_COMMAND'], option: '--token-command', group: 'connection', consumer: 'api/connect/run-token-command.ts' },
  { variables: ['HOME'], group: 'connection', consumer: 'api/connect/run-token-command.ts' },
  { variables: ['NODE_TLS_REJECT_UNAUTHORIZED'], group: 'connection', consumer: 'cli/settings.ts' },
  { variables: ['ORGFORM_MAX_RPS'], option: '--max-rps', group: 'client', consumer: 'api/rate/rate-gate.ts' },
  { variables: ['ORGFORM_REQUEST_TIMEOUT_MS'], range: { min: 100, max: 86_400_000 }, default: '60000', group: 'client', consumer: 'transport/transport.ts' },
  { variables: ['ORGFORM_MAX_ATTEMPTS'], range: { min: 1, max: 100 }, default: '5', group: 'client', consumer: 'transport/retry-policy.ts' },
  { variables: ['ORGFORM_RETRY_BASE_MS'], range: { min: 1, max: 10_000 }, default: '250', group: 'client', consumer: 'transport/retry-policy.ts' },
  { variables: ['ORGFORM_NO_PROGRESS_TIMEOUT_MS'], range: { min: 1, max: 86_400_000 }, default: '600000', group: 'client', consumer: 'api/rate/rate-gate.ts' },
  { variables: ['ORGFORM_TOKEN_COMMAND_TIMEOUT_MS'], range: { min: 100, max: 600_000 }, default: '60000', group: 'client', consumer: 'api/connect/run-token-command.ts' },
  { variables: ['ORGFORM_PROGRESS_INTERVAL_MS'], range: { min: 10, max: 3_600_000 }, default: '5000', group: 'apply', consumer: 'commands/apply/views/text-apply-view.ts' },
  { variables: ['ORGFORM_READ_MAX_AGE_MS'], range: { min: 0, max: 60_000 }, default: '5000', group: 'apply', consumer: 'executor/apply-plan.ts' },
  { variables: ['ORGFORM_PLAN_KEY'], group: 'planKey', consumer: 'plan/saved-plan.ts' },
  { variables: ['ORGFORM_STATE'], option: '--state', group: 'state', consumer: 'state/open-state.ts' },
  { variables: ['ORGFORM_STATE_USERNAME', 'ORGFORM_STATE_PASSWORD'], group: 'state', consumer: 'state/http/http-document-port.ts' },
  { variables: ['ORGFORM_STATE_LOCK_ADDRESS', 'ORGFORM_STATE_UNLOCK_ADDRESS'], group: 'state', consumer: 'state/http/terraform-lock.ts' },
  { variables: ['ORGFORM_STATE_LOCK_METHOD', 'ORGFORM_STATE_UNLOCK_METHOD'], default: 'POST, DELETE', group: 'state', consumer: 'state/http/terraform-lock.ts' },
  { variables: ['ORGFORM_STATE_BATCH'], range: { min: 1, max: 10_000 }, default: '500', group: 'state', consumer: 'state/batched-journal.ts' },
  { variables: ['ORGFORM_STATE_FLUSH_MS'], range: { min: 10, max: 60_000 }, default: '2000', group: 'state', consumer: 'state/batched-journal.ts' },
  { variables: ['ORGFORM_STATE_TIMEOUT_MS'], range: { min: 100, max: 600_000 }, default: '30000', group: 'state', consumer: 'state/postgres/postgres-session.ts' },
  { variables: ['PGPASSWORD', 'PGUSER'], group: 'state', consumer: 'state/postgres/postgres-session.ts' },
  { variables: ['USER', 'USERNAME', 'CI_JOB_URL', 'GITHUB_SERVER_URL', 'GITHUB_REPOSITORY', 'GITHUB_RUN_ID'], group: 'state', consumer: 'state/open-state.ts' },
  { variables: ['HTTPS_PROXY', 'HTTP_PROXY', 'NO_PROXY', 'NODE_EXTRA_CA_CERTS'], group: 'network', consumer: 'transport/proxy-settings.ts' },
  { variables: ['ORGFORM_VAR_NAME'], group: 'config', consumer: 'config/interpolate.ts' },
  { variables: ['ORGFORM_EMULATOR_USER'], option: '--user', group: 'emulatorToken', consumer: 'commands/emulator-token.ts' },
  { variables: ['NO_COLOR', 'FORCE_COLOR', 'TERM'], option: '--no-color', group: 'color', consumer: 'text/ansi.ts' },
  { variables: ['GITHUB_ACTIONS', 'GITHUB_STEP_SUMMARY', 'GITHUB_WORKSPACE', 'CI_PROJECT_DIR'], group: 'ci', consumer: 'ci/pipeline-output.ts' },
  { variables: ['GITHUB_EVENT_NAME', 'GITLAB_CI', 'CI_MERGE_REQUEST_IID', 'CI_EXTERNAL_PULL_REQUEST_IID'], group: 'ci', consumer: 'ci/ci-settings.ts' },
];

/** The whole numbers read from the environment, each with its range. */
export const WHOLE_NUMBER_RANGES: Readonly<Record<string, { min: number; max: number }>> = Object.fromEntries(
  SETTINGS_TABLE.flatMap((row) => (row.range === undefined ? [] : row.variables.map((name) => [name, row.range!] as const))),
);
