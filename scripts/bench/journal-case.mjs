// The journal case (issues 35 and 36): does a big file journal cost an apply anything? An apply of
// 12,000 one-shot changes (6,000 organisations, each with an invitation to revoke and a channel to
// remove), latency 0, with an empty journal file and with one of 1,000,000 entries of organisations
// the configuration does not name, paired, in turn; then `state list` and `state pull` of that
// journal (1,012,000 entries by then). Goals: the apply's CPU on the big journal <= 1.2 x on the
// empty one (median), its peak RSS <= 300 MB; list and pull work (exit 0, every entry).
import { copyFileSync, createWriteStream, existsSync } from 'node:fs';
import { join } from 'node:path';
import { once } from 'node:events';
import { writeStateFixtures } from './state-case.mjs';
import { median, runOrgform, startEmulatorProcess } from './processes.mjs';

export const JOURNAL_SETTINGS = { organisations: 6_000, entries: 1_000_000, latencyMs: 0, parallelism: 16, maxCpuOverEmpty: 1.2, maxRssMB: 300, timeoutMs: 600_000 };

/** A version 2 base of `n` entries of another service's organisations, written once (about 230 MB). */
async function writeBigJournal(path, n) {
  if (existsSync(path)) return;
  const out = createWriteStream(path);
  const write = async (text) => {
    if (!out.write(text)) await once(out, 'drain');
  };
  await write('{"orgformJournal":2}\n');
  let chunk = '';
  for (let i = 0; i < n; i += 1) {
    const id = String(i).padStart(7, '0');
    const entry = { at: '2025-06-01T12:00:00.000Z', kind: 'remove-channel', organisation: `old-org-${id}`, outcome: 'applied', run: '0123456789ab' };
    chunk += `${JSON.stringify({ service: 'https://orgs.example.com', key: `remove-channel org_x${id} chn_x${id}`, entry })}\n`;
    if (chunk.length > 1 << 20) {
      await write(chunk);
      chunk = '';
    }
  }
  await write(chunk);
  out.end();
  await once(out, 'finish');
}

/** One apply with the journal `seed` copied in (or none), against a fresh emulator. */
async function applyOnce(ctx, fixtures, seed, label) {
  const state = join(ctx.tmp, `journal-${label}.json`);
  if (seed !== undefined) copyFileSync(seed, state);
  const emulator = await startEmulatorProcess({ data: fixtures.dataFile, latencyMs: JOURNAL_SETTINGS.latencyMs, slugDelayMs: 0, cwd: ctx.tmp });
  try {
    const args = ['apply', '--auto-approve', '-f', fixtures.config, '--base-url', emulator.url, '--parallelism', String(JOURNAL_SETTINGS.parallelism), '--state', state, '--no-color'];
    const run = await runOrgform(args, { cwd: ctx.tmp, env: ctx.baseEnv(), timeoutMs: JOURNAL_SETTINGS.timeoutMs, ...ctx.files(label) });
    if (run.code !== 0 || !run.stdout.includes(`Apply complete: ${fixtures.changes} applied`)) throw ctx.fail(`orgform apply with the journal ${label}`, run);
    return { state, run: { label, wallMs: run.wallMs, cpuMs: run.cpuMs, peakRssMB: run.peakRssKB / 1024 } };
  } finally {
    await emulator.stop();
  }
}

/** `state list` or `state pull` of `state`: what it cost, and how many entries it gave. */
async function readOnce(ctx, state, command, label) {
  const run = await runOrgform(['state', command, '--state', state], { cwd: ctx.tmp, env: ctx.baseEnv(), timeoutMs: JOURNAL_SETTINGS.timeoutMs, ...ctx.files(label) });
  if (run.code !== 0) throw ctx.fail(`orgform state ${command} of a big journal`, run);
  let lines = 0;
  for (let at = run.stdout.indexOf('\n'); at >= 0; at = run.stdout.indexOf('\n', at + 1)) lines += 1;
  return { command, wallMs: run.wallMs, cpuMs: run.cpuMs, peakRssMB: run.peakRssKB / 1024, lines, outMB: Buffer.byteLength(run.stdout) / 2 ** 20 };
}

export async function journalCase(ctx, rounds) {
  const s = JOURNAL_SETTINGS;
  ctx.log(`bench: journal: apply of ${(2 * s.organisations).toLocaleString('en-US')} one-shot changes on an empty journal and on one of ${s.entries.toLocaleString('en-US')} entries (${rounds} round(s))...`);
  const fixtures = await writeStateFixtures(ctx.tmp, s.organisations);
  const seed = join(ctx.tmp, 'journal-seed.json');
  await writeBigJournal(seed, s.entries);
  const runs = [];
  let big;
  for (let r = 1; r <= rounds; r += 1) {
    // Paired, the order turning round from one round to the next.
    const order = r % 2 === 1 ? ['empty', 'big'] : ['big', 'empty'];
    for (const kind of order) {
      ctx.log(`bench: journal ${kind} (${r}/${rounds})...`);
      const done = await applyOnce(ctx, fixtures, kind === 'big' ? seed : undefined, `journal-${kind}-${r}`);
      runs.push({ kind, round: r, ...done.run });
      if (kind === 'big') big = done.state;
    }
  }
  const reads = [await readOnce(ctx, big, 'list', 'journal-list'), await readOnce(ctx, big, 'pull', 'journal-pull')];
  const of = (kind, field) => median(runs.filter((x) => x.kind === kind).map((x) => x[field]));
  const stats = Object.fromEntries(['empty', 'big'].map((kind) => [kind, { wallMs: of(kind, 'wallMs'), cpuMs: of(kind, 'cpuMs'), peakRssMB: of(kind, 'peakRssMB') }]));
  return { case: `journal: apply of ${fixtures.changes.toLocaleString('en-US')} one-shot changes, latency ${s.latencyMs} ms, parallelism ${s.parallelism}`, kind: 'journal', settings: s, runs, stats, reads, entries: s.entries + fixtures.changes };
}

export function journalGoals(cases) {
  const s = JOURNAL_SETTINGS;
  return cases
    .filter((c) => c.kind === 'journal')
    .flatMap((c) => [
      { goal: `journal: apply CPU on ${s.entries.toLocaleString('en-US')} entries <= ${s.maxCpuOverEmpty} x on an empty journal (median)`, value: c.stats.big.cpuMs / c.stats.empty.cpuMs, ok: c.stats.big.cpuMs / c.stats.empty.cpuMs <= s.maxCpuOverEmpty },
      { goal: `journal: apply peak RSS on ${s.entries.toLocaleString('en-US')} entries <= ${s.maxRssMB} MB (median)`, value: `${Math.round(c.stats.big.peakRssMB)} MB`, ok: c.stats.big.peakRssMB <= s.maxRssMB },
      ...c.reads.map((read) => {
        const expected = read.command === 'pull' ? c.entries + 1 : undefined;
        return { goal: `journal: state ${read.command} of ${c.entries.toLocaleString('en-US')} entries works`, value: `${read.lines} lines`, ok: expected === undefined ? read.lines > c.entries : read.lines === expected };
      }),
    ]);
}

export function renderJournalCase(cases, { table, ms }) {
  const out = [];
  for (const c of cases.filter((x) => x.kind === 'journal')) {
    out.push(
      table(
        ['journal (median)', 'runs', 'wall', 'CPU', 'CPU over empty', 'peak RSS'],
        ['empty', 'big'].map((kind) => [kind === 'empty' ? 'empty journal' : `${c.settings.entries.toLocaleString('en-US')} entries`, c.runs.filter((x) => x.kind === kind).length, ms(c.stats[kind].wallMs), ms(c.stats[kind].cpuMs), `${(c.stats[kind].cpuMs / c.stats.empty.cpuMs).toFixed(3)} x`, `${Math.round(c.stats[kind].peakRssMB)} MB`]),
      ),
    );
    out.push(table(['reading it whole', 'wall', 'CPU', 'peak RSS', 'output'], c.reads.map((r) => [`state ${r.command} of ${c.entries.toLocaleString('en-US')}`, ms(r.wallMs), ms(r.cpuMs), `${Math.round(r.peakRssMB)} MB`, `${r.lines.toLocaleString('en-US')} lines, ${Math.round(r.outMB)} MB`])));
    out.push(`${c.case}; the big journal is a version 2 base of another service's entries; each run a fresh emulator and a fresh copy.`);
    out.push('');
  }
  return out;
}
