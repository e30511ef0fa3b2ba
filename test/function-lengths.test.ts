/**
 * No function in src/ is longer than MAX_LINES, measured with TypeScript's own parser: function
 * declarations and expressions, arrows, methods, constructors and accessors, from the statement
 * that declares one (`const x = () => …` counts from `const`) to its closing brace. A function's
 * length includes the functions nested in it, so a closure factory counts whole, and each nested
 * function is measured too.
 *
 * LONG_FUNCTIONS is a ratchet: the functions that were longer when the limit came in, each with the
 * length it had then. One of them may shrink, never grow; once it is within the limit its entry must
 * go, and no function joins the list.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { sourceFiles } from './support/source-files.js';

const SRC = fileURLToPath(new URL('../src', import.meta.url));
export const MAX_LINES = 80;

/** `file name` → the length it had when the limit came in. Emptied by issue 32's packages. */
const LONG_FUNCTIONS: Readonly<Record<string, number>> = {
};

export interface MeasuredFunction {
  /** `file name`: the file relative to src/, and the function as Class.method or outer>inner. */
  key: string;
  line: number;
  lines: number;
}

type FunctionNode = ts.FunctionLikeDeclaration & { body: ts.Node };

function isMeasured(node: ts.Node): node is FunctionNode {
  const kinds = ts.isFunctionDeclaration(node) || ts.isFunctionExpression(node) || ts.isArrowFunction(node) || ts.isMethodDeclaration(node);
  const members = ts.isConstructorDeclaration(node) || ts.isGetAccessorDeclaration(node) || ts.isSetAccessorDeclaration(node);
  return (kinds || members) && (node as ts.FunctionLikeDeclaration).body !== undefined;
}

/** The declared name; for an expression, what it is assigned to; `<anonymous>` otherwise (no line: keys must survive edits above). */
function nameOf(node: FunctionNode): string {
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  if (node.name !== undefined && (ts.isIdentifier(node.name) || ts.isStringLiteral(node.name) || ts.isPrivateIdentifier(node.name))) return node.name.text;
  const parent = node.parent;
  const named = (n: ts.Node & { name?: ts.Node }) => (n.name !== undefined && (ts.isIdentifier(n.name) || ts.isStringLiteral(n.name)) ? n.name.text : undefined);
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) return named(parent) ?? '<anonymous>';
  if (ts.isBinaryExpression(parent) && ts.isPropertyAccessExpression(parent.left)) return parent.left.name.text;
  if (ts.isCallExpression(parent) && ts.isPropertyAccessExpression(parent.expression)) return `<${parent.expression.name.text} callback>`;
  return '<anonymous>';
}

const isMember = (node: ts.Node) => ts.isMethodDeclaration(node) || ts.isConstructorDeclaration(node) || ts.isGetAccessorDeclaration(node) || ts.isSetAccessorDeclaration(node);

/** Every function of one file, with its length in lines. */
export function measureFunctions(file: string, text: string): MeasuredFunction[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const lineOf = (pos: number) => source.getLineAndCharacterOfPosition(pos).line + 1;
  const rows: MeasuredFunction[] = [];
  const visit = (node: ts.Node, scope: string[]): void => {
    let next = scope;
    if ((ts.isClassDeclaration(node) || ts.isClassExpression(node)) && node.name !== undefined) next = [...scope, node.name.text];
    else if (ts.isClassDeclaration(node) || ts.isClassExpression(node)) next = [...scope, '<class>'];
    if (isMeasured(node)) {
      // From the statement that declares it: what a reader sees as the function.
      const declaration = ts.isVariableDeclaration(node.parent) ? (node.parent.parent?.parent ?? node.parent) : node;
      const start = lineOf(declaration.getStart(source));
      const inClass = scope.length > 0 && (isMember(node) || ts.isPropertyDeclaration(node.parent));
      const name = inClass ? `${scope.join('>')}.${nameOf(node)}` : [...scope, nameOf(node)].join('>');
      rows.push({ key: `${file} ${name}`, line: start, lines: lineOf(node.getEnd()) - start + 1 });
      next = inClass ? [...scope.slice(0, -1), `${scope.at(-1)}.${nameOf(node)}`] : [...scope, nameOf(node)];
    }
    ts.forEachChild(node, (child) => visit(child, next));
  };
  visit(source, []);
  return rows;
}

/** What breaks the limit: a function over it and not listed, a listed one grown, an entry no longer needed. */
export function lengthProblems(measured: readonly MeasuredFunction[], allowed: Readonly<Record<string, number>>, max = MAX_LINES): string[] {
  const problems: string[] = [];
  const long = new Map<string, MeasuredFunction>();
  for (const f of measured) if (f.lines > max) long.set(f.key, f);
  for (const [key, f] of long) {
    const was = allowed[key];
    if (was === undefined) problems.push(`${key} (line ${f.line}) is ${f.lines} lines long: at most ${max}, split it`);
    else if (f.lines > was) problems.push(`${key} (line ${f.line}) grew to ${f.lines} lines (it was ${was}): it may only shrink`);
  }
  for (const key of Object.keys(allowed)) if (!long.has(key)) problems.push(`${key} is within ${max} lines now (or gone): remove it from LONG_FUNCTIONS`);
  return problems;
}

describe('the length of every function in src/', () => {
  const measured = sourceFiles(SRC).flatMap((file) => measureFunctions(file, readFileSync(join(SRC, file), 'utf8')));

  it('is measured over every function (a check over none would pass whatever the code)', () => {
    expect(measured.length).toBeGreaterThan(1000);
    expect(measured.map((f) => f.key)).toContain('cli/main.ts main');
  });

  it(`is at most ${MAX_LINES} lines, but for the listed functions, which only shrink`, () => {
    expect(lengthProblems(measured, LONG_FUNCTIONS)).toEqual([]);
  });
});

describe('the length rule', () => {
  const body = (n: number) => Array.from({ length: n - 2 }, (_, i) => `  const v${i} = ${i};`).join('\n');
  const fn = (name: string, lines: number) => `function ${name}() {\n${body(lines)}\n}\n`;

  it('measures from the declaring statement to the closing brace, nested functions whole and on their own', () => {
    const text = `export const outer = () => {\n  const inner = function () {\n${body(4)}\n  };\n  return inner;\n};\nclass Box {\n  open(): void {\n${body(3)}\n  }\n}\n`;
    expect(measureFunctions('a.ts', text)).toEqual([
      { key: 'a.ts outer', line: 1, lines: 7 },
      { key: 'a.ts outer>inner', line: 2, lines: 4 },
      { key: 'a.ts Box.open', line: 9, lines: 3 },
    ]);
  });

  it('refuses a function over the limit, a listed one that grew, and an entry no longer needed', () => {
    const measured = [...measureFunctions('a.ts', fn('long', 12)), ...measureFunctions('b.ts', fn('listed', 15)), ...measureFunctions('c.ts', fn('short', 5))];
    expect(lengthProblems(measured, { 'b.ts listed': 14, 'c.ts short': 20 }, 10)).toEqual([
      'a.ts long (line 1) is 12 lines long: at most 10, split it',
      'b.ts listed (line 1) grew to 15 lines (it was 14): it may only shrink',
      'c.ts short is within 10 lines now (or gone): remove it from LONG_FUNCTIONS',
    ]);
    expect(lengthProblems(measured, { 'a.ts long': 12, 'b.ts listed': 15 }, 10)).toEqual([]);
  });
});
