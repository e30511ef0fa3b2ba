/**
 * `orgform completion bash|zsh|fish`: prints a shell completion script, generated from the
 * commander program itself, so that every command and option is offered as the grammar has it
 * (no list to keep in step by hand). The script is static: completing never starts node.
 */
import type { Command } from 'commander';
import type { CliIO, ExitCode } from '../cli-io.js';

export const SHELLS = ['bash', 'zsh', 'fish'] as const;
export type Shell = (typeof SHELLS)[number];

export interface CompletionOption {
  /** `--format`, `-f`: what the shell completes. */
  flags: string[];
  description: string;
  /** The option takes a value: the next word is completed with its choices, else as a file. */
  takesValue: boolean;
  choices: readonly string[];
}

export interface CompletionCommand {
  /** The words below `orgform`, space-separated; '' for orgform itself. */
  path: string;
  name: string;
  description: string;
  subcommands: CompletionCommand[];
  options: CompletionOption[];
  /** The values its first argument takes, when commander lists them (`completion <shell>`); else files. */
  argumentChoices: readonly string[];
}

/** The commands and options a shell should offer, read from the program as commander holds it. */
export function describeCommands(command: Command, path = ''): CompletionCommand {
  const options: CompletionOption[] = command.options
    .filter((o) => !o.hidden)
    .map((o) => ({
      flags: [o.short, o.long].filter((f): f is string => f !== undefined),
      description: o.description,
      takesValue: o.required || o.optional,
      choices: o.argChoices ?? [],
    }));
  options.push({ flags: ['-h', '--help'], description: 'display help for command', takesValue: false, choices: [] });
  return {
    path,
    name: command.name(),
    description: command.description(),
    subcommands: command.commands.map((sub) => describeCommands(sub, path === '' ? sub.name() : `${path} ${sub.name()}`)),
    options,
    argumentChoices: command.registeredArguments[0]?.argChoices ?? [],
  };
}

function all(root: CompletionCommand): CompletionCommand[] {
  return [root, ...root.subcommands.flatMap(all)];
}

/** A word for a single-quoted shell string (bash, zsh and fish alike): ' closes, is escaped, reopens. */
function quote(text: string): string {
  return `'${text.replaceAll("'", "'\\''")}'`;
}

/** One line of description, for zsh and fish: at most 80 characters. */
function summary(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > 80 ? `${line.slice(0, 79)}…` : line;
}

/**
 * bash and zsh share the logic: walk the words typed so far to the deepest command they name,
 * then offer an option's choices (or files) after an option that takes a value, options after a
 * `-`, the subcommands of a group, and files otherwise (a saved plan, a config file).
 */
function pathCases(root: CompletionCommand): string {
  return all(root)
    .filter((c) => c.path !== '')
    .map((c) => quote(c.path))
    .join('|');
}

function valueCases(root: CompletionCommand, choices: (words: readonly string[]) => string, files: string): string[] {
  const lines: string[] = [];
  for (const command of all(root)) {
    for (const option of command.options.filter((o) => o.takesValue)) {
      const patterns = option.flags.map((flag) => quote(`${command.path}:${flag}`)).join('|');
      lines.push(`    ${patterns}) ${option.choices.length > 0 ? choices(option.choices) : files}; return ;;`);
    }
  }
  return lines;
}


/** Both shells walk the words typed so far the same way, matching the command path they spell. */
const CASE_PATH = 'case "${cmdpath:+$cmdpath }$word" in';
export function bashScript(root: CompletionCommand): string {
  const words = (list: readonly string[]) => `COMPREPLY=($(compgen -W ${quote(list.join(' '))} -- "$cur"))`;
  // One name a line, read into the array as it is: `($(compgen -f …))` split a name at its spaces
  // (my plan.json came as two) and expanded a name such as * into every file. bash 3.2 has `read -a`.
  const files = `IFS=$'\\n' read -r -d '' -a COMPREPLY < <(compgen -f -- "$cur")`;
  return [
    '# orgform completion for bash. Load it with: source <(orgform completion bash)',
    '# or save it as ~/.local/share/bash-completion/completions/orgform',
    '_orgform() {',
    '  local cur="${COMP_WORDS[COMP_CWORD]}" prev="" cmdpath="" word i',
    '  (( COMP_CWORD > 0 )) && prev="${COMP_WORDS[COMP_CWORD-1]}"',
    '  for (( i = 1; i < COMP_CWORD; i++ )); do',
    '    word="${COMP_WORDS[i]}"',
    `    ${CASE_PATH}`,
    `      ${pathCases(root)}) cmdpath="\${cmdpath:+$cmdpath }$word" ;;`,
    '    esac',
    '  done',
    '  case "$cmdpath:$prev" in',
    ...valueCases(root, words, files),
    '  esac',
    '  local subcommands="" options=""',
    '  case "$cmdpath" in',
    ...all(root).map(
      (c) => `    ${quote(c.path)}) subcommands=${quote([...c.subcommands.map((s) => s.name), ...c.argumentChoices].join(' '))}; options=${quote(c.options.flatMap((o) => o.flags).join(' '))} ;;`,
    ),
    '  esac',
    '  if [[ "$cur" == -* ]]; then',
    '    COMPREPLY=($(compgen -W "$options" -- "$cur"))',
    '  elif [[ -n "$subcommands" ]]; then',
    '    COMPREPLY=($(compgen -W "$subcommands" -- "$cur"))',
    '  else',
    `    ${files}`,
    '  fi',
    '}',
    'complete -o filenames -F _orgform orgform',
    '',
  ].join('\n');
}

export function zshScript(root: CompletionCommand): string {
  const words = (list: readonly string[]) => `compadd -- ${list.map(quote).join(' ')}`;
  // zsh's `path` is tied to PATH, hence cmdpath; `words` and `CURRENT` are the completion system's.
  return [
    '#compdef orgform',
    '# orgform completion for zsh. Save it as _orgform in a directory on $fpath, or load it with:',
    '# source <(orgform completion zsh)   (after compinit)',
    '_orgform() {',
    '  local cur="${words[CURRENT]}" prev="${words[CURRENT-1]}" cmdpath="" word i',
    '  local -a subcommands options',
    '  for (( i = 2; i < CURRENT; i++ )); do',
    '    word="${words[i]}"',
    `    ${CASE_PATH}`,
    `      (${pathCases(root)}) cmdpath="\${cmdpath:+$cmdpath }$word" ;;`,
    '    esac',
    '  done',
    '  case "$cmdpath:$prev" in',
    ...valueCases(root, words, '_files').map((line) => line.replace(/^ {4}/, '    (')),
    '  esac',
    '  case "$cmdpath" in',
    ...all(root).map(
      (c) =>
        `    (${quote(c.path)}) subcommands=(${[...c.subcommands.map((s) => `${s.name}:${summary(s.description)}`), ...c.argumentChoices].map(quote).join(' ')}); options=(${c.options.flatMap((o) => o.flags).map(quote).join(' ')}) ;;`,
    ),
    '  esac',
    '  if [[ "$cur" == -* ]]; then',
    '    compadd -- "${options[@]}"',
    '  elif (( ${#subcommands} )); then',
    "    _describe 'command' subcommands",
    '  else',
    '    _files',
    '  fi',
    '}',
    'if [[ "${funcstack[1]}" == _orgform ]]; then _orgform "$@"; else compdef _orgform orgform; fi',
    '',
  ].join('\n');
}

export function fishScript(root: CompletionCommand): string {
  const lines = [
    '# orgform completion for fish. Save it as ~/.config/fish/completions/orgform.fish, or load it with:',
    '# orgform completion fish | source',
    '# The command the words typed so far name: "" for orgform itself, "state list"…',
    'function __orgform_path',
    '    set -l cmdpath ""',
    '    for word in (commandline -opc)[2..-1]',
    '        set -l next (string trim -- "$cmdpath $word")',
    '        switch $next',
    `            case ${all(root).filter((c) => c.path !== '').map((c) => quote(c.path)).join(' ')}`,
    '                set cmdpath $next',
    '        end',
    '    end',
    '    echo $cmdpath',
    'end',
    'function __orgform_at',
    '    set -l cmdpath (__orgform_path)',
    '    test "$cmdpath" = "$argv[1]"',
    'end',
    'complete -c orgform -f',
  ];
  for (const command of all(root)) {
    const at = `-n ${quote(`__orgform_at ${quote(command.path)}`)}`;
    for (const sub of command.subcommands) lines.push(`complete -c orgform ${at} -a ${quote(sub.name)} -d ${quote(summary(sub.description))}`);
    for (const option of command.options) {
      const flags = option.flags.map((flag) => (flag.startsWith('--') ? `-l ${flag.slice(2)}` : `-s ${flag.slice(1)}`)).join(' ');
      const value = !option.takesValue ? '' : option.choices.length > 0 ? ` -x -a ${quote(option.choices.join(' '))}` : ' -r -F';
      lines.push(`complete -c orgform ${at} ${flags}${value} -d ${quote(summary(option.description))}`);
    }
    for (const choice of command.argumentChoices) lines.push(`complete -c orgform ${at} -a ${quote(choice)}`);
    // A command without subcommands takes files as its arguments (a saved plan, slugs from -).
    if (command.subcommands.length === 0 && command.argumentChoices.length === 0) lines.push(`complete -c orgform ${at} -F`);
  }
  return `${lines.join('\n')}\n`;
}

const SCRIPTS: Record<Shell, (root: CompletionCommand) => string> = { bash: bashScript, zsh: zshScript, fish: fishScript };

export async function run(_options: Record<string, unknown>, io: CliIO, args: string[], _settings: unknown, command: Command): Promise<ExitCode> {
  const shell = args[0] as Shell;
  // The program as the user runs it, handed down by cli/program.ts (a command imports nothing above it).
  let program = command;
  while (program.parent !== null) program = program.parent;
  const root = describeCommands(program);
  io.stdout.write(SCRIPTS[shell](root));
  return 0;
}
