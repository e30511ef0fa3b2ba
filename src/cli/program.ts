/**
 * The command-line grammar. Only commander is imported here; each command's module, and the
 * reading of its settings (settings.ts), is loaded when that command is chosen, so that
 * `orgform --help` starts about as fast as a bare node.
 */
import { Argument, Command, InvalidArgumentError, Option } from 'commander';
// Dependency-free (no imports of its own): the emulator's points, for --point and --help.
import { describeBehaviourHelp, parsePointAssignment, PROFILE_NAMES } from '../emulator/behaviour.js';
// Dependency-free: the guard on everything written in GitHub Actions, put on before any command runs.
import { guardWorkflowCommands } from '../ci/guard-workflow-commands.js';
// Dependency-free: each command's examples and exit codes, shown after its options.
import { commandHelpText } from './command-help.js';
import type { CliIO, ExitCode } from '../cli-io.js';
import { readOutputSettings, type Env, type OutputSettings } from './output-settings.js';
import type { AlwaysRead, Settings } from './settings.js';
import type { SettingGroup } from './settings-table.js';
import { MAX_RPS_FORM, parseMaxRps } from '../api/rate/parse-max-rps.js';
// Dependency-free: Terraform's one-dash spellings.
import { acceptTerraformSpellings, hintForUnknownOption } from './terraform-spellings.js';
import { VERSION } from '../version.js';
// Dependency-free: how a plan's digest is written, for --expect-digest.
import { parseDigest } from '../plan/digest-form.js';

function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

function positiveInt(name: string) {
  return (value: string): number => {
    const n = Number(value);
    if (!/^\d+$/.test(value) || !Number.isSafeInteger(n) || n < 1) {
      throw new InvalidArgumentError(`${name} must be a whole number of at least 1 (got "${value}")`);
    }
    return n;
  };
}

function nonNegativeInt(name: string) {
  return (value: string): number => {
    const n = Number(value);
    if (!/^\d+$/.test(value) || !Number.isSafeInteger(n)) {
      throw new InvalidArgumentError(`${name} must be a whole number (got "${value}")`);
    }
    return n;
  };
}

/** `NAME=VALUE` for `emulator --point`, checked here and collected as given. */
function pointAssignment(value: string, previous: string[] = []): string[] {
  try {
    parsePointAssignment(value);
  } catch (err) {
    throw new InvalidArgumentError((err as Error).message);
  }
  return [...previous, value];
}

/** `RPS[:BURST]` for `emulator --rate-limit`, checked here and passed on as given. */
function rateLimitSpec(value: string): string {
  if (!/^[1-9]\d{0,8}(:[1-9]\d{0,8})?$/.test(value)) {
    throw new InvalidArgumentError(`--rate-limit takes RPS or RPS:BURST, whole numbers of at least 1 (got "${value}")`);
  }
  return value;
}

/** `REQUESTS:SECONDS` for `emulator --quota`, checked here and passed on as given. */
function quotaSpec(value: string): string {
  if (!/^[1-9]\d{0,8}:[1-9]\d{0,9}$/.test(value)) {
    throw new InvalidArgumentError(`--quota takes REQUESTS:SECONDS, whole numbers of at least 1, such as 5000:86400 (got "${value}")`);
  }
  return value;
}

/** `--report KIND=FILE`, repeatable; only the kinds the command can write. */
function reportSpec<K extends string>(kinds: readonly K[]) {
  return (value: string, previous: Array<{ kind: K; path: string }> = []): Array<{ kind: K; path: string }> => {
    const at = value.indexOf('=');
    const kind = value.slice(0, Math.max(0, at)) as K;
    const path = value.slice(at + 1);
    if (at < 1 || path === '' || !kinds.includes(kind)) {
      throw new InvalidArgumentError(`--report must be KIND=FILE with KIND one of ${kinds.join(', ')} (got "${value}")`);
    }
    return [...previous, { kind, path }];
  };
}

/** `sha256:` and 64 hexadecimal digits (or the digits alone), in the one form digests are compared in. */
function planDigest(value: string): string {
  const digest = parseDigest(value);
  if (digest === undefined) throw new InvalidArgumentError(`--expect-digest must be a plan's whole digest, sha256: and 64 hexadecimal digits, as plan prints it (got "${value}")`);
  return digest;
}

function maxRps(value: string): number {
  const n = parseMaxRps(value);
  if (n === undefined) throw new InvalidArgumentError(`--max-rps must be ${MAX_RPS_FORM} (got "${value}")`);
  return n;
}

const STATE_HELP = 'state journal: a file, postgres://… or https://… (env ORGFORM_STATE; default .orgform/state.json beside the first config file)';
const STATE_COMMAND_HELP = 'state journal: a file, postgres://… or https://… (env ORGFORM_STATE; default .orgform/state.json)';
/** Plan's and apply's words for what they share: the organisations they cover, and a saved plan. */
const TARGET_HELP = 'only these organisations (repeatable)';
const SHARD_HELP = 'only shard i of n (deterministic by organisation slug)';
const PLANFILE_HELP = 'a plan saved by `orgform plan --out`';
/** Plan's and show's formats: the same plan, shown alike. */
const planFormat = (): Option => new Option('--format <format>', 'output format: text, json, markdown (the pull request comment) or html (the plan page)').choices(['text', 'json', 'markdown', 'html']).default('text');
const PAGE_URL_HELP = "with --format markdown: the plan page's address (http or https), which the comment links for what it leaves out";

/** The long options a command takes (`--auto-approve`, `--no-color`, …), its own and commander's. */
function longOptionNames(command: Command): Set<string> {
  const names = new Set<string>();
  for (const option of command.options) if (option.long !== undefined) names.add(option.long);
  names.add('--help');
  return names;
}

/**
 * A command that also takes Terraform's one-dash spellings of its options, and answers an
 * option only Terraform has with what to do instead (terraform-spellings.ts). Only a command
 * without subcommands rewrites: a group's words are its subcommand's to read.
 */
class OrgformCommand extends Command {
  override createCommand(name?: string): Command {
    return new OrgformCommand(name);
  }

  override parseOptions(args: string[]): ReturnType<Command['parseOptions']> {
    // A group reads only its own options, before the subcommand's name: `orgform -version`, `-help`.
    if (this.commands.length > 0) return super.parseOptions(args.length > 0 && /^-(version|help)$/.test(args[0]!) ? [`-${args[0]}`, ...args.slice(1)] : args);
    // The flags whose next word is their value, whatever it looks like.
    const takesValue = new Set(this.options.filter((o) => o.required || o.optional).flatMap((o) => [o.long, o.short].filter((f): f is string => f !== undefined)));
    return super.parseOptions(acceptTerraformSpellings(args, longOptionNames(this), takesValue));
  }

  unknownOption(flag: string): never {
    const hint = hintForUnknownOption(flag, longOptionNames(this));
    if (hint === undefined) return (Command.prototype as unknown as { unknownOption(this: Command, f: string): never }).unknownOption.call(this, flag);
    this.error(`error: unknown option '${flag}'\n${hint}`, { code: 'commander.unknownOption' });
  }
}

/**
 * A command's module: `settings` holds the groups its entry names (and colour and CI), read before
 * it runs; `command` is the commander command that runs (completion describes the whole program from it).
 */
type RunCommand<G extends SettingGroup> = (options: never, io: CliIO, args: string[], settings: Pick<Settings, G | AlwaysRead>, command: Command) => Promise<ExitCode>;

interface CommandEntry {
  groups: readonly SettingGroup[];
  load(): Promise<{ run: RunCommand<never> }>;
}

/** An entry of COMMANDS: the type check holds that the module's `run` asks for no setting its groups leave out. */
function command<G extends SettingGroup>(groups: readonly G[], load: () => Promise<{ run: RunCommand<G> }>): CommandEntry {
  return { groups, load: load as CommandEntry['load'] };
}

const CONNECTS = ['connection', 'client', 'network'] as const;
const STATE = ['state', 'network'] as const;

/** Each command's module and the settings it reads, loaded only when that command runs (static imports, so that bundlers and vitest see them). */
const COMMANDS: Record<string, CommandEntry> = {
  init: command([...CONNECTS], () => import('../commands/init.js')),
  validate: command(['config'], () => import('../commands/validate.js')),
  plan: command([...CONNECTS, 'planKey', 'state', 'config'], () => import('../commands/plan/command.js')),
  apply: command([...CONNECTS, 'planKey', 'apply', 'state', 'config'], () => import('../commands/apply/command.js')),
  show: command(['planKey'], () => import('../commands/plan/show.js')),
  'force-unlock': command([...STATE], () => import('../commands/state/force-unlock.js')),
  'state-list': command([...STATE], () => import('../commands/state/list.js')),
  'state-pull': command([...STATE], () => import('../commands/state/pull.js')),
  'state-migrate': command([...STATE], () => import('../commands/state/migrate.js')),
  export: command([...CONNECTS, 'config'], () => import('../commands/export/command.js')),
  'slugs-check': command([...CONNECTS], () => import('../commands/slugs/command.js')),
  emulator: command([], () => import('../commands/emulator.js')),
  'emulator-token': command(['emulatorToken'], () => import('../commands/emulator-token.js')),
  completion: command([], () => import('../commands/completion.js')),
};

/** What a command's action does: loads the module and its settings, runs it, keeps its exit code. */
type Load = (name: keyof typeof COMMANDS) => (...actionArgs: unknown[]) => Promise<void>;

/**
 * The program. `env` is the process environment, read only when a command is chosen, for the
 * groups it names; `output` the colour and CI settings main has read from it already.
 */
export function buildProgram(unguarded: CliIO, setExit: (code: ExitCode) => void, env: Env = {}, output: OutputSettings = readOutputSettings(env)): Command {
  // Every command, and commander's own messages, write through the one guard (a no-op outside
  // GitHub Actions, and when the caller has guarded the streams already).
  const io = guardWorkflowCommands(unguarded, output.ci);
  const program = createRoot(io);
  const load: Load = (name) => async (...actionArgs) => {
    const cmd = actionArgs[actionArgs.length - 1] as Command;
    const options = program.opts().color === false ? { ...cmd.opts(), color: false } : cmd.opts();
    const entry = COMMANDS[name];
    if (entry === undefined) throw new Error(`no module for command ${name}`);
    const [mod, { readSettings }] = await Promise.all([entry.load(), import('./settings.js')]);
    const settings = readSettings(env, options, entry.groups, output);
    setExit(await mod.run(options as never, io, cmd.args, settings as never, cmd));
  };
  addInitAndValidate(program, load);
  addPlanAndApply(program, load);
  addStateCommands(program, load);
  addExportAndSlugs(program, load);
  addEmulator(program, load);
  program.command('completion').description('print a completion script for bash, zsh or fish').addArgument(new Argument('<shell>', 'the shell').choices(['bash', 'zsh', 'fish'])).action(load('completion'));
  finishHelp(program);
  return program;
}

function createRoot(io: CliIO): Command {
  return (
    new OrgformCommand('orgform')
      .description('Declarative, Terraform-style provisioning for the Organisations service.')
      .version(VERSION)
      // Also before the command (`orgform --no-color plan`), as NO_COLOR is for every command.
      .option('--no-color', 'no colour, for any command (each command also takes it after its name)')
      .showHelpAfterError('(run with --help for usage)')
      .configureOutput({
        writeOut: (s) => io.stdout.write(s),
        writeErr: (s) => io.stderr.write(s),
      })
      .exitOverride()
  );
}

const NO_COLOR_HELP = 'no colour even on a terminal (also NO_COLOR; FORCE_COLOR=1 forces it on)';

function connection(c: Command): Command {
  return c
    .option('--base-url <url>', 'service base URL (env ORGFORM_BASE_URL)')
    .option('--token-file <path>', 'file holding the API token (else env ORGFORM_TOKEN)')
    .option('--token-command <cmd>', 'shell command printing a fresh token, run at the start and whenever the token runs out (env ORGFORM_TOKEN_COMMAND)')
    .addOption(new Option('--token <token>').hideHelp())
    .option('--max-rps <n>', 'never more requests a second than this (env ORGFORM_MAX_RPS); below it the rate adapts to 429s', maxRps);
}

/**
 * One meaning wherever it is offered: the requests in flight at once, reads and writes together
 * (the callers hold it; the client's connection pool is sized above it). `bounds` says what that comes to for the command.
 */
function parallelism(c: Command, bounds: string): Command {
  return c.option('--parallelism <n>', `at most this many requests in flight at once (${bounds})`, positiveInt('--parallelism'), 10);
}

function files(c: Command): Command {
  return c.option('-f, --file <path>', 'config file or directory (repeatable; default ./orgs.yaml)', collect);
}

function addInitAndValidate(program: Command, load: Load): void {
  parallelism(connection(program.command('init')), 'organisations read by id when exporting')
    .description('set up a repository: orgs.yaml (exported when a service and token are set), the pipeline, .gitignore; then the steps left')
    .option('--gitlab', 'write .gitlab-ci.yml (the GitLab component) instead of the GitHub workflow')
    .option('--no-workflow', 'write no pipeline, only orgs.yaml and .gitignore')
    .option('--no-drift', 'write no scheduled drift workflow (GitHub): no weekly plan kept in an issue')
    .option('--force', 'overwrite orgs.yaml and the pipeline file when they exist')
    .action(load('init'));

  files(program.command('validate'))
    .description('check orgs.yaml files offline: no network at all')
    .option('--report <kind=file>', 'also write the problems as a report: codequality=FILE (GitLab Code Quality); repeatable', reportSpec(['codequality']))
    .action(load('validate'));
}

function addPlanAndApply(program: Command, load: Load): void {
  parallelism(connection(files(program.command('plan'))), 'organisations read by id; the listing is read a page at a time')
    .description('read the current state and show what apply would change; never writes')
    .addOption(planFormat())
    .option('--page-url <url>', PAGE_URL_HELP)
    .option('--out <file>', 'save the plan for `orgform apply PLANFILE` (replaces only an orgform plan)')
    .option('--force', 'let --out replace a file that is not an orgform plan')
    .option('--state <path|url>', STATE_HELP)
    .option('--target <slug>', TARGET_HELP, collect)
    .option('--shard <i/n>', SHARD_HELP)
    .option('--detailed-exitcode', 'exit 0 no changes, 1 error, 2 changes present')
    // plan never asks anything: Terraform's -input=false is taken, so that its scripts run as they are.
    .addOption(new Option('--input <bool>').choices(['true', 'false']).hideHelp())
    .option('--max-changes <n>', 'exit 1 when the plan has more changes than this', nonNegativeInt('--max-changes'))
    .option('--report <kind=file>', 'also write codequality=FILE (GitLab Code Quality) or gitlab-terraform=FILE (merge request widget counts); repeatable', reportSpec(['codequality', 'gitlab-terraform']))
    .option('--no-color', NO_COLOR_HELP)
    .action(load('plan'));

  parallelism(connection(files(program.command('apply'))), 'reads and writes together: this many organisations are changed at a time, one request each')
    .description('apply a fresh plan (asks first on a terminal) or a saved PLANFILE')
    .argument('[planfile]', PLANFILE_HELP)
    .addOption(new Option('--format <format>', 'output format').choices(['text', 'json']).default('text'))
    .option('--auto-approve', 'skip the confirmation')
    .addOption(new Option('--input <bool>', "false: never ask, even on a terminal (Terraform's -input=false); then --auto-approve or a PLANFILE is needed").choices(['true', 'false']))
    .option('--state <path|url>', STATE_HELP)
    .option('--target <slug>', TARGET_HELP, collect)
    .option('--shard <i/n>', SHARD_HELP)
    .option('--max-changes <n>', 'refuse a plan with more changes than this', nonNegativeInt('--max-changes'))
    .option('--expect-digest <digest>', 'apply the fresh plan only if its digest is this one (the reviewed plan\'s, sha256:…); else apply nothing', planDigest)
    .option('--reviewed <file>', 'the reviewed plan (a Markdown plan, or its digest marker), so that a refusal says what differs')
    .option('--report <kind=file>', 'also write html=FILE: the run as one page (every change with its outcome, failures first; the run over time), written at the end however it ends; repeatable', reportSpec(['html']))
    .option('--no-color', NO_COLOR_HELP)
    .action(load('apply'));

  program
    .command('show')
    .description('show a plan saved by `orgform plan --out`, offline: nothing is read from the service')
    .argument('<planfile>', PLANFILE_HELP)
    .addOption(planFormat())
    .option('--page-url <url>', PAGE_URL_HELP)
    .option('--no-color', NO_COLOR_HELP)
    .action(load('show'));
}

function addStateCommands(program: Command, load: Load): void {
  program
    .command('force-unlock')
    .description('break a state lock left behind, by its ID')
    .argument('<id>', 'the lock ID that apply printed')
    .option('--state <path|url>', STATE_COMMAND_HELP)
    .action(load('force-unlock'));

  const state = program.command('state').description('look at the state journal, or move it');
  state.command('list').description('every entry: address, outcome, when, which run').option('--state <path|url>', STATE_COMMAND_HELP).action(load('state-list'));
  state.command('pull').description('the journal as JSON on stdout (the file format, whatever the backend)').option('--state <path|url>', STATE_COMMAND_HELP).action(load('state-pull'));
  state
    .command('migrate')
    .description('copy the journal to another state (or merge several into one), check the copy, leave the sources as they were')
    .option('--state <path|url>', STATE_COMMAND_HELP)
    .option('--from <path|url>', 'a state to copy from, instead of --state; repeat it to merge several (states kept under a name per shard) into one', (value: string, previous: string[] | undefined) => [...(previous ?? []), value])
    .requiredOption('--to <path|url>', 'the state to copy into: a file, postgres://… or https://…')
    .action(load('state-migrate'));
}

function addExportAndSlugs(program: Command, load: Load): void {
  parallelism(connection(program.command('export')), 'billing read by id where the listing leaves it out; the listing is read a page at a time')
    .description('write an orgs.yaml describing the current state of every organisation, or bring an existing one in line (-f)')
    .option('--out <file>', 'write to this file instead of stdout')
    .option('--filter <text>', 'only organisations whose name or slug contains this')
    .option('--force', 'overwrite --out if it exists')
    .option('-f, --file <path>', 'update this orgs.yaml in place of writing a new one, changing only the values that differ (file or directory, repeatable)', collect)
    .option('--diff', 'print the changes to the -f files as a patch for git apply (default file ./orgs.yaml)')
    .option('--write', 'write the changes to the -f files (default file ./orgs.yaml)')
    .option('--detailed-exitcode', 'with -f: exit 0 no differences, 1 error, 2 differences found')
    .action(load('export'));

  const slugs = program.command('slugs').description('slug tools');
  parallelism(connection(slugs.command('check')), 'one slug each')
    .description('check slug availability (SLUG... or - for stdin)')
    .argument('<slugs...>', 'slugs to check, or - to read one per line from stdin')
    .addOption(new Option('--format <format>', 'output format').choices(['text', 'json']).default('text'))
    .action(load('slugs-check'));
}

function addEmulator(program: Command, load: Load): void {
  const emulator = program
    .command('emulator')
    .description('run the local Organisations service emulator')
    .option('--port <n>', 'port (0 for any free one)', nonNegativeInt('--port'), 4010)
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--data <file>', 'seed data (JSON); default examples/emulator-data.json')
    .option('--latency <ms>', 'added to every request', nonNegativeInt('--latency'), 0)
    .option('--slug-delay <ms>', 'delay of the slug availability check', nonNegativeInt('--slug-delay'), 1000)
    .option('--save <file>', 'write the state to this file on exit')
    .addOption(new Option('--profile <name>', 'how the points the interface leaves open are played').choices(PROFILE_NAMES).default('lenient'))
    .option('--point <name=value>', 'set one behaviour point on top of the profile (repeatable; listed below)', pointAssignment)
    .option('--rate-limit <rps[:burst]>', 'token bucket over service requests; 429 beyond it (burst default ceil(rps/4))', rateLimitSpec)
    .addOption(new Option('--rate-limit-headers <style>', 'rate-limit headers on every answer (with --rate-limit)').choices(['none', 'ratelimit', 'x-ratelimit']).default('none'))
    .option('--quota <requests:seconds>', 'a fixed-window quota over service requests (5000:86400: a daily one), its reset on every answer; 429 beyond it', quotaSpec)
    .addOption(
      new Option('--quota-headers <style>', 'how answers carry the quota (with --quota): RateLimit-Policy and RateLimit, or X-RateLimit-* with an epoch reset')
        .choices(['ratelimit', 'x-ratelimit'])
        .default('ratelimit'),
    )
    .option('--token-lifetime-requests <n>', 'every token expires after this many service requests', positiveInt('--token-lifetime-requests'))
    .option('--token-lifetime-seconds <n>', 'every token expires this many seconds after issue (seed tokens: after start)', positiveInt('--token-lifetime-seconds'))
    .option('--renew-every <n>', 'a billing system alongside: every n service requests, one subscription is renewed (new subscriptionId and customerId)', positiveInt('--renew-every'))
    .addHelpText('after', () => describeBehaviourHelp())
    .action(load('emulator'));
  emulator
    .command('token')
    .description('print a fresh token from a running emulator, for ORGFORM_TOKEN_COMMAND')
    .argument('[url]', 'the emulator (default: env ORGFORM_BASE_URL)')
    .option('--user <token|email>', 'the user it is for, by a token or e-mail address of theirs (env ORGFORM_EMULATOR_USER; default the first user)')
    .action(load('emulator-token'));
}

/**
 * Each command's examples and exit codes after its options; and --no-color on every command,
 * whether it colours anything or not: a wrapper script or an alias can then pass it to all of them
 * (plan, apply and show declare theirs above).
 */
function finishHelp(program: Command): void {
  const withExamples = (command: Command, path: string): void => {
    command.addHelpText('after', commandHelpText(path));
    for (const sub of command.commands) withExamples(sub, path === '' ? sub.name() : `${path} ${sub.name()}`);
  };
  withExamples(program, '');
  const leaves = (c: Command): Command[] => (c.commands.length === 0 ? [c] : c.commands.flatMap(leaves));
  for (const command of leaves(program)) {
    if (!command.options.some((o) => o.long === '--no-color')) command.option('--no-color', NO_COLOR_HELP);
  }
}
