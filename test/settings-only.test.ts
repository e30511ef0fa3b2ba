/**
 * The environment is read at the edge and nowhere else: `process.env` only in cli/main.ts, which
 * hands it to the program; no `env` anywhere below cli/ (the commands, flows and engines get typed
 * settings: cli/settings.ts), but for the one opaque hand-over of the environment to the token
 * command's process (`env: options.childEnv`). And only the CLI and the commands see CliIO, the
 * outside world: an engine gets what it uses of it.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const SRC = fileURLToPath(new URL('../src', import.meta.url));

function sources(dir: string, prefix = ''): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = posix.join(prefix, entry.name);
    if (entry.isDirectory()) return sources(join(dir, entry.name), path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** Where a file reads the environment: `process.env`, and every other identifier named `env`, by line. */
export function environmentReads(file: string, text: string): { processEnv: string[]; env: string[] } {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const at = (node: ts.Node) => `${file}:${source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1}`;
  const found = { processEnv: [] as string[], env: [] as string[] };
  const visit = (node: ts.Node): void => {
    if (ts.isPropertyAccessExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === 'process' && node.name.text === 'env') found.processEnv.push(at(node));
    else if (ts.isIdentifier(node) && node.text === 'env' && !handsOverChildEnv(node)) found.env.push(at(node));
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** `env: ….childEnv` in an object literal: the token command's process gets orgform's environment as it is. */
function handsOverChildEnv(node: ts.Identifier): boolean {
  const parent = node.parent;
  return ts.isPropertyAssignment(parent) && parent.name === node && ts.isPropertyAccessExpression(parent.initializer) && parent.initializer.name.text === 'childEnv';
}

describe('the environment', () => {
  const files = sources(SRC).map((file) => ({ file, reads: environmentReads(file, readFileSync(join(SRC, file), 'utf8')) }));

  it('is read from process.env in cli/main.ts only', () => {
    expect(files.flatMap((f) => f.reads.processEnv).map((at) => at.replace(/:\d+$/, ''))).toEqual(['cli/main.ts']);
  });

  it('reaches nothing below cli/: the commands, flows and engines get settings, never env', () => {
    const below = files.filter((f) => !f.file.startsWith('cli/')).flatMap((f) => f.reads.env);
    expect(below).toEqual([]);
    expect(files.filter((f) => f.file.startsWith('cli/')).flatMap((f) => f.reads.env).length).toBeGreaterThan(10);
  });

  it('is told apart from the hand-over to the token command, and from a name that only looks like it', () => {
    expect(environmentReads('a.ts', 'spawn(c, { env: options.childEnv });').env).toEqual([]);
    expect(environmentReads('a.ts', 'spawn(c, { env: process.env });')).toEqual({ processEnv: ['a.ts:1'], env: ['a.ts:1', 'a.ts:1'] });
    expect(environmentReads('a.ts', 'function f(env: Env) { return env.X; }').env).toEqual(['a.ts:1', 'a.ts:1']);
    expect(environmentReads('a.ts', 'const environment = 1; const envelope = 2;').env).toEqual([]);
  });
});

describe('CliIO', () => {
  it('is imported only by the CLI and the commands', () => {
    const importers = sources(SRC).filter((file) => /^import[^;]*\bCliIO\b[^;]*from/m.test(readFileSync(join(SRC, file), 'utf8')));
    expect(importers.filter((file) => !file.startsWith('cli/') && !file.startsWith('commands/'))).toEqual([]);
    expect(importers).toContain('commands/apply/command.ts');
  });
});
