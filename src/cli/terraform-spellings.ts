/**
 * Terraform's spellings, for people whose fingers and scripts use them. Terraform writes its long
 * options with one dash (`-auto-approve`, `-out=plan.bin`); orgform, like most command-line tools,
 * with two. Where the command has the option, the one-dash spelling is taken as the two-dash one
 * (a switch's `=true` and `=false` as on and off, as Terraform reads them):
 * a script written for Terraform then runs unchanged, and nothing else could be meant (without
 * this, `-out=plan.bin` would be read as `-o` with a value, and `-file=x` as `-f ile=x`). Options
 * only Terraform has get a hint about what orgform does instead. Dependency-free: it is loaded
 * at start-up, with the grammar.
 */

const NO_SUCH_OPTION = 'orgform has no such option';

/** Terraform options with no orgform counterpart of that name, and what to do instead. */
const TERRAFORM_ONLY: Readonly<Record<string, string>> = {
  input: 'orgform asks for confirmation only on a terminal and never reads other input; in a script pass --auto-approve, or apply a saved plan',
  json: 'pass --format json',
  lock: 'orgform always locks its state while it applies; a lock left behind is broken with `orgform force-unlock ID`',
  'lock-timeout': 'orgform does not wait for a state lock; a lock left behind is broken with `orgform force-unlock ID`',
  refresh: 'orgform always reads the current state before it plans',
  'refresh-only': 'orgform has no refresh-only mode: `orgform export -f orgs.yaml --diff` shows how the service differs from orgs.yaml',
  var: 'orgs.yaml has no variables passed on the command line',
  'var-file': 'orgs.yaml has no variable files; pass several files or a directory with -f',
  chdir: 'run orgform from that directory, or pass its files with -f DIR',
  'compact-warnings': NO_SUCH_OPTION,
  destroy: 'orgform never deletes organisations',
  replace: NO_SUCH_OPTION,
};

/** A one-dash word of two letters or more, with or without `=VALUE`: `-auto-approve`, `-out=plan.bin`. */
const ONE_DASH = /^-([a-z][a-z0-9]*(?:-[a-z0-9]+)*)(=.*)?$/s;

/**
 * `args` with each one-dash spelling of an option in `longNames` (`--auto-approve`, …) given its
 * second dash. Words after `--` are operands, and stay as they are; so does a short option with its
 * value stuck to it (`-forgs.yaml`), whose name is not a long option's, and the value of an option
 * in `takesValue` (`--filter -force` filters by "-force").
 */
export function acceptTerraformSpellings(args: readonly string[], longNames: ReadonlySet<string>, takesValue: ReadonlySet<string> = new Set()): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i += 1) {
    const arg = args[i]!;
    if (arg === '--') {
      out.push(...args.slice(i));
      break;
    }
    const previous = out.at(-1);
    const match = ONE_DASH.exec(arg);
    const isValue = previous !== undefined && takesValue.has(previous);
    const long = match ? `--${match[1]}` : '';
    if (isValue || !match || match[1]!.length < 2 || !longNames.has(long)) {
      out.push(arg);
      continue;
    }
    // Terraform's switches also take =true and =false (`-auto-approve=true`): on, or left off.
    const given = match[2]?.slice(1);
    if (!takesValue.has(long) && (given === 'true' || given === 'false')) {
      if (given === 'true') out.push(long);
      continue;
    }
    out.push(`-${arg}`);
  }
  return out;
}

/** What to say about an option the command does not have, when it looks like Terraform's; else undefined. */
export function hintForUnknownOption(flag: string, longNames: ReadonlySet<string>): string | undefined {
  const match = /^--?([a-z][a-z0-9-]*)(=.*)?$/s.exec(flag);
  if (!match) return undefined;
  const name = match[1]!;
  const instead = TERRAFORM_ONLY[name];
  if (instead !== undefined) return `-${name} is Terraform's: ${instead}.`;
  if (flag.startsWith('--') || name.length < 2) return undefined;
  // One dash and a long name the command does not have: orgform's options take two dashes.
  const options = [...longNames].filter((n) => n !== '--help' && n !== '--version').join(', ');
  return `orgform's long options take two dashes${options === '' ? '' : `; this command has ${options}`}.`;
}
