/**
 * The command-line grammar. Only commander is imported here; each command's module is loaded
 * when that command is chosen, so that `orgform --help` starts about as fast as a bare node.
 */
import { Command, InvalidArgumentError, Option } from 'commander';
import type { CliIO, ExitCode } from './io.js';

const VERSION = '0.1.0';

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

type CommandModule = { run(options: never, io: CliIO, args: string[]): Promise<ExitCode> };

/** Each command's module, loaded only when that command runs (a static map, so bundlers and vitest can see it). */
const COMMANDS: Record<string, () => Promise<CommandModule>> = {
  validate: () => import('./commands/validate.js'),
  plan: () => import('./commands/plan.js'),
  apply: () => import('./commands/apply.js'),
  'force-unlock': () => import('./commands/force-unlock.js'),
  export: () => import('./commands/export.js'),
  'slugs-check': () => import('./commands/slugs-check.js'),
  emulator: () => import('./commands/emulator.js'),
};

export function buildProgram(io: CliIO, setExit: (code: ExitCode) => void): Command {
  const program = new Command('orgform')
    .description('Declarative, Terraform-style provisioning for the Organisations service.')
    .version(VERSION)
    .showHelpAfterError('(run with --help for usage)')
    .configureOutput({
      writeOut: (s) => io.stdout.write(s),
      writeErr: (s) => io.stderr.write(s),
    })
    .exitOverride();

  const load = (name: string) => async (...actionArgs: unknown[]) => {
    const cmd = actionArgs[actionArgs.length - 1] as Command;
    const options = cmd.opts();
    const load = COMMANDS[name];
    if (load === undefined) throw new Error(`no module for command ${name}`);
    const mod = await load();
    setExit(await mod.run(options as never, io, cmd.args));
  };

  const connection = (c: Command) =>
    c
      .option('--base-url <url>', 'service base URL (env ORGFORM_BASE_URL)')
      .option('--token-file <path>', 'file holding the API token (else env ORGFORM_TOKEN)')
      .addOption(new Option('--token <token>').hideHelp())
      .option('--parallelism <n>', 'requests in flight at once', positiveInt('--parallelism'), 10);

  const files = (c: Command) =>
    c.option('-f, --file <path>', 'config file or directory (repeatable; default ./orgs.yaml)', collect);

  files(program.command('validate'))
    .description('check orgs.yaml files offline: no network at all')
    .action(load('validate'));

  connection(files(program.command('plan')))
    .description('read the current state and show what apply would change; never writes')
    .addOption(new Option('--format <format>', 'output format').choices(['text', 'json', 'markdown']).default('text'))
    .option('--out <file>', 'save the plan for `orgform apply PLANFILE`')
    .option('--state <path>', 'state journal (default .orgform/state.json beside the first config file)')
    .option('--target <slug>', 'only these organisations (repeatable)', collect)
    .option('--shard <i/n>', 'only shard i of n (deterministic by organisation slug)')
    .option('--detailed-exitcode', 'exit 0 no changes, 1 error, 2 changes present')
    .option('--max-changes <n>', 'exit 1 when the plan has more changes than this', nonNegativeInt('--max-changes'))
    .option('--no-color', 'no colour even on a terminal')
    .action(load('plan'));

  connection(files(program.command('apply')))
    .description('apply a fresh plan (asks first on a terminal) or a saved PLANFILE')
    .argument('[planfile]', 'a plan saved by `orgform plan --out`')
    .addOption(new Option('--format <format>', 'output format').choices(['text', 'json']).default('text'))
    .option('--auto-approve', 'skip the confirmation')
    .option('--state <path>', 'state journal (default .orgform/state.json beside the first config file)')
    .option('--target <slug>', 'only these organisations (repeatable)', collect)
    .option('--shard <i/n>', 'only shard i of n (deterministic by organisation slug)')
    .option('--max-changes <n>', 'refuse a plan with more changes than this', nonNegativeInt('--max-changes'))
    .option('--no-color', 'no colour even on a terminal')
    .action(load('apply'));

  program
    .command('force-unlock')
    .description('break a state lock left behind, by its ID')
    .argument('<id>', 'the lock ID that apply printed')
    .option('--state <path>', 'state journal', '.orgform/state.json')
    .action(load('force-unlock'));

  connection(program.command('export'))
    .description('write an orgs.yaml describing the current state of every organisation')
    .option('--out <file>', 'write to this file instead of stdout')
    .option('--filter <text>', 'only organisations whose name or slug contains this')
    .option('--force', 'overwrite --out if it exists')
    .action(load('export'));

  const slugs = program.command('slugs').description('slug tools');
  connection(slugs.command('check'))
    .description('check slug availability (SLUG... or - for stdin)')
    .argument('<slugs...>', 'slugs to check, or - to read one per line from stdin')
    .addOption(new Option('--format <format>', 'output format').choices(['text', 'json']).default('text'))
    .action(load('slugs-check'));

  program
    .command('emulator')
    .description('run the local Organisations service emulator')
    .option('--port <n>', 'port (0 for any free one)', nonNegativeInt('--port'), 4010)
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--data <file>', 'seed data (JSON); default examples/emulator-data.json')
    .option('--latency <ms>', 'added to every request', nonNegativeInt('--latency'), 0)
    .option('--slug-delay <ms>', 'delay of the slug availability check', nonNegativeInt('--slug-delay'), 1000)
    .option('--save <file>', 'write the state to this file on exit')
    .action(load('emulator'));

  return program;
}

