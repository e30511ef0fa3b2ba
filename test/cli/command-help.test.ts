import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { COMMAND_HELP, commandHelpText } from '../../src/cli/command-help.js';
import type { CliIO } from '../../src/cli-io.js';
import { buildProgram } from '../../src/cli/program.js';
import { runCli } from '../support/run-cli.js';

const program = buildProgram({ stdout: { write: () => true }, stderr: { write: () => true }, env: {}, cwd: '.' } as unknown as CliIO, () => {});

/** Every command of the program with its path below `orgform` ('' for orgform itself). */
function commands(command: Command = program, path = ''): Array<[string, Command]> {
  return [[path, command], ...command.commands.flatMap((sub) => commands(sub, path === '' ? sub.name() : `${path} ${sub.name()}`))];
}
const ALL = commands();

/** The words of an example's command line before any redirection, quotes removed. */
function words(line: string): string[] {
  return (line.split(/ [<>] /)[0]!.match(/'[^']*'|"[^"]*"|\S+/g) ?? []).map((w) => w.replace(/^['"]|['"]$/g, ''));
}

describe('orgform COMMAND --help', () => {
  it.each(ALL.map(([path]) => [path === '' ? 'orgform' : path]))('%s shows examples and exit codes after its options', async (name) => {
    const path = name === 'orgform' ? [] : name.split(' ');
    const result = await runCli([...path, '--help'], { cwd: '.' });
    expect(result.code).toBe(0);
    const examples = result.stdout.split('\nExamples:\n')[1]?.split('\n\nExit codes:\n') ?? [];
    expect(examples[0]?.match(/^ {2}\$ orgform .*$/gm)?.length).toBeGreaterThanOrEqual(2);
    expect(examples[1]).toMatch(/^ {2}0 {2}\S/);
    expect(examples[1]).toMatch(/^ {2}1 {2}\S/m);
  });

  it('has an entry for every command and none for a command that does not exist', () => {
    expect(Object.keys(COMMAND_HELP).sort()).toEqual(ALL.map(([path]) => path).sort());
  });

  it.each(Object.entries(COMMAND_HELP).flatMap(([path, help]) => help.examples.map(([line]) => [path, line] as const)))('%s: "%s" names the command and only options it has', (path, line) => {
    const [orgform, ...rest] = words(line);
    expect(orgform).toBe('orgform');
    // The command the line runs: the subcommands its first words name.
    let target = program;
    const names: string[] = [];
    for (const word of rest) {
      const sub = target.commands.find((c) => c.name() === word);
      if (sub === undefined) break;
      target = sub;
      names.push(word);
    }
    expect(names.join(' ').startsWith(path)).toBe(true);
    // It runs something: a command of its own, not a group (the emulator is both: it runs, and has `token`).
    expect(target.commands.length === 0 || (target as unknown as { _actionHandler: unknown })._actionHandler !== null).toBe(true);
    const known = new Set(target.options.flatMap((o) => [o.long, o.short]).filter(Boolean));
    for (const word of rest.filter((w) => /^-./.test(w))) expect(known, `${word} in "${line}"`).toContain(word);
  });

  it('says what README.md\'s "Exit codes" table says, command by command', () => {
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    const table = readme.split('## Exit codes\n')[1]!.trimStart().split('\n\n')[0]!.split('\n').slice(2);
    const documented = new Map(table.map((row) => {
      const [names, ...cells] = row.split(' | ').map((c) => c.replace(/^\| |\|$/g, '').trim());
      return [names!, cells.flatMap((cell, code) => (cell === '–' ? [] : [code]))] as const;
    }));
    for (const [names, codes] of documented) {
      for (const name of names.match(/`[^`]+`/g)!.map((n) => n.slice(1, -1))) {
        expect(COMMAND_HELP[name]?.exitCodes.map(([code]) => code), name).toEqual(codes);
      }
    }
    expect(documented.size).toBeGreaterThanOrEqual(6);
  });

  it('writes nothing for a command without an entry', () => {
    expect(commandHelpText('no such command')).toBe('');
  });
});
