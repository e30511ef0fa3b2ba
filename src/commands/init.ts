/**
 * `orgform init`: from an empty repository to a working set-up in one command. It writes
 * orgs.yaml (what the token can see, exported, when a service and a token are set; otherwise a
 * commented starter that validates as it is), the pipeline (the GitHub workflow by default, the
 * GitLab CI/CD configuration with --gitlab, none with --no-workflow) and the .gitignore lines, and
 * prints the steps left (first, below a repository's root, that the pipeline file must move up to
 * it; then the credentials, split: a read-only token for the pull requests' plan, the token that
 * writes where only the default branch reaches it). Nothing is overwritten without --force: every file is checked, .gitignore read and the
 * pipeline's directory made before any is written, so a refusal writes nothing. Like every path
 * orgform writes, none may lead out of the repository or into .git through a link (a cloned
 * repository's `.gitignore → ~/.bashrc`), --force or not. The pipelines are
 * the package's own examples, which use the Action and the component and are tested as shipped,
 * so that init never drifts from them.
 */
import { existsSync, lstatSync, readFileSync } from 'node:fs';
import { appendFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { OrgformError, UsageError } from '../errors.js';
import { DEFAULT_SCHEMA_PATH } from '../config-writer/render-export.js';
import type { ConnectionFlags } from '../api/connect/resolve-connection.js';
import type { ClientEvent, OpenClientSettings } from '../api/connect/open-client.js';
import type { CliIO, ExitCode } from '../cli-io.js';
import { describeEscape, findWorkTree } from '../work-tree.js';
import { describeExisting, NOTHING_WRITTEN } from '../text/describe-files.js';

export interface InitFlags extends ConnectionFlags {
  gitlab?: boolean;
  /** false with --no-workflow. */
  workflow?: boolean;
  /** false with --no-drift: no scheduled drift workflow (GitHub; GitLab's drift job runs on a schedule you add). */
  drift?: boolean;
  force?: boolean;
  parallelism: number;
}

/** What the local runs leave beside orgs.yaml: the journal and its lock, and saved plans (they hold billing details as read). */
const GITIGNORE_LINES = ['node_modules/', '.orgform/', 'plan.bin'];

const STARTER = `# yaml-language-server: $schema=${DEFAULT_SCHEMA_PATH}
#
# orgform's desired state: what each organisation should look like. Check it offline with
# \`orgform validate\`; see what applying it would change with \`orgform plan\`. \`orgform export\`
# writes this file from what your token can see. Every field: examples/orgs.yaml in the package.

version: 1                         # the format version; always 1

# activeOrganisation: my-org       # optional: make my-org the user's active organisation

organisations: {}                  # keyed by slug; replace {} with entries such as:
#  my-org:
#    billing:                      # any subset; fields left out stay as they are
#      billingEmail: billing@example.com
#      customerID: \${ORGFORM_VAR_CUSTOMER_ID}   # from the pipeline (unset is an error)
#    invitations:
#      accept: [inv_123]           # invitations that the authenticated user accepts
#      revoke: [inv_456]           # invitations to delete
#    notificationChannels:
#      remove: [chn_789]           # channels to delete
`;

/** The package's root (where package.json names orgform), found from here wherever this module is built or moved to. */
function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name === 'orgform') return dir;
    const parent = dirname(dir);
    if (parent === dir) throw new Error('orgform init: the package root (package.json) was not found');
    dir = parent;
  }
}

interface Pipeline {
  path: string;
  example: string;
  /** The scheduled drift check, when it is a file of its own (GitHub's workflow; GitLab's is a job of the component). */
  drift?: { path: string; example: string };
  /** The secrets and variables to set, for the branch that applies. */
  steps: (branch: string) => string[];
  /** What the forge calls the review that shows the plan. */
  review: string;
  /** Said when init runs below the repository root, where the forge never looks for the file. */
  atRoot: (root: string, path: string, dir: string) => string;
}

const GITHUB: Pipeline = {
  path: '.github/workflows/orgform.yml',
  review: 'a pull request',
  example: 'examples/github-actions/orgform.yml',
  drift: { path: '.github/workflows/orgform-drift.yml', example: 'examples/github-actions/orgform-drift.yml' },
  steps: (branch) => [
    'Add the repository secret ORGFORM_PLAN_TOKEN, a token that can only read, for the plan of every pull request and the weekly drift check (and ORGFORM_PLAN_STATE, read-only access to a remote state): Settings > Secrets and variables > Actions > New repository secret.',
    `Create the environment orgform-apply (Settings > Environments), deployment branches limited to ${branch}, and give it the secrets ORGFORM_TOKEN, the token that writes (and ORGFORM_STATE for a remote state): no pull request's job can read them. On merge, only the plan reviewed on the pull request is applied.`,
    'Add the variable ORGFORM_BASE_URL (Settings > Secrets and variables > Actions, Variables tab), e.g. https://api.example.com.',
  ],
  atRoot: (root, path, dir) => `GitHub runs only the workflows in .github/workflows at the repository root (${root}): move ${path} there, and give each use of the action \`working-directory: ${dir}\`.`,
};

const GITLAB: Pipeline = {
  path: '.gitlab-ci.yml',
  review: 'a merge request',
  example: 'examples/gitlab-ci.yml',
  steps: (branch) => [
    'Add the CI/CD variable ORGFORM_PLAN_TOKEN (masked), a token that can only read, for the plan of every merge request, and GITLAB_API_TOKEN for the plan note, the reviewed plan the apply reads back and the drift issue: Settings > CI/CD > Variables (see the file\'s header).',
    `Add the CI/CD variable ORGFORM_TOKEN (masked and protected), the token that writes, and keep ${branch} protected: only its pipelines get it. On merge, only the plan reviewed on the merge request is applied.`,
    'Add the CI/CD variable ORGFORM_BASE_URL, e.g. https://api.example.com.',
    `Add a weekly pipeline schedule of ${branch} (Build > Pipeline schedules): its drift job keeps one issue open while the service differs from orgs.yaml.`,
  ],
  atRoot: (root, path, dir) => `GitLab reads .gitlab-ci.yml at the repository root (${root}): move ${path} there, and give the component \`working-directory: ${dir}\`.`,
};

/** Whether anything is at `path`, a symbolic link included, even one pointing nowhere (writing through it would create a file elsewhere). */
function entryExists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/** The git repository `dir` is in (the nearest directory above holding .git), or undefined. */
function gitRoot(dir: string): string | undefined {
  for (let at = resolve(dir); ; at = dirname(at)) {
    if (entryExists(join(at, '.git'))) return at;
    if (dirname(at) === at) return undefined;
  }
}

/**
 * The branch the repository is on (`ref: refs/heads/NAME` in .git/HEAD): in a new repository, its
 * default branch. The workflow applies on merges to it; `main` is only the example's guess, and a
 * repository on `master` would never apply. Undefined when it cannot be told (detached, a worktree).
 */
export function currentBranch(root: string | undefined): string | undefined {
  if (root === undefined) return undefined;
  try {
    const head = /^ref: refs\/heads\/([\w./-]+)\s*$/.exec(readFileSync(join(root, '.git', 'HEAD'), 'utf8'));
    return head?.[1];
  } catch {
    return undefined;
  }
}

/** A GitHub example's `branches: [main]`, and `main` in its comments, for the repository's own branch. */
export function forBranch(workflow: string, branch: string | undefined): string {
  if (branch === undefined || branch === 'main') return workflow;
  return workflow
    .replace(/^(\s*branches: )\[main\]$/m, `$1[${branch}]`)
    .replace(/^#.*$/gm, (comment) => comment.replace(/\bmain\b/g, branch));
}

/**
 * The example's path filter (GitHub's `paths:`, GitLab's `changes:`) for orgs.yaml written `below`
 * the repository's root (infra/orgs.yaml): a filter on the root's orgs.yaml would never run.
 */
export function forDirectory(pipeline: string, below: string): string {
  if (below === '') return pipeline;
  return pipeline.replace(/^(\s*(?:paths|changes): \[)orgs\.yaml,/gm, `$1${below}/orgs.yaml,`);
}

/** The settings init reads (cli/settings.ts): where to connect and how, for the export. */
export type InitSettings = Omit<OpenClientSettings, 'parallelism'>;

/** Whether a service and a token are set, so that orgs.yaml can be exported rather than started empty. */
function canExport(settings: InitSettings): boolean {
  const { baseUrl, token } = settings.connection;
  const given = token === undefined ? '' : 'command' in token ? token.command : 'file' in token ? token.file : token.value;
  return baseUrl !== undefined && baseUrl !== '' && given !== '';
}

async function exportedConfig(flags: InitFlags, io: CliIO, settings: InitSettings): Promise<{ text: string; count: number }> {
  const [{ openClient, serviceKeyOf }, { readOrganisations }, { renderExport }, { selectExportable }, { formatWait }] = await Promise.all([
    import('../api/connect/open-client.js'),
    import('../config-writer/read-organisations.js'),
    import('../config-writer/render-export.js'),
    import('../config-writer/select-exportable.js'),
    import('../text/format-wait.js'),
  ]);
  // Its only view: a wait of 2 s or more is told on standard error, as every command's is.
  const events = { event: (e: ClientEvent) => e.type === 'wait' && void io.stderr.write(`${formatWait(e)}\n`) };
  const client = await openClient({ ...settings, parallelism: flags.parallelism }, io, { events });
  try {
    const { organisations, activeId } = await readOrganisations(client, { parallelism: flags.parallelism });
    const text = renderExport(organisations, activeId, { baseUrl: serviceKeyOf(client), schema: DEFAULT_SCHEMA_PATH });
    return { text, count: selectExportable(organisations, activeId).organisations.length };
  } finally {
    await client.close();
  }
}

export async function run(flags: InitFlags, io: CliIO, _args: string[], settings: InitSettings): Promise<ExitCode> {
  const pipeline = flags.workflow === false ? undefined : flags.gitlab ? GITLAB : GITHUB;
  const config = resolve(io.cwd, 'orgs.yaml');
  const workflow = pipeline === undefined ? undefined : resolve(io.cwd, pipeline.path);
  const drift = pipeline?.drift === undefined || flags.drift === false ? undefined : pipeline.drift;
  const driftPath = drift === undefined ? undefined : resolve(io.cwd, drift.path);
  const pipelineFiles = [...(workflow === undefined ? [] : [workflow]), ...(driftPath === undefined ? [] : [driftPath])];

  // Every file checked before any is written: a refusal leaves the directory as it was.
  const gitignore = resolve(io.cwd, '.gitignore');
  await refuseLinksAway(io.cwd, [config, ...pipelineFiles, gitignore]);
  const existing = [config, ...pipelineFiles].filter(entryExists);
  if (existing.length > 0 && !flags.force) {
    const names = existing.map((path) => path.slice(resolve(io.cwd).length + 1));
    throw new UsageError(describeExisting(names, 'run init in another directory'));
  }

  // The export first: when it fails, nothing has been written yet.
  const exported = canExport(settings) ? await exportedConfig(flags, io, settings) : undefined;
  const example = pipeline === undefined ? undefined : await readFile(join(packageRoot(), pipeline.example), 'utf8');
  const root = pipeline === undefined ? undefined : gitRoot(io.cwd);
  const below = root === undefined ? '' : relative(root, resolve(io.cwd));
  const branch = currentBranch(root);
  const workflowText = example === undefined ? undefined : forDirectory(pipeline === GITHUB ? forBranch(example, branch) : example, below);
  const driftText = drift === undefined ? undefined : forBranch(await readFile(join(packageRoot(), drift.example), 'utf8'), branch);

  // Then what could still fail (.github a file, .gitignore a directory), before any file is written.
  const written: string[] = [];
  const attempt = async <T>(name: string, step: () => Promise<T>): Promise<T> => {
    try {
      return await step();
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? 'failed';
      const done = written.length === 0 ? NOTHING_WRITTEN : `Written before it: ${written.join('; ')}.`;
      throw new OrgformError('CONFIG_IO', `Cannot write ${name}: ${code}. ${done}`, { cause: err });
    }
  };
  const ignoredText = await attempt('.gitignore', () => readGitignore(gitignore));
  if (workflow !== undefined) await attempt(pipeline!.path, () => mkdir(dirname(workflow), { recursive: true }));

  await attempt('orgs.yaml', () => writeFile(config, exported?.text ?? STARTER));
  written.push(exported === undefined ? 'orgs.yaml (a starter: no service or token set to export from)' : `orgs.yaml (exported: ${exported.count} organisation${exported.count === 1 ? '' : 's'} your token can see)`);
  if (workflow !== undefined && workflowText !== undefined) {
    await attempt(pipeline!.path, () => writeFile(workflow, workflowText));
    written.push(pipeline!.path);
  }
  if (drift !== undefined && driftPath !== undefined && driftText !== undefined) {
    await attempt(drift.path, () => writeFile(driftPath, driftText));
    written.push(`${drift.path} (a plan of ${branch ?? 'main'} every Monday: one issue open while the service differs)`);
  }
  const ignored = await attempt('.gitignore', () => addGitignoreLines(gitignore, ignoredText));
  if (ignored.length > 0) written.push(`.gitignore (${ignored.join(', ')})`);

  const files = ['orgs.yaml', ...(pipeline === undefined ? [] : [pipeline.path]), ...(drift === undefined ? [] : [drift.path]), '.gitignore'];
  const steps = [
    ...(pipeline !== undefined && root !== undefined && below !== '' ? [pipeline.atRoot(root, [pipeline.path, ...(drift === undefined ? [] : [drift.path])].map((p) => `${below}/${p}`).join(' and '), below)] : []),
    ...(pipeline?.steps(branch ?? 'main') ?? ['Set ORGFORM_TOKEN and ORGFORM_BASE_URL where orgform runs.']),
    `Commit and push: git add ${files.join(' ')} && git commit -m "Manage organisations with orgform" && git push${pipeline === undefined ? '' : `, then open ${pipeline.review} to see its plan`}.`,
  ];
  io.stdout.write(
    [
      'Wrote:',
      ...written.map((line) => `  ${line}`),
      '',
      'Check it now: orgform validate (offline), then orgform plan (reads the service).',
      '',
      'Left to do:',
      ...steps.map((step, i) => `  ${i + 1}. ${step}`),
      '',
    ].join('\n'),
  );
  return 0;
}

/** Refuses, before anything is written, a path that a link leads out of the repository's working tree or into its .git. */
async function refuseLinksAway(cwd: string, paths: string[]): Promise<void> {
  const tree = await findWorkTree(cwd);
  for (const path of paths) {
    const shown = relative(resolve(cwd), path);
    const away = await describeEscape(tree, path, 'stay', shown);
    if (away !== undefined) throw new UsageError(`Cannot write ${shown}: ${away}. Nothing was written; remove the link, or run init where it is not.`);
  }
}

/** .gitignore's text ('' when there is none). */
async function readGitignore(path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return '';
    throw err;
  }
}

/** The lines `text` (.gitignore as read) lacks, appended (the file is made when there is none). */
async function addGitignoreLines(path: string, text: string): Promise<string[]> {
  const present = new Set(text.split(/\r?\n/).map((line) => line.trim()));
  const missing = GITIGNORE_LINES.filter((line) => !present.has(line));
  if (missing.length === 0) return [];
  const lead = text === '' || text.endsWith('\n') ? '' : '\n';
  await appendFile(path, `${lead}# orgform: the npm packages, the local state journal and its lock, and saved plans (they hold billing details as read)\n${missing.join('\n')}\n`);
  return missing;
}
