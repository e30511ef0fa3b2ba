// @ts-check
/**
 * The action's inputs, checked once, as action.yml hands them over: through the environment
 * (INPUT_*), never spliced into a script, so that no input value is ever run as shell.
 */
import { ActionError } from './github-runner.mjs';
import { splitWords, WordsError } from './split-words.mjs';

/**
 * @typedef {object} ActionInputs
 * @property {'plan' | 'apply'} command
 * @property {string} version          as given ('' = this action's own release)
 * @property {string} sha256           the checksum the release tarball must have ('' = its release's SHA256SUMS)
 * @property {string[]} files          each one becomes `-f FILE`
 * @property {string} workingDirectory as given ('.' by default)
 * @property {boolean} comment
 * @property {string | undefined} maxChanges  a whole number, as text
 * @property {string[]} args
 * @property {string} state            '' = orgform's default journal
 * @property {string} commentAuthor    the login github-token writes as, when the API cannot tell ('' = ask it)
 */

/**
 * @param {Record<string, string | undefined>} env
 * @returns {ActionInputs}
 */
export function readInputs(env) {
  const get = (/** @type {string} */ name) => (env[`INPUT_${name}`] ?? '').trim();
  const command = get('COMMAND') || 'plan';
  if (command !== 'plan' && command !== 'apply') throw new ActionError(`command must be plan or apply (got "${command}")`);
  const comment = get('COMMENT') || 'true';
  if (comment !== 'true' && comment !== 'false') throw new ActionError(`comment must be true or false (got "${comment}")`);
  const maxChanges = get('MAX_CHANGES');
  if (maxChanges !== '' && !/^\d+$/.test(maxChanges)) throw new ActionError(`max-changes must be a whole number (got "${maxChanges}")`);
  return {
    command,
    version: get('VERSION'),
    sha256: get('SHA256').toLowerCase(),
    files: words('files', get('FILES')),
    workingDirectory: get('WORKING_DIRECTORY') || '.',
    comment: comment === 'true',
    maxChanges: maxChanges === '' ? undefined : maxChanges,
    args: words('args', get('ARGS')),
    state: get('STATE'),
    commentAuthor: get('COMMENT_AUTHOR'),
  };
}

/**
 * @param {string} name
 * @param {string} text
 */
function words(name, text) {
  try {
    return splitWords(text);
  } catch (err) {
    if (err instanceof WordsError) throw new ActionError(`${name}: ${err.message}`);
    throw err;
  }
}

/**
 * What tells apart several uses of the action in one job or pull request: the working directory
 * and the files ('' for the defaults). The same directory and files find the same comment, and
 * name the same plan page.
 * @param {Pick<ActionInputs, 'workingDirectory' | 'files'>} inputs
 */
export function planKey(inputs) {
  const dir = inputs.workingDirectory.replace(/^(\.\/)+/, '').replace(/\/+$/, '');
  return [dir === '.' ? '' : dir, ...inputs.files].filter(Boolean).join(' ');
}

/**
 * The page's artifact name: `orgform-plan-page` (plan) or `orgform-apply-report` (apply), then the
 * plan's key with what an artifact's name may not hold (`"`, `:`, `<`, `>`, `|`, `*`, `?`, `\`,
 * `/`, line breaks) and spaces made dashes.
 * @param {Pick<ActionInputs, 'command' | 'workingDirectory' | 'files'>} inputs
 */
export function pageArtifactName(inputs) {
  const name = inputs.command === 'plan' ? 'orgform-plan-page' : 'orgform-apply-report';
  const key = planKey(inputs).replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^-+|-+$/g, '');
  return key === '' ? name : `${name}-${key}`;
}

/**
 * orgform's arguments for the command: the action's own flags first, then the user's `args`.
 * Plan writes Markdown for the comment and saves the plan; apply is a fresh plan applied at once,
 * writing its report page when `reportFile` is given.
 * @param {ActionInputs} inputs
 * @param {string} planFile  where plan saves the plan
 * @param {string} [reportFile]  where apply writes its report page
 */
export function orgformArguments(inputs, planFile, reportFile) {
  const common = [...inputs.files.flatMap((file) => ['-f', file]), ...(inputs.maxChanges === undefined ? [] : ['--max-changes', inputs.maxChanges])];
  const report = reportFile === undefined ? [] : ['--report', `html=${reportFile}`];
  return inputs.command === 'plan'
    ? ['plan', '--format', 'markdown', '--detailed-exitcode', '--out', planFile, ...common, ...inputs.args]
    : ['apply', '--auto-approve', ...common, ...report, ...inputs.args];
}
