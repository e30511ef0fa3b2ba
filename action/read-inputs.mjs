// @ts-check
/**
 * The action's inputs, checked once, as action.yml hands them over: through the environment
 * (INPUT_*), never spliced into a script, so that no input value is ever run as shell.
 */
import { ActionError } from './github-runner.mjs';
import { splitWords, WordsError } from './split-words.mjs';
import { applyArguments } from '../pipeline/reviewed-plan.mjs';

/**
 * @typedef {object} ActionInputs
 * @property {'plan' | 'apply' | 'drift'} command
 * @property {string} version          as given ('' = this action's own release)
 * @property {string} sha256           the checksum the release tarball must have ('' = its release's SHA256SUMS)
 * @property {string[]} files          each one becomes `-f FILE`
 * @property {string} workingDirectory as given ('.' by default)
 * @property {boolean} comment
 * @property {string | undefined} maxChanges  a whole number, as text
 * @property {string[]} args
 * @property {string} state            '' = orgform's default journal
 * @property {string} commentAuthor    the login github-token writes as, when the API cannot tell ('' = ask it)
 * @property {boolean} applyUnreviewed apply: a fresh plan applied without a reviewed one, asked for on purpose
 * @property {string} expectDigest     apply: the digest of the plan to apply ('' = the merged pull request's reviewed plan)
 */

/**
 * @param {Record<string, string | undefined>} env
 * @returns {ActionInputs}
 */
export function readInputs(env) {
  const get = (/** @type {string} */ name) => (env[`INPUT_${name}`] ?? '').trim();
  const command = get('COMMAND') || 'plan';
  if (command !== 'plan' && command !== 'apply' && command !== 'drift') throw new ActionError(`command must be plan, apply or drift (got "${command}")`);
  const comment = get('COMMENT') || 'true';
  if (comment !== 'true' && comment !== 'false') throw new ActionError(`comment must be true or false (got "${comment}")`);
  const applyUnreviewed = get('APPLY_UNREVIEWED') || 'false';
  if (applyUnreviewed !== 'true' && applyUnreviewed !== 'false') throw new ActionError(`apply-unreviewed must be true or false (got "${applyUnreviewed}")`);
  const expectDigest = get('EXPECT_DIGEST').toLowerCase();
  if (expectDigest !== '' && !/^(sha256:)?[0-9a-f]{64}$/.test(expectDigest)) throw new ActionError(`expect-digest must be a plan's whole digest, sha256: and 64 hexadecimal digits (got "${expectDigest}")`);
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
    applyUnreviewed: applyUnreviewed === 'true',
    expectDigest: expectDigest === '' || expectDigest.startsWith('sha256:') ? expectDigest : `sha256:${expectDigest}`,
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
 * The page's artifact name: `orgform-plan-page` (plan, and drift's plan) or `orgform-apply-report` (apply), then the
 * plan's key with what an artifact's name may not hold (`"`, `:`, `<`, `>`, `|`, `*`, `?`, `\`,
 * `/`, line breaks) and spaces made dashes.
 * @param {Pick<ActionInputs, 'command' | 'workingDirectory' | 'files'>} inputs
 */
export function pageArtifactName(inputs) {
  const name = inputs.command !== 'apply' ? 'orgform-plan-page' : 'orgform-apply-report';
  const key = markerKey(inputs.workingDirectory, inputs.files).replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^-+|-+$/g, '');
  return key === '' ? name : `${name}-${key}`;
}

/**
 * orgform's arguments for the command: the action's own flags first, then the user's `args`.
 * Plan writes Markdown for the comment and saves the plan (for its page); drift is the same plan,
 * for the issue; apply is what the review step found (pipeline/reviewed-plan.mjs's applyArguments): the
 * reviewed plan applied by its digest, a plan applied without a review on purpose, or only a plan.
 * An apply writes its report page when `reportFile` is given.
 * @param {ActionInputs} inputs
 * @param {string} planFile  where plan saves the plan
 * @param {import('../pipeline/reviewed-plan.mjs').ApplyMode} [mode]  apply's, from the review step
 * @param {string} [reportFile]  where apply writes its report page
 */
export function orgformArguments(inputs, planFile, mode = { mode: 'no-review' }, reportFile = undefined) {
  const common = [...inputs.files.flatMap((file) => ['-f', file]), ...(inputs.maxChanges === undefined ? [] : ['--max-changes', inputs.maxChanges])];
  switch (inputs.command) {
    case 'plan':
    case 'drift':
      return ['plan', '--format', 'markdown', '--detailed-exitcode', '--out', planFile, ...common, ...inputs.args];
    default: {
      const applies = mode.mode === 'reviewed' || mode.mode === 'unreviewed';
      const report = applies && reportFile !== undefined ? ['--report', `html=${reportFile}`] : [];
      return applyArguments(mode, [...common, ...report, ...inputs.args]);
    }
  }
}

/**
 * What tells apart several uses of the action in one job or pull request: the working directory
 * and the files ('' for the defaults). The same directory and files find the same comment (the
 * plan's, the apply's after the merge, and the drift issue, so that the apply job reads the plan
 * job's comment: give both the same inputs) and name the same page.
 * @param {string} workingDirectory
 * @param {string[]} files
 */
export function markerKey(workingDirectory, files) {
  const dir = workingDirectory.replace(/^(\.\/)+/, '').replace(/\/+$/, '');
  return [dir === '.' ? '' : dir, ...files].filter(Boolean).join(' ');
}
