/**
 * What `orgform COMMAND --help` shows after the options: a few examples and the exit codes, the
 * way people look them up at the terminal (README.md's "Exit codes" table says the same). No
 * imports, so that `--help` stays as fast as commander alone.
 */

interface CommandHelp {
  /** The command line and what it does. */
  examples: ReadonlyArray<readonly [string, string]>;
  /** Exit code and when; a usage error (unknown option, bad value) is 1 for every command. */
  exitCodes: ReadonlyArray<readonly [number, string]>;
}

const OK_OR_ERROR = (done: string): CommandHelp['exitCodes'] => [
  [0, done],
  [1, 'an error'],
];

/** Keyed by the command's path below `orgform`, such as `slugs check`; '' is orgform itself. */
export const COMMAND_HELP: Readonly<Record<string, CommandHelp>> = {
  '': {
    examples: [
      ['orgform validate', 'check ./orgs.yaml offline'],
      ['orgform plan --out plan.bin', 'show what would change, and save that plan'],
      ['orgform apply plan.bin', 'apply the saved plan, refused if anything it was based on changed'],
    ],
    exitCodes: [
      [0, 'success'],
      [1, 'an error'],
      [2, 'changes present (plan --detailed-exitcode) or differences found (export --detailed-exitcode)'],
    ],
  },
  init: {
    examples: [
      ['orgform init', 'orgs.yaml (exported when ORGFORM_BASE_URL and a token are set), the GitHub workflow, .gitignore lines'],
      ['orgform init --gitlab', 'the same with the GitLab CI/CD configuration'],
      ['orgform init --no-workflow --force', 'orgs.yaml and .gitignore only, replacing an orgs.yaml'],
    ],
    exitCodes: [
      [0, 'the files were written; the steps left are printed'],
      [1, 'an error: a file exists (without --force), or the export failed; nothing was written'],
    ],
  },
  validate: {
    examples: [
      ['orgform validate', 'check ./orgs.yaml; every problem as FILE:LINE:COL'],
      ['orgform validate -f orgs/ -f shared.yaml', 'a directory of *.yaml files and one more file'],
      ['orgform validate --report codequality=gl-code-quality-report.json', 'the problems as a GitLab Code Quality report too'],
    ],
    exitCodes: [
      [0, 'every file is valid (warnings allowed)'],
      [1, 'a problem in a file'],
    ],
  },
  plan: {
    examples: [
      ['orgform plan', 'what apply would change in ./orgs.yaml'],
      ['orgform plan --out plan.bin --detailed-exitcode', 'save the plan; exit 2 when there are changes'],
      ['orgform plan --format markdown --max-changes 50 > plan.md', 'a pull request comment, failing above 50 changes'],
    ],
    exitCodes: [
      [0, 'the plan was made (with --detailed-exitcode: and there are no changes)'],
      [1, 'an error, or some organisations could not be read (the plan is incomplete), or over --max-changes'],
      [2, 'changes present, only with --detailed-exitcode'],
    ],
  },
  apply: {
    examples: [
      ['orgform apply', 'plan, ask for "yes" on a terminal, apply'],
      ['orgform apply plan.bin', 'apply a saved plan without asking'],
      ['orgform apply --auto-approve --max-changes 50 --parallelism 20', 'in a pipeline: no question, refused above 50 changes'],
    ],
    exitCodes: [
      [0, 'every change applied, or nothing to do'],
      [1, 'an error; a change failed or was stale; interrupted; refused (stale plan, over --max-changes, no confirmation possible)'],
    ],
  },
  show: {
    examples: [
      ['orgform show plan.bin', 'the saved plan as plan showed it, offline'],
      ['orgform show plan.bin --format markdown > plan.md', 'a pull request comment made from the very plan apply will be given'],
      ['orgform show plan.bin --format json', 'the versioned JSON document'],
    ],
    exitCodes: [
      [0, 'the plan was shown'],
      [1, 'an error: not a saved plan, edited or truncated, or not signed with ORGFORM_PLAN_KEY'],
    ],
  },
  'force-unlock': {
    examples: [
      ['orgform force-unlock 5d1c0b9e', 'break the lock of the default state, if its ID is this one'],
      ["orgform force-unlock 5d1c0b9e --state 'postgres://ci@db/ops?state=prod'", 'the same for a remote state'],
    ],
    exitCodes: [
      [0, 'the lock was broken'],
      [1, 'an error: no lock, another ID, the state cannot be reached'],
    ],
  },
  state: {
    examples: [
      ['orgform state list', 'every entry of the journal'],
      ['orgform state pull > state.json', 'the journal as a file'],
      ["orgform state migrate --to 'postgres://ci@db/ops?state=prod'", 'move the journal to PostgreSQL'],
    ],
    exitCodes: OK_OR_ERROR('done'),
  },
  'state list': {
    examples: [
      ['orgform state list', 'the default journal, .orgform/state.json'],
      ['orgform state list --state https://gitlab.example.com/api/v4/projects/42/terraform/state/orgform', 'a remote state'],
    ],
    exitCodes: OK_OR_ERROR('the entries were listed'),
  },
  'state pull': {
    examples: [
      ['orgform state pull > state.json', 'the journal in the file format, whatever the backend'],
      ["orgform state pull --state 'postgres://ci@db/ops?state=prod'", 'from PostgreSQL'],
    ],
    exitCodes: OK_OR_ERROR('the journal was printed'),
  },
  'state migrate': {
    examples: [
      ["orgform state migrate --to 'postgres://ci@db/ops?state=prod'", 'copy .orgform/state.json to PostgreSQL, and check the copy'],
      ['orgform state migrate --state old.json --to new.json', 'from one file to another'],
    ],
    exitCodes: OK_OR_ERROR('every entry was copied and checked'),
  },
  export: {
    examples: [
      ['orgform export --out orgs.yaml', 'an orgs.yaml of every organisation you belong to'],
      ['orgform export -f orgs.yaml --diff > drift.patch', 'bring your own file in line with the service, as a patch'],
      ['orgform export -f orgs.yaml --write --detailed-exitcode', 'change the file in place; exit 2 when anything differed'],
    ],
    exitCodes: [
      [0, 'the file was written; with -f, the files were compared (with --detailed-exitcode: and nothing differs)'],
      [1, 'an error; --out exists and no --force; a -f file is invalid'],
      [2, 'something differs between the -f files and the service, only with --detailed-exitcode'],
    ],
  },
  slugs: {
    examples: [
      ['orgform slugs check new-team other-team', 'are these slugs available?'],
      ['orgform slugs check - < slugs.txt', 'one slug per line from a file'],
    ],
    exitCodes: [
      [0, 'every slug is available'],
      [1, 'a slug is unavailable or invalid, or could not be checked'],
    ],
  },
  'slugs check': {
    examples: [
      ['orgform slugs check new-team other-team', 'a table: slug, available, reasons'],
      ['orgform slugs check - --format json < slugs.txt', 'one slug per line from stdin, the answer as JSON'],
      ['orgform slugs check --parallelism 20 - < slugs.txt', '20 checks at a time (each takes about a second)'],
    ],
    exitCodes: [
      [0, 'every slug is available'],
      [1, 'a slug is unavailable or invalid, or could not be checked'],
    ],
  },
  emulator: {
    examples: [
      ['orgform emulator', 'the service on http://127.0.0.1:4010, token demo-token'],
      ['orgform emulator --data examples/bulk/emulator-data.json', 'the service that examples/bulk describes'],
      ['orgform emulator --profile strict --rate-limit 40:10', 'the least convenient answers, and a rate limit'],
    ],
    exitCodes: [
      [0, 'stopped with Ctrl+C or SIGTERM'],
      [1, 'an error: the data cannot be read, the port is taken'],
    ],
  },
  'emulator token': {
    examples: [
      ['orgform emulator token http://127.0.0.1:4010', 'a fresh token of the first user'],
      ['orgform emulator token --user bob@globex.example', "one of bob's, from the emulator at ORGFORM_BASE_URL"],
    ],
    exitCodes: OK_OR_ERROR('the token was printed'),
  },
  completion: {
    examples: [
      ['orgform completion bash > ~/.local/share/bash-completion/completions/orgform', 'bash'],
      ['orgform completion zsh > "${fpath[1]}/_orgform"', 'zsh (any directory on $fpath)'],
      ['orgform completion fish > ~/.config/fish/completions/orgform.fish', 'fish'],
    ],
    exitCodes: OK_OR_ERROR('the script was printed'),
  },
};

/** The text after a command's options; empty for a command without an entry. */
export function commandHelpText(path: string): string {
  const help = COMMAND_HELP[path];
  if (help === undefined) return '';
  const examples = help.examples.map(([line, what]) => `  $ ${line}\n      ${what}`);
  const codes = help.exitCodes.map(([code, when]) => `  ${code}  ${when}`);
  return `\nExamples:\n${examples.join('\n')}\n\nExit codes:\n${codes.join('\n')}\n`;
}
