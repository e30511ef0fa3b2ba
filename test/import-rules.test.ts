/**
 * The layout's rules, checked over the import graph of src/ (static and dynamic imports alike):
 * a command's code has one home, every word a command prints is in its views or in text/, the pure
 * core stays pure, and every import runs down.
 *
 * Each folder of src/ is a unit, and so are each command under commands/, plan/read/, api/rate/
 * and api/connect/; the files at the top of src/ are a unit each. LAYERS lists them from the top
 * down: a unit imports only units of lower layers (units of one layer never import each other).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = fileURLToPath(new URL('../src', import.meta.url));

const LAYERS: readonly (readonly string[])[] = [
  ['cli'],
  ['commands/*'],
  ['ci', 'config-writer'],
  ['executor', 'plan/read', 'text'],
  ['state', 'plan', 'config', 'emulator'],
  ['api/connect'],
  ['api'],
  ['api/rate'],
  ['transport', 'check-credential'],
  ['errors'],
  ['cli-io', 'model', 'work-tree', 'redact', 'version'],
];

/** An edge of the graph: the importing file and the imported one, both relative to src/. */
export interface Edge {
  from: string;
  to: string;
}

export function unitOf(file: string): string {
  const parts = file.replace(/\.ts$/, '').split('/');
  if (parts.length === 1) return parts[0]!;
  if (parts[0] === 'commands') return `commands/${parts[1]}`;
  if ((parts[0] === 'plan' && parts[1] === 'read') || (parts[0] === 'api' && (parts[1] === 'rate' || parts[1] === 'connect'))) return `${parts[0]}/${parts[1]}`;
  return parts[0]!;
}

function layerOf(unit: string): number {
  const key = unit.startsWith('commands/') ? 'commands/*' : unit;
  return LAYERS.findIndex((layer) => layer.includes(key));
}

/**
 * What of ci/ is imported from outside it: its mechanics' entry points. pipeline-output.ts writes
 * what the views word (annotations, the job summary, report files), ci-settings.ts says what the job
 * is, guard-workflow-commands.ts guards the streams (cli/). The rest is loaded by pipeline-output.
 */
const CI_ENTRY_POINTS = ['ci/pipeline-output.ts', 'ci/ci-settings.ts', 'ci/guard-workflow-commands.ts'];

/** A command's view: its view.ts and what is under its views/. */
function isView(file: string): boolean {
  return /^commands\/[^/]+\/(view\.ts$|views\/)/.test(file);
}

/** Every rule an edge breaks, in words. */
export function brokenRules(edges: readonly Edge[]): string[] {
  const broken: string[] = [];
  for (const { from, to } of edges) {
    const a = unitOf(from);
    const b = unitOf(to);
    const edge = `${from} imports ${to}`;
    if (to.startsWith('commands/') && !from.startsWith('commands/') && from !== 'cli/program.ts') broken.push(`${edge}: only cli/program.ts imports commands/`);
    if (to.startsWith('commands/') && from.startsWith('commands/') && a !== b) broken.push(`${edge}: a command imports no other command`);
    if (a === 'plan' && to.startsWith('api/')) broken.push(`${edge}: plan/ outside plan/read/ never imports api/`);
    // Words are not borrowed from ci/: a view takes from it only the output that writes them.
    if (to.startsWith('ci/') && a !== 'ci' && !CI_ENTRY_POINTS.includes(to)) broken.push(`${edge}: from outside ci/ only its entry points are imported (${CI_ENTRY_POINTS.join(', ')})`);
    if (to.startsWith('ci/') && isView(from) && to !== 'ci/pipeline-output.ts') broken.push(`${edge}: a command's view imports from ci/ only pipeline-output.ts`);
    // Inside a command the order is command.ts → flow.ts → view.ts → views/: the view is told, it
    // never runs the flow, and nothing calls back up into the command.
    if (a === b && a.startsWith('commands/') && to === `${a}/command.ts`) broken.push(`${edge}: nothing imports a command's command.ts but cli/program.ts`);
    if (a === b && a.startsWith('commands/') && to === `${a}/flow.ts` && (from === `${a}/view.ts` || from.startsWith(`${a}/views/`))) {
      broken.push(`${edge}: a command's view never imports its flow`);
    }
    if (a === b) continue;
    const [la, lb] = [layerOf(a), layerOf(b)];
    if (la < 0) broken.push(`${edge}: ${a} is in no layer (add it to LAYERS)`);
    else if (lb < 0) broken.push(`${edge}: ${b} is in no layer (add it to LAYERS)`);
    else if (la >= lb) broken.push(`${edge}: ${a} may import only from the layers below its own`);
  }
  return broken;
}

/** The cycles among files, each as the files around it (empty when there is none). */
export function cycles(edges: readonly Edge[]): string[][] {
  const next = new Map<string, string[]>();
  for (const { from, to } of edges) next.set(from, [...(next.get(from) ?? []), to]);
  const state = new Map<string, 'open' | 'done'>();
  const found: string[][] = [];
  const path: string[] = [];
  const visit = (file: string): void => {
    state.set(file, 'open');
    path.push(file);
    for (const to of next.get(file) ?? []) {
      if (state.get(to) === 'open') found.push(path.slice(path.indexOf(to)));
      else if (state.get(to) === undefined) visit(to);
    }
    path.pop();
    state.set(file, 'done');
  };
  for (const file of [...next.keys()].sort()) if (!state.has(file)) visit(file);
  return found;
}

function sources(dir: string, prefix = ''): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = posix.join(prefix, entry.name);
    if (entry.isDirectory()) return sources(join(dir, entry.name), path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

// A template literal without substitutions is a module name too: import(`../x.js`).
const IMPORT = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)(['"`])(\.{1,2}\/[^'"`$]+)\1/g;
/** A dynamic import whose module is computed (a variable, a `${}`): the graph could not see it. */
const COMPUTED_IMPORT = /\bimport\s*\(\s*(?!['"]|`[^`$]*`)/g;

/** The files with a dynamic import this test cannot follow, each with the line it is on. */
function computedImports(): string[] {
  return sources(SRC).flatMap((file) => {
    const text = readFileSync(join(SRC, file), 'utf8');
    return [...text.matchAll(COMPUTED_IMPORT)].map((m) => `${file}:${text.slice(0, m.index).split('\n').length}`);
  });
}

function importGraph(): Edge[] {
  return sources(SRC).flatMap((from) =>
    [...readFileSync(join(SRC, from), 'utf8').matchAll(IMPORT)].map((m) => ({
      from,
      to: posix.normalize(posix.join(posix.dirname(from), m[2]!)).replace(/\.js$/, '.ts'),
    })),
  );
}

describe('the import graph of src/', () => {
  const edges = importGraph();

  it('is read from every module (a check over no imports would pass whatever the layout)', () => {
    expect(edges.length).toBeGreaterThan(300);
    expect(edges.filter((e) => e.from === 'cli/program.ts').map((e) => e.to)).toContain('commands/apply/command.ts');
  });

  it('keeps every rule of the layout', () => {
    expect(brokenRules(edges)).toEqual([]);
  });

  it('has no cycle', () => {
    expect(cycles(edges)).toEqual([]);
  });

  it('names every module it imports, so that none escapes the rules (no computed import())', () => {
    expect(computedImports()).toEqual([]);
  });
});

describe('the rules', () => {
  it('refuse a command imported from anywhere but cli/program.ts, or from another command', () => {
    expect(brokenRules([{ from: 'cli/main.ts', to: 'commands/plan/command.ts' }])).toEqual([
      'cli/main.ts imports commands/plan/command.ts: only cli/program.ts imports commands/',
    ]);
    expect(brokenRules([{ from: 'commands/apply/flow.ts', to: 'commands/plan/flow.ts' }])).toEqual([
      'commands/apply/flow.ts imports commands/plan/flow.ts: a command imports no other command',
      'commands/apply/flow.ts imports commands/plan/flow.ts: commands/apply may import only from the layers below its own',
    ]);
    expect(brokenRules([{ from: 'cli/program.ts', to: 'commands/plan/command.ts' }, { from: 'commands/plan/flow.ts', to: 'commands/plan/view.ts' }])).toEqual([]);
  });

  it('refuse, inside a command, a call back up into command.ts, and a view that imports the flow', () => {
    expect(brokenRules([{ from: 'commands/apply/flow.ts', to: 'commands/apply/command.ts' }])).toEqual([
      "commands/apply/flow.ts imports commands/apply/command.ts: nothing imports a command's command.ts but cli/program.ts",
    ]);
    expect(brokenRules([{ from: 'commands/apply/views/text-apply-view.ts', to: 'commands/apply/flow.ts' }])).toEqual([
      "commands/apply/views/text-apply-view.ts imports commands/apply/flow.ts: a command's view never imports its flow",
    ]);
    expect(brokenRules([{ from: 'commands/apply/command.ts', to: 'commands/apply/flow.ts' }, { from: 'commands/apply/views/text-apply-view.ts', to: 'commands/apply/view.ts' }])).toEqual([]);
  });

  it('refuse ci/ and text/ importing a command, and plan/ outside read/ importing api/', () => {
    expect(brokenRules([{ from: 'ci/pipeline-output.ts', to: 'commands/apply/view.ts' }])).toContain(
      'ci/pipeline-output.ts imports commands/apply/view.ts: only cli/program.ts imports commands/',
    );
    expect(brokenRules([{ from: 'text/ansi.ts', to: 'commands/apply/view.ts' }])).toContain(
      'text/ansi.ts imports commands/apply/view.ts: only cli/program.ts imports commands/',
    );
    expect(brokenRules([{ from: 'plan/types.ts', to: 'api/types.ts' }])).toContain('plan/types.ts imports api/types.ts: plan/ outside plan/read/ never imports api/');
    expect(brokenRules([{ from: 'plan/read/make-plan.ts', to: 'api/client.ts' }])).toEqual([]);
  });

  it('refuse an import that runs back up a layer, or across one, and a unit in no layer', () => {
    expect(brokenRules([{ from: 'model/address.ts', to: 'text/ansi.ts' }])).toEqual(['model/address.ts imports text/ansi.ts: model may import only from the layers below its own']);
    expect(brokenRules([{ from: 'ci/pipeline-output.ts', to: 'config-writer/render-export.ts' }])).toEqual([
      'ci/pipeline-output.ts imports config-writer/render-export.ts: ci may import only from the layers below its own',
    ]);
    expect(brokenRules([{ from: 'widgets/a.ts', to: 'model/address.ts' }])).toEqual(['widgets/a.ts imports model/address.ts: widgets is in no layer (add it to LAYERS)']);
  });

  it('refuse words borrowed from ci/: a view imports from it only pipeline-output.ts, and nothing outside it reaches past its entry points', () => {
    expect(brokenRules([{ from: 'commands/apply/views/ci-apply-view.ts', to: 'ci/github-annotations.ts' }])).toEqual([
      'commands/apply/views/ci-apply-view.ts imports ci/github-annotations.ts: from outside ci/ only its entry points are imported (ci/pipeline-output.ts, ci/ci-settings.ts, ci/guard-workflow-commands.ts)',
      "commands/apply/views/ci-apply-view.ts imports ci/github-annotations.ts: a command's view imports from ci/ only pipeline-output.ts",
    ]);
    expect(brokenRules([{ from: 'commands/plan/view.ts', to: 'ci/ci-settings.ts' }])).toEqual([
      "commands/plan/view.ts imports ci/ci-settings.ts: a command's view imports from ci/ only pipeline-output.ts",
    ]);
    expect(brokenRules([{ from: 'commands/validate.ts', to: 'ci/render-codequality.ts' }])).toHaveLength(1);
    expect(
      brokenRules([
        { from: 'commands/plan/views/ci-plan-view.ts', to: 'ci/pipeline-output.ts' },
        { from: 'commands/plan/command.ts', to: 'ci/ci-settings.ts' },
        { from: 'cli/main.ts', to: 'ci/guard-workflow-commands.ts' },
        { from: 'ci/pipeline-output.ts', to: 'ci/github-annotations.ts' },
      ]),
    ).toEqual([]);
  });

  it('find a cycle, however long', () => {
    expect(cycles([{ from: 'a.ts', to: 'b.ts' }, { from: 'b.ts', to: 'c.ts' }, { from: 'c.ts', to: 'a.ts' }, { from: 'c.ts', to: 'd.ts' }])).toEqual([['a.ts', 'b.ts', 'c.ts']]);
    expect(cycles([{ from: 'a.ts', to: 'b.ts' }, { from: 'a.ts', to: 'c.ts' }, { from: 'b.ts', to: 'c.ts' }])).toEqual([]);
  });
});
