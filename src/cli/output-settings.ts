/**
 * The settings every command reads, before one is chosen: colour, and the CI service orgform runs
 * in. They cannot be wrong, so reading them stops nothing. Dependency-free (types only), so that
 * `orgform --help` loads no more than commander.
 */
import type { CiSettings } from '../ci/ci-settings.js';
import type { ColorSettings } from '../text/ansi.js';

/** The process environment as main hands it over. */
export type Env = Readonly<Record<string, string | undefined>>;

export interface OutputSettings {
  color: ColorSettings;
  ci: CiSettings;
}

export function readOutputSettings(env: Env): OutputSettings {
  return { color: readColorSettings(env), ci: readCiSettings(env) };
}

/**
 * Colour as Node and https://no-color.org read it: FORCE_COLOR `0` or `false` turns it off,
 * anything else on (CI logs show colours but are not terminals); NO_COLOR set and not empty; TERM=dumb.
 */
export function readColorSettings(env: Env): ColorSettings {
  const force = env.FORCE_COLOR;
  return {
    ...(force === undefined ? {} : { force: force !== '0' && force.toLowerCase() !== 'false' }),
    noColor: env.NO_COLOR !== undefined && env.NO_COLOR !== '',
    dumbTerminal: env.TERM === 'dumb',
  };
}

/** A variable that is set and not empty, or undefined. */
export function nonEmpty(env: Env, name: string): string | undefined {
  const value = env[name];
  return value === undefined || value === '' ? undefined : value;
}

/** The CI service this runs in, as its own variables say. */
export function readCiSettings(env: Env): CiSettings {
  const mergeRequest = ['CI_MERGE_REQUEST_IID', 'CI_EXTERNAL_PULL_REQUEST_IID'].find((name) => nonEmpty(env, name) !== undefined);
  const optional = { githubEvent: 'GITHUB_EVENT_NAME', githubWorkspace: 'GITHUB_WORKSPACE', githubStepSummary: 'GITHUB_STEP_SUMMARY', gitlabProjectDir: 'CI_PROJECT_DIR' } as const;
  const ci: CiSettings = { githubActions: env.GITHUB_ACTIONS === 'true', gitlabCi: env.GITLAB_CI === 'true' };
  for (const [key, name] of Object.entries(optional) as Array<[keyof typeof optional, string]>) {
    const value = nonEmpty(env, name);
    if (value !== undefined) ci[key] = value;
  }
  if (mergeRequest !== undefined) ci.mergeRequest = { variable: mergeRequest, iid: env[mergeRequest]! };
  return ci;
}
