// The bench's inputs group (`--only inputs`, issue 35): inputs of a plausible shape that once cost far
// more than their size, each run as the built CLI at two sizes, a doubling. The growth factor is the
// median CPU time of the orgform process at the larger size over the smaller's (wall time where GNU
// time is missing): about 2 for a linear path, 4 for a quadratic one. CPU rather than wall, because
// on a shared machine the wall time of a run grows with the others' work as much as with its own.
// Above INPUT_SETTINGS.maxGrowth the group fails.
//
//   validate, one organisation with N ids                 (ajv's uniqueItems ran nested loops)
//   validate, N problems                                  (problems.push(...spread) overflowed the stack)
//   export of N organisations                             (YAMLMap.add scanned for duplicates)
//   export -f FILE --diff, N organisations, each edited   (a diff with no bound on its edit script)
//
// A shape is { name, unit, sizes: [n, 2n], prepare(ctx, n) → Promise<{ args, check(run), stop?() }> }:
// prepare writes the inputs (and starts an emulator when the shape needs one); check throws when a run
// did not do what the shape measures. INPUT_SHAPES is the list: the other paths of issue 35 (the journal
// fold, state list, JSON streaming) join it as entries of the same form; one organisation's changes
// have a group of their own (organisation-case.mjs).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFixtures } from './fixtures.mjs';
import { median, runOrgform, startEmulatorProcess } from './processes.mjs';

export const INPUT_SETTINGS = {
  /** CPU (else wall) at 2n over the same at n: above this the group fails. */
  maxGrowth: 2.5,
  timeoutMs: 300_000,
};

const pad = (i) => String(i).padStart(7, '0');

function writeLines(ctx, name, lines) {
  const file = join(ctx.tmp, name);
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

/** `version: 1` and one organisation revoking N invitations, each `item(i)`. */
function oneLongList(ctx, name, n, item) {
  const lines = ['version: 1', 'organisations:', '  acme:', '    invitations:', '      revoke:'];
  for (let i = 0; i < n; i += 1) lines.push(`        - ${item(i)}`);
  return writeLines(ctx, name, lines);
}

/** The emulator over the lean seed of n organisations (org-0000001…, billing sub_…), no latency. */
async function leanEmulator(ctx, n) {
  const fixtures = await writeFixtures(ctx.tmp, n, { lean: true });
  const emulator = await startEmulatorProcess({ data: fixtures.dataFile, latencyMs: 0, slugDelayMs: 0, cwd: ctx.tmp });
  return { fixtures, emulator };
}

function expectExit(run, code, what) {
  if (run.timedOut) throw new Error(`${what}: still running after ${INPUT_SETTINGS.timeoutMs / 1000} s, stopped`);
  if (run.code !== code) throw new Error(`${what} exited ${run.code ?? run.signal}, expected ${code}:\n${run.stderr.slice(-2000)}`);
}

function countMatches(text, pattern) {
  return text.match(pattern)?.length ?? 0;
}

export const INPUT_SHAPES = [
  {
    name: 'validate, one organisation with N ids',
    unit: 'ids',
    sizes: [80_000, 160_000],
    async prepare(ctx, n) {
      const file = oneLongList(ctx, `ids-${n}.yaml`, n, (i) => `inv_${pad(i)}`);
      return { args: ['validate', '-f', file], check: (run) => expectExit(run, 0, `validate of ${n} ids`) };
    },
  },
  {
    name: 'validate, N problems',
    unit: 'problems',
    sizes: [100_000, 200_000],
    async prepare(ctx, n) {
      // Unquoted numbers where ids belong: one problem each.
      const file = oneLongList(ctx, `problems-${n}.yaml`, n, (i) => String(i));
      return {
        args: ['validate', '-f', file],
        check(run) {
          expectExit(run, 1, `validate of ${n} problems`);
          if (!`${run.stdout}${run.stderr}`.includes(`${n} problems in 1 file.`)) throw new Error(`validate of ${n} problems did not report them all:\n${run.stdout.slice(-500)}${run.stderr.slice(-500)}`);
        },
      };
    },
  },
  {
    name: 'export of N organisations',
    unit: 'organisations',
    sizes: [50_000, 100_000],
    async prepare(ctx, n) {
      const { emulator } = await leanEmulator(ctx, n);
      return {
        args: ['export', '--base-url', emulator.url, '--parallelism', '16'],
        check(run) {
          expectExit(run, 0, `export of ${n}`);
          const ids = countMatches(run.stdout, /^ {4}id: /gm);
          if (ids !== n) throw new Error(`export of ${n} wrote ${ids} organisations`);
        },
        stop: () => emulator.stop(),
      };
    },
  },
  {
    name: 'export -f FILE --diff, N organisations, each edited',
    unit: 'edits',
    sizes: [10_000, 20_000],
    async prepare(ctx, n) {
      const { fixtures, emulator } = await leanEmulator(ctx, n);
      // A commented file whose every subscriptionID has been renewed on the service since.
      const lines = ['# organisations of the bench', 'version: 1', 'organisations:'];
      for (const slug of fixtures.slugs) {
        const p = slug.slice('org-'.length);
        lines.push(`  # ${slug}: owned by the bench`, `  ${slug}:`, `    id: org_${p}`, '    billing:', `      subscriptionID: sub_old_${p}  # renewed yearly`);
      }
      const file = writeLines(ctx, `diff-${n}.yaml`, lines);
      return {
        args: ['export', '-f', file, '--diff', '--base-url', emulator.url, '--parallelism', '16'],
        check(run) {
          if (run.timedOut || (run.code !== 0 && run.code !== 2)) expectExit(run, 0, `export --diff of ${n}`);
          const added = countMatches(run.stdout, /^\+ {6}subscriptionID: sub_\d+ +# renewed yearly$/gm);
          if (added !== n) throw new Error(`export --diff of ${n} edits showed ${added}`);
        },
        stop: () => emulator.stop(),
      };
    },
  },
];

/** One entry per size: the median wall (and CPU, peak RSS), or why a run did not do what the shape measures. */
async function measureSize(ctx, shape, n, rounds) {
  ctx.log(`bench: inputs: ${shape.name.replace('N', n.toLocaleString('en-US'))}...`);
  const prepared = await shape.prepare(ctx, n);
  const runs = [];
  try {
    for (let r = 1; r <= rounds; r += 1) {
      const run = await runOrgform(prepared.args, { cwd: ctx.tmp, env: ctx.baseEnv(), timeoutMs: INPUT_SETTINGS.timeoutMs, ...ctx.files(`inputs-${n}-${r}`) });
      prepared.check(run);
      runs.push({ wallMs: run.wallMs, cpuMs: run.cpuMs, peakRssMB: run.peakRssKB / 1024 });
    }
  } catch (err) {
    return { n, error: (err instanceof Error ? err.message : String(err)).split('\n').slice(0, 3).join(' ') };
  } finally {
    await prepared.stop?.();
  }
  const of = (field) => median(runs.map((r) => r[field] ?? NaN));
  return { n, wallMs: of('wallMs'), cpuMs: of('cpuMs'), peakRssMB: of('peakRssMB'), wallMsAll: runs.map((r) => Math.round(r.wallMs)) };
}

/** One entry per shape, with the growth factor (NaN when a size failed: the goal is then missed). */
export async function inputCases(ctx, rounds) {
  const cases = [];
  for (const shape of INPUT_SHAPES) {
    const sizes = [];
    for (const n of shape.sizes) sizes.push(await measureSize(ctx, shape, n, rounds));
    const failed = sizes.find((s) => s.error !== undefined);
    const basis = sizes.every((s) => Number.isFinite(s.cpuMs)) ? 'cpuMs' : 'wallMs';
    const growth = failed ? NaN : sizes[1][basis] / sizes[0][basis];
    cases.push({ case: `inputs: ${shape.name}`, kind: 'inputs', unit: shape.unit, sizes, growth, growthOf: basis === 'cpuMs' ? 'CPU' : 'wall', wallGrowth: failed ? NaN : sizes[1].wallMs / sizes[0].wallMs, ...(failed && { error: `at ${failed.n}: ${failed.error}` }) });
  }
  return cases;
}

export function inputGoals(cases) {
  return cases
    .filter((c) => c.kind === 'inputs')
    .map((c) => ({ goal: `${c.case}: growth for a doubling <= ${INPUT_SETTINGS.maxGrowth}`, value: c.error === undefined ? c.growth : `failed ${c.error}`, ok: c.growth <= INPUT_SETTINGS.maxGrowth }));
}

export function renderInputCases(cases, { table, ms }) {
  const inputs = cases.filter((c) => c.kind === 'inputs');
  if (inputs.length === 0) return [];
  const mb = (v) => (Number.isFinite(v) ? `${Math.round(v)} MB` : '-');
  const size = (c, i) => `${c.sizes[i].n.toLocaleString('en-US')} ${c.unit}`;
  const times = (c, i) => (c.sizes[i].error === undefined ? `${ms(c.sizes[i].wallMs)} / ${ms(c.sizes[i].cpuMs)}` : 'failed');
  const factor = (v) => (Number.isFinite(v) ? v.toFixed(2) : '-');
  const rows = inputs.map((c) => [c.case.slice('inputs: '.length), size(c, 0), times(c, 0), size(c, 1), times(c, 1), `${factor(c.growth)} (${c.growthOf})`, factor(c.wallGrowth), mb(c.sizes[1].peakRssMB)]);
  return [
    table(['input (median)', 'size', 'wall / CPU', 'doubled', 'wall / CPU', 'growth', 'wall growth', 'peak RSS (doubled)'], rows),
    `inputs: the built CLI, stdout and stderr to files; the emulator without latency over the lean seed; growth = CPU time of the orgform process at the doubled size ÷ at the first (wall time without GNU time; linear: about 2, quadratic: 4); above ${INPUT_SETTINGS.maxGrowth} fails.`,
    '',
  ];
}
