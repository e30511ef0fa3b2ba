#!/usr/bin/env node
/**
 * Moves modules to the layout of issue 23 (one home per command) and rewrites every relative
 * import that names them, so that the move can be run again on a tree that changed meanwhile.
 *
 *   node scripts/relayout.mjs            move (git mv) and rewrite; prints what it did
 *   node scripts/relayout.mjs --check    only say what is missing from the table, change nothing
 *
 * The table below maps src/ paths (relative to src/). Each module's mirrored tests move with it:
 * test/a/b.test.ts and test/a/b.<anything>.test.ts follow src/a/b.ts. Tests that mirror no module
 * are in TEST_MOVES. The script stops, changing nothing, when a file of a folder that must
 * disappear (src/render, src/engine, src/cli/commands, src/slugs, test/render, test/engine,
 * test/cli/commands, test/slugs) is not in a table, or when a file of the table is gone: add a row.
 *
 * What it rewrites, in every .ts/.mts/.mjs/.js file of the repository outside node_modules, dist
 * and .git: the relative specifiers of `from '…'`, `import '…'`, `import('…')`, `vi.mock('…')`,
 * `vi.importActual('…')` and `new URL('…', import.meta.url)`; specifiers into dist/ follow their
 * src/ module. In those files and in Markdown, whole paths from the root (`src/render/ansi.ts`,
 * `dist/render/ansi.js`, `test/render/x.test.ts`) are rewritten too. Anything else (a path
 * counted by hand, a prose description of a folder) is for a person to fix afterwards.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, posix, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));

/** src/ modules: old → new, both relative to src/. */
export const SRC_MOVES = {
  // cli/ keeps main, program (and the heap setting main applies); the rest goes where it is used.
  'cli/command-context.ts': 'api/connect/open-client.ts',
  'cli/connection.ts': 'api/connect/resolve-connection.ts',
  'cli/run-token-command.ts': 'api/connect/run-token-command.ts',
  'cli/token-expiry-warning.ts': 'api/connect/token-expiry-warning.ts',
  'cli/parse-max-rps.ts': 'api/rate/parse-max-rps.ts',
  'cli/format-error.ts': 'text/format-error.ts',
  'cli/io.ts': 'io.ts',
  'cli/guard-workflow-commands.ts': 'ci/guard-workflow-commands.ts',
  'cli/pipeline-output.ts': 'ci/pipeline-output.ts',
  'cli/pipeline-views.ts': 'commands/plan/views/ci-plan-view.ts',
  'cli/read-answer.ts': 'commands/apply/read-answer.ts',
  'cli/state-settings.ts': 'state/state-settings.ts',
  // The commands: a folder each for plan, apply, export and slugs; one file each for the others.
  'cli/commands/apply.ts': 'commands/apply/command.ts',
  'cli/commands/plan.ts': 'commands/plan/command.ts',
  'cli/commands/export.ts': 'commands/export/command.ts',
  'cli/commands/slugs-check.ts': 'commands/slugs/command.ts',
  'cli/commands/emulator.ts': 'commands/emulator.ts',
  'cli/commands/force-unlock.ts': 'commands/force-unlock.ts',
  'cli/commands/state-list.ts': 'commands/state-list.ts',
  'cli/commands/state-migrate.ts': 'commands/state-migrate.ts',
  'cli/commands/state-pull.ts': 'commands/state-pull.ts',
  'cli/commands/validate.ts': 'commands/validate.ts',
  'cli/commands/completion.ts': 'commands/completion.ts',
  'cli/commands/init.ts': 'commands/init.ts',
  // show prints a saved plan with plan's own view: it lives with plan, not beside it.
  'cli/commands/show.ts': 'commands/plan/show.ts',
  // engine/ disappears: the flows go home, the reading of the plan to plan/read/.
  'engine/apply-flow.ts': 'commands/apply/flow.ts',
  'engine/plan-flow.ts': 'commands/plan/flow.ts',
  'engine/check-plan-out.ts': 'commands/plan/check-plan-out.ts',
  'engine/client-events.ts': 'commands/apply/client-events.ts',
  'engine/hash-files.ts': 'commands/apply/hash-files.ts',
  'engine/refusal-error.ts': 'commands/apply/refusal-error.ts',
  'engine/load-desired-state.ts': 'plan/read/load-desired-state.ts',
  'engine/make-plan.ts': 'plan/read/make-plan.ts',
  'engine/read-saved-plan.ts': 'plan/read/read-saved-plan.ts',
  'engine/open-client.ts': 'api/connect/client-listeners.ts',
  'engine/service-key.ts': 'api/connect/service-key.ts',
  'engine/open-state-for.ts': 'state/open-state-for.ts',
  'engine/state-path-for.ts': 'state/state-path-for.ts',
  // render/ disappears: text primitives, CI formats, the plan's renderings, each command's views.
  'render/ansi.ts': 'text/ansi.ts',
  'render/log-frame.ts': 'text/log-frame.ts',
  'render/markdown-escape.ts': 'text/markdown-escape.ts',
  'render/format-change-line.ts': 'text/format-change-line.ts',
  'render/format-value.ts': 'text/format-value.ts',
  'render/compact-threshold.ts': 'plan-views/compact-threshold.ts',
  'render/describe-plan-safety.ts': 'plan-views/describe-plan-safety.ts',
  'render/render-plan.ts': 'plan-views/render-plan.ts',
  'render/render-text.ts': 'plan-views/render-text.ts',
  'render/render-json.ts': 'plan-views/render-json.ts',
  'render/render-markdown.ts': 'plan-views/render-markdown.ts',
  'render/render-plan-digest.ts': 'plan-views/render-plan-digest.ts',
  'render/findings.ts': 'ci/findings.ts',
  'render/github-annotations.ts': 'ci/github-annotations.ts',
  'render/render-codequality.ts': 'ci/render-codequality.ts',
  'render/render-gitlab-terraform.ts': 'ci/render-gitlab-terraform.ts',
  'render/render-step-summary.ts': 'ci/render-step-summary.ts',
  'render/workspace-path.ts': 'ci/workspace-path.ts',
  'render/plan-view.ts': 'commands/plan/view.ts',
  'render/apply-view.ts': 'commands/apply/view.ts',
  'render/text-apply-view.ts': 'commands/apply/views/text-apply-view.ts',
  'render/ndjson-apply-view.ts': 'commands/apply/views/ndjson-apply-view.ts',
  'render/render-apply.ts': 'commands/apply/views/render-apply.ts',
  'render/render-apply-json.ts': 'commands/apply/views/render-apply-json.ts',
  'render/apply-tally.ts': 'commands/apply/views/apply-tally.ts',
  'render/change-lines-display.ts': 'commands/apply/views/change-lines-display.ts',
  'render/live-line-display.ts': 'commands/apply/views/live-line-display.ts',
  'render/progress-display.ts': 'commands/apply/views/progress-display.ts',
  'render/progress-lines-display.ts': 'commands/apply/views/progress-lines-display.ts',
  'render/progress-interval.ts': 'commands/apply/views/progress-interval.ts',
  'render/format-log-progress.ts': 'commands/apply/views/format-log-progress.ts',
  'render/throughput-window.ts': 'commands/apply/views/throughput-window.ts',
  'render/render-state-list.ts': 'commands/state-list-table.ts',
  // slugs/ becomes the slugs command's home.
  'slugs/check-slugs.ts': 'commands/slugs/check-slugs.ts',
  'slugs/parse-slug-lines.ts': 'commands/slugs/parse-slug-lines.ts',
  'slugs/render-slug-table.ts': 'commands/slugs/views/render-slug-table.ts',
  // api/: the rate and connecting each get a folder.
  'api/rate-limiter.ts': 'api/rate/rate-gate.ts',
  'api/rate-controller.ts': 'api/rate/adaptive-rate.ts',
  'api/rate-limit-headers.ts': 'api/rate/rate-limit-headers.ts',
  // The token source stays beside the client that consumes it (api/connect opens the client, so
  // the source in there would make api/ and api/connect/ import each other).
  'api/timer-delay.ts': 'api/rate/timer-delay.ts',
  // The domain: the desired state next to the observed one; reading the service under plan/read/.
  'config/types.ts': 'model/desired-state.ts',
  'state/read-observed-state.ts': 'plan/read/read-observed-state.ts',
};

/** Tests that mirror no module of the table by name: old → new, relative to test/. */
export const TEST_MOVES = {
  'render/fixtures.ts': 'support/view-fixtures.ts',
  'render/render-apply-rate.test.ts': 'commands/apply/views/render-apply-rate.test.ts',
};

/** Folders that must be empty afterwards: every file in them needs a row. */
const MUST_EMPTY = ['src/render', 'src/engine', 'src/cli/commands', 'src/slugs', 'test/render', 'test/engine', 'test/cli/commands', 'test/slugs'];

const CODE = /\.(ts|mts|cts|mjs|cjs|js)$/;
const SKIP_DIRS = new Set(['node_modules', 'dist', '.git', 'coverage']);

function walk(dir, out = []) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (SKIP_DIRS.has(entry.name)) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) walk(path, out);
    else out.push(path);
  }
  return out;
}

const rel = (abs) => relative(ROOT, abs).split('\\').join('/');
const stem = (p) => p.replace(/\.ts$/, '');

/** Every move, as repository-relative paths, tests included. */
function plannedMoves() {
  const moves = new Map();
  const problems = [];
  for (const [from, to] of Object.entries(SRC_MOVES)) {
    if (!existsSync(join(ROOT, 'src', from))) {
      if (existsSync(join(ROOT, 'src', to))) continue; // moved already
      problems.push(`src/${from} is in the table but not in the tree: remove or change its row`);
      continue;
    }
    moves.set(`src/${from}`, `src/${to}`);
    const testDir = join(ROOT, 'test', dirname(from));
    const name = posix.basename(stem(from));
    if (!existsSync(testDir)) continue;
    for (const file of readdirSync(testDir)) {
      if (file === `${name}.test.ts` || (file.startsWith(`${name}.`) && file.endsWith('.test.ts'))) {
        const suffix = file.slice(name.length);
        moves.set(`test/${posix.join(dirname(from), file)}`, `test/${stem(to)}${suffix}`);
      }
    }
  }
  for (const [from, to] of Object.entries(TEST_MOVES)) {
    if (!existsSync(join(ROOT, 'test', from))) {
      if (existsSync(join(ROOT, 'test', to))) continue;
      problems.push(`test/${from} is in the table but not in the tree: remove or change its row`);
      continue;
    }
    moves.set(`test/${from}`, `test/${to}`);
  }
  for (const dir of MUST_EMPTY) {
    if (!existsSync(join(ROOT, dir))) continue;
    for (const abs of walk(join(ROOT, dir))) {
      if (!moves.has(rel(abs))) problems.push(`${rel(abs)} is in a folder that must disappear but has no row: add it to SRC_MOVES or TEST_MOVES`);
    }
  }
  const targets = new Map();
  for (const [from, to] of moves) {
    if (targets.has(to)) problems.push(`${from} and ${targets.get(to)} would both become ${to}`);
    targets.set(to, from);
    if (existsSync(join(ROOT, to))) problems.push(`${to} exists already (the move of ${from} would overwrite it)`);
  }
  return { moves, problems };
}

/** The repository path a module path stands for: dist/a/b.js is src/a/b.ts. */
function sourceOf(path) {
  if (path.startsWith('dist/')) return { path: `src/${path.slice(5).replace(/\.js$/, '.ts')}`, dist: true };
  return { path: path.replace(/\.js$/, '.ts'), dist: false };
}
function asSpecified(path, dist, jsExt) {
  if (dist) return `dist/${path.slice(4).replace(/\.ts$/, '.js')}`;
  return jsExt ? path.replace(/\.ts$/, '.js') : path;
}

const SPECIFIER = /(\bfrom\s*|\bimport\s*\(\s*|\bimport\s+|\bvi\.mock\(\s*|\bvi\.importActual(?:<[^>]*>)?\(\s*|\bnew URL\(\s*)(['"])(\.{1,2}\/[^'"\n]*)\2/g;

function rewriteSpecifiers(text, oldFile, newFile, moves) {
  return text.replace(SPECIFIER, (whole, lead, quote, spec) => {
    const target = posix.normalize(posix.join(posix.dirname(oldFile), spec));
    const { path, dist } = sourceOf(target);
    const jsExt = target.endsWith('.js');
    const moved = moves.get(path);
    const newTarget = moved === undefined ? target : asSpecified(moved, dist, jsExt);
    if (moved === undefined && oldFile === newFile) return whole;
    let next = posix.relative(posix.dirname(newFile), newTarget);
    if (spec.endsWith('/') && !next.endsWith('/')) next += '/';
    if (!next.startsWith('.')) next = `./${next}`;
    if (next === '') next = '.';
    return `${lead}${quote}${next}${quote}`;
  });
}

function rewriteRootPaths(text, moves) {
  let out = text;
  for (const [from, to] of moves) {
    const pairs = [[from, to]];
    if (from.startsWith('src/')) pairs.push([asSpecified(from, true), asSpecified(to, true)]);
    for (const [a, b] of pairs) {
      // Whole paths only: not a tail of a longer path, not a head of a longer name.
      const re = new RegExp(`(?<![\\w./-])${a.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?![\\w-])`, 'g');
      out = out.replace(re, b);
    }
  }
  return out;
}

function main() {
  const check = process.argv.includes('--check');
  const { moves, problems } = plannedMoves();
  if (problems.length > 0) {
    console.error(`relayout: ${problems.length} problem(s), nothing changed:\n  ${problems.join('\n  ')}`);
    process.exit(1);
  }
  console.log(`relayout: ${moves.size} file(s) to move`);
  if (check) return;
  const self = rel(fileURLToPath(import.meta.url));
  const files = walk(ROOT).map(rel).filter((p) => p !== self && (CODE.test(p) || p.endsWith('.md')));
  // Read every file before moving anything: each is rewritten as seen from its new place.
  const contents = new Map(files.map((p) => [p, readFileSync(join(ROOT, p), 'utf8')]));
  for (const [from, to] of moves) {
    execFileSync('mkdir', ['-p', dirname(join(ROOT, to))]);
    execFileSync('git', ['mv', from, to], { cwd: ROOT });
  }
  let changed = 0;
  for (const [oldPath, text] of contents) {
    const newPath = moves.get(oldPath) ?? oldPath;
    let next = CODE.test(oldPath) ? rewriteSpecifiers(text, oldPath, newPath, moves) : text;
    next = rewriteRootPaths(next, moves);
    if (next !== text) {
      writeFileSync(join(ROOT, newPath), next);
      changed += 1;
    }
  }
  for (const dir of MUST_EMPTY) {
    if (existsSync(join(ROOT, dir)) && statSync(join(ROOT, dir)).isDirectory() && walk(join(ROOT, dir)).length === 0) {
      execFileSync('rm', ['-r', join(ROOT, dir)]);
    }
  }
  console.log(`relayout: moved ${moves.size} file(s), rewrote ${changed}`);
}

main();
