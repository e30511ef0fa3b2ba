import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { guardWorkflowCommands } from '../../src/ci/guard-workflow-commands.js';
import type { CliIO } from '../../src/cli-io.js';
import { runnerAnnotations, runnerCommands } from '../support/github-runner.js';
import { sinks } from '../support/sinks.js';
import { readCiSettings } from '../../src/cli/output-settings.js';

function captured(env: Record<string, string> = { GITHUB_ACTIONS: 'true' }, options: Parameters<typeof guardWorkflowCommands>[2] = {}) {
  const { out, err } = sinks();
  const raw: CliIO = { stdout: out, stderr: err, stdin: new PassThrough(), cwd: '/', signal: new AbortController().signal, now: () => 0 };
  return { raw, io: guardWorkflowCommands(raw, readCiSettings(env), options), out, err };
}

const FORGED = [
  '::add-mask::pwned',
  '::set-output name=pwned::1',
  '::stop-commands::pwned',
  '::error::pwned',
  '  \t::warning::indented',
  '\u200b::notice::after a zero-width space',
  '\u00a0\ufeff::debug::after a no-break space and a byte-order mark',
  'x ##[set-output name=pwned;]legacy, anywhere in a line',
  '#\u200b#\u2060[error]with zero-width characters between',
  '##[error]at the start',
];

describe('guardWorkflowCommands', () => {
  it('leaves nothing that the runner would take for a command, and keeps the text readable', () => {
    const { io, out } = captured();
    io.stdout.write(`${FORGED.join('\n')}\n`);
    expect(runnerCommands(out.text)).toEqual([]);
    expect(out.text.split('\n').slice(0, 4)).toEqual(['\\u003a:add-mask::pwned', '\\u003a:set-output name=pwned::1', '\\u003a:stop-commands::pwned', '\\u003a:error::pwned']);
    expect(out.text).toContain('x ##\\u005bset-output name=pwned;]legacy');
    expect(out.text).toContain('  \t\\u003a:warning::indented');
  });

  it('takes \\r as the end of a line, as the runner does', () => {
    const { io, err } = captured();
    io.stderr.write('progress 1/2\r::add-mask::pwned\r\n::set-output name=x::1');
    expect(runnerCommands(err.text)).toEqual([]);
    expect(err.text).toBe('progress 1/2\r\\u003a:add-mask::pwned\r\n\\u003a:set-output name=x::1');
  });

  it('leaves a colon or a ## that does not start a command as it is', () => {
    const { io, out } = captured();
    const text = 'acme: 3 changes\n  ~ billingEmail: "a::b"\n# heading ## not [a command]\nC:\\path ##x[\n';
    io.stdout.write(text);
    expect(out.text).toBe(text);
  });

  it('catches a command split across writes at any point, and writes the same text as one write would', () => {
    const text = `ok\n${FORGED.join('\r\n')}\n`;
    const { io: whole, out: expected } = captured();
    whole.stdout.write(text);
    for (let at = 0; at <= text.length; at += 1) {
      for (const second of [at, Math.min(text.length, at + 1)]) {
        const { io, out } = captured();
        io.stdout.write(text.slice(0, at));
        io.stdout.write(text.slice(at, second));
        io.stdout.write(text.slice(second));
        expect(out.text).toBe(expected.text);
      }
    }
    expect(runnerCommands(expected.text)).toEqual([]);
  });

  it('lets orgform’s own sealed command lines through, each on a line of its own', () => {
    const { io, out } = captured();
    const seal = io.workflowCommand!;
    io.stdout.write('a line not yet ended');
    io.stdout.write(`${seal('::group::Plan')}\n::error::forged\n${seal('::error file=orgs.yaml,line=2,title=orgform::bad')}\n`);
    io.stdout.write(`${seal('::endgroup::')}\n`);
    expect(runnerCommands(out.text).map((c) => c.command)).toEqual(['group', 'error', 'endgroup']);
    expect(runnerAnnotations(out.text)[0]?.properties).toEqual({ file: 'orgs.yaml', line: '2', title: 'orgform' });
    expect(out.text).toBe('a line not yet ended\n::group::Plan\n\\u003a:error::forged\n::error file=orgs.yaml,line=2,title=orgform::bad\n::endgroup::\n');
  });

  it('keeps orgform’s annotations working after text that tries to stop commands', () => {
    const { io, err } = captured();
    io.stderr.write('::stop-commands::pwned\n');
    io.stderr.write(`${io.workflowCommand!('::error title=orgform::a real problem')}\n`);
    expect(runnerAnnotations(err.text).map((a) => a.data)).toEqual(['a real problem']);
  });

  it('cannot be fooled by a seal that is not this run’s, and never writes the key', () => {
    const { io, out } = captured();
    const sealed = io.workflowCommand!('::error::x');
    const key = sealed.slice(0, sealed.indexOf('::'));
    io.stdout.write(`\u0000${'0'.repeat(32)}\u0000::add-mask::pwned\n`);
    io.stdout.write(`${sealed}\n`);
    expect(runnerCommands(out.text).map((c) => c.command)).toEqual(['error']);
    expect(out.text).not.toContain(key.slice(1, -1));
    // The seal of one guarded io means nothing to another.
    const other = captured();
    other.io.stdout.write(`${sealed}\n`);
    expect(runnerCommands(other.out.text)).toEqual([]);
  });

  it('refuses to seal more than one line', () => {
    const { io } = captured();
    expect(() => io.workflowCommand!('::group::x\n::add-mask::y')).toThrow(/single line/);
  });

  it('keeps a JSON document’s values: inside a string the escapes stand for the same characters', () => {
    const { io, out } = captured();
    const document = { email: FORGED.join('\n'), id: 'x ##[set-output name=a;]1' };
    io.stdout.write(`${JSON.stringify(document, null, 2)}\n`);
    expect(runnerCommands(out.text)).toEqual([]);
    expect(JSON.parse(out.text)).toEqual(document);
  });

  it('leaves a stream that the runner cannot read as it is, apart from the seals', () => {
    const { io, out, err } = captured({ GITHUB_ACTIONS: 'true' }, { unread: { stdout: true } });
    io.stdout.write(`::add-mask::x\n${io.workflowCommand!('::warning::w')}\n`);
    io.stderr.write('::add-mask::x\n');
    expect(out.text).toBe('::add-mask::x\n::warning::w\n');
    expect(err.text).toBe('\\u003a:add-mask::x\n');
  });

  it('changes nothing outside GitHub Actions, guards once, and keeps whether a stream is a terminal', () => {
    const outside = captured({});
    expect(outside.io).toBe(outside.raw);
    expect(outside.io.workflowCommand).toBeUndefined();
    const { io, raw } = captured();
    expect(io).not.toBe(raw);
    expect(guardWorkflowCommands(io, { githubActions: true })).toBe(io);
    expect(io.stdout.isTTY).toBe(false);
    expect(io.stderr.isTTY).toBeUndefined();
  });
});

describe('the privileged path', () => {
  it('is taken only by the pipeline output (annotations, groups), so that no command issues workflow commands of its own', () => {
    const src = fileURLToPath(new URL('../../src', import.meta.url));
    const files = (readdirSync(src, { recursive: true }) as string[]).filter((f) => f.endsWith('.ts')).map((f) => join(src, f));
    const code = (f: string) => readFileSync(f, 'utf8').split('\n').filter((line) => !/^\s*(\*|\/\/|\/\*)/.test(line));
    const users = files.filter((f) => code(f).some((line) => line.includes('workflowCommand'))).map((f) => relative(src, f).split('\\').join('/'));
    expect(users.sort()).toEqual(['ci/guard-workflow-commands.ts', 'ci/pipeline-output.ts', 'cli-io.ts']);
  });
});
