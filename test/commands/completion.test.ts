/**
 * `orgform completion SHELL` prints a script that the shell itself loads and answers from: run in
 * real bash, zsh and fish (`.ci/run` installs the last two), and held to the commander program,
 * so that a command or option added to the grammar is offered without touching the script.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import type { CliIO } from '../../src/cli-io.js';
import { buildProgram } from '../../src/cli/program.js';
import { runProcess } from '../support/run-process.js';
import { runCli } from '../support/run-cli.js';
import { makeWorkspace } from '../support/workspace.js';

const program = buildProgram({ stdout: { write: () => true }, stderr: { write: () => true }, env: {}, cwd: '.' } as unknown as CliIO, () => {});
const command = (path: string): Command => path.split(' ').reduce((c, name) => c.commands.find((s) => s.name() === name)!, program);
const flags = (c: Command) => [...c.options.filter((o) => !o.hidden).flatMap((o) => [o.short, o.long].filter((f): f is string => f !== undefined)), '-h', '--help'];
const ENV = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: '/nonexistent' };

async function script(shell: string): Promise<string> {
  const result = await runCli(['completion', shell], { cwd: '.' });
  expect(result).toMatchObject({ code: 0, stderr: '' });
  const file = join(await makeWorkspace(), `orgform.${shell}`);
  await writeFile(file, result.stdout);
  return file;
}

/** What bash's completion function offers for the words typed, the last one being completed. */
async function bash(file: string, ...typed: string[]): Promise<string[]> {
  return bashIn(undefined, file, ...typed);
}

async function bashIn(cwd: string | undefined, file: string, ...typed: string[]): Promise<string[]> {
  const words = ['orgform', ...typed].map((w) => `'${w}'`).join(' ');
  const result = await runProcess('bash', ['-c', `source '${file}'; COMP_WORDS=(${words}); COMP_CWORD=${typed.length}; _orgform; printf '%s\\n' "\${COMPREPLY[@]}"`], cwd, ENV);
  expect(result.stderr).toBe('');
  return result.stdout.split('\n').filter(Boolean);
}

/** What zsh's completion function offers, the completion system's builtins standing in as recorders. */
async function zsh(file: string, ...typed: string[]): Promise<string[]> {
  const words = ['orgform', ...typed].map((w) => `'${w}'`).join(' ');
  const stubs = [
    'compadd() { [[ $1 == -- ]] && shift; print -rl -- "$@"; }',
    '_describe() { local -a pairs; pairs=("${(@P)2}"); print -rl -- "${pairs[@]%%:*}"; }',
    '_files() { print -r -- "(files)"; }',
    'compdef() { :; }',
  ].join('\n');
  const result = await runProcess('zsh', ['-f', '-c', `${stubs}\nsource '${file}'\nwords=(${words}); CURRENT=${typed.length + 1}; _orgform`], undefined, ENV);
  expect(result.stderr).toBe('');
  return result.stdout.split('\n').filter(Boolean);
}

/** What fish completes for the command line, through fish's own `complete -C`. */
async function fish(file: string, line: string): Promise<string[]> {
  const result = await runProcess('fish', ['--no-config', '-c', `source '${file}'; complete -C '${line}'`], undefined, ENV);
  expect(result.stderr).toBe('');
  return result.stdout.split('\n').filter(Boolean).map((l) => l.split('\t')[0]!);
}

const TOP = program.commands.map((c) => c.name());

describe('orgform completion bash', () => {
  it('registers a completion function for orgform when sourced', async () => {
    const file = await script('bash');
    const result = await runProcess('bash', ['-c', `source '${file}'; complete -p orgform`], undefined, ENV);
    expect(result.stdout).toBe('complete -o filenames -F _orgform orgform\n');
  });

  it('offers every command, then the subcommands of a group, then the options of the command typed', async () => {
    const file = await script('bash');
    expect(await bash(file, '')).toEqual(TOP);
    expect(await bash(file, 'pl')).toEqual(['plan']);
    expect(await bash(file, 'state', '')).toEqual(command('state').commands.map((c) => c.name()));
    expect(await bash(file, 'slugs', 'check', '-')).toEqual(flags(command('slugs check')));
    expect(await bash(file, '-f', 'orgs.yaml', 'apply', '--auto')).toEqual(['--auto-approve']);
  });

  it("offers an option's choices after it, and the shells after completion", async () => {
    const file = await script('bash');
    expect(await bash(file, 'plan', '--format', '')).toEqual(['text', 'json', 'markdown', 'html']);
    expect(await bash(file, 'emulator', '--profile', '')).toEqual(['lenient', 'strict']);
    expect(await bash(file, 'completion', '')).toEqual(['bash', 'zsh', 'fish']);
  });

  it('offers a file whose name has a space as one name, and never expands a file named * into every other', async () => {
    const file = await script('bash');
    const cwd = await makeWorkspace({ 'my plan.json': '{}', '*': '', 'orgs.yaml': '' });
    expect(await bashIn(cwd, file, 'show', 'my')).toEqual(['my plan.json']);
    expect(await bashIn(cwd, file, 'plan', '--out', 'my')).toEqual(['my plan.json']);
    expect(await bashIn(cwd, file, 'apply', '*')).toEqual(['*']);
  });
});

describe('orgform completion zsh', () => {
  it('offers commands, subcommands, options and choices as bash does', async () => {
    const file = await script('zsh');
    expect(await zsh(file, '')).toEqual(TOP);
    expect(await zsh(file, 'state', '')).toEqual(command('state').commands.map((c) => c.name()));
    expect(await zsh(file, 'plan', '--fo')).toEqual(flags(command('plan')));
    expect(await zsh(file, 'plan', '--format', '')).toEqual(['text', 'json', 'markdown', 'html']);
    expect(await zsh(file, 'apply', '')).toEqual(['(files)']);
  });
});

describe('orgform completion fish', () => {
  it('offers commands, subcommands, options and choices through fish itself', async () => {
    const file = await script('fish');
    expect((await fish(file, 'orgform ')).sort()).toEqual([...TOP].sort());
    expect(await fish(file, 'orgform pl')).toEqual(['plan']);
    expect((await fish(file, 'orgform state ')).sort()).toEqual(command('state').commands.map((c) => c.name()).sort());
    expect(await fish(file, 'orgform plan --fo')).toEqual(['--force', '--format']);
    expect((await fish(file, 'orgform plan --format ')).sort()).toEqual(['html', 'json', 'markdown', 'text']);
  });
});

describe('orgform completion', () => {
  it('refuses a shell it has no script for, naming the ones it has', async () => {
    const result = await runCli(['completion', 'tcsh'], { cwd: '.' });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("Allowed choices are bash, zsh, fish.");
  });
});
