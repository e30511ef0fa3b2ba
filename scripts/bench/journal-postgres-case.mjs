// The journal case's PostgreSQL arm (journal-case.mjs is the file's; `--only journal` runs both):
// an apply of 12,000 one-shot changes (6,000 organisations, an invitation to revoke and a channel to
// remove each) on an empty PostgreSQL journal and on one that already holds 1,000,000 entries of
// other organisations, paired in each round. Goals as the file's: the big journal costs at most
// 1.2 x the empty one's CPU, and at most 300 MB of peak RSS. The million rows are seeded with SQL
// once, and after each run the run's own are deleted.
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { startPostgres } from '../../test/support/postgres-server.mjs';
import { median, ROOT, runOrgform, startEmulatorProcess } from './processes.mjs';
import { appliedCount, writeStateFixtures } from './state-case.mjs';
import { JOURNAL_SETTINGS } from './journal-case.mjs';

const SEEDED_RUN = '0123456789ab';

/** A PostgreSQL with the schema made and the state `big` holding `entries` rows of organisations the configuration does not name. */
async function seedPostgres(entries) {
  const server = await startPostgres();
  const [{ PostgresState }, { parseStateSpec }, { DEFAULT_STATE_SETTINGS }, { default: pg }] = await Promise.all([
    import(pathToFileURL(join(ROOT, 'dist', 'state', 'postgres', 'postgres-state.js')).href),
    import(pathToFileURL(join(ROOT, 'dist', 'state', 'parse-state-spec.js')).href),
    import(pathToFileURL(join(ROOT, 'dist', 'state', 'state-settings.js')).href),
    import('pg'),
  ]);
  const state = new PostgresState(parseStateSpec(`${server.url}?state=big`, '/'), { settings: DEFAULT_STATE_SETTINGS });
  await (await state.lock({ command: 'bench seed', pid: process.pid, host: 'bench', who: 'bench', startedAt: new Date().toISOString() }, { targets: new Set() })).release();
  const client = new pg.Client({ connectionString: server.url });
  await client.connect();
  await client.query(
    `INSERT INTO orgform.journal (state, service, key, kind, organisation, outcome, at, run, target)
     SELECT 'big', 'http://127.0.0.1:1', 'remove-channel org_x' || i || ' chn_x' || i, 'remove-channel', 'old-' || i, 'applied', now(), $2, 'remove-channel chn_x' || i
       FROM generate_series(1, $1) i`,
    [entries, SEEDED_RUN],
  );
  await client.query('VACUUM ANALYZE orgform.journal');
  const forget = (name) => client.query("DELETE FROM orgform.journal WHERE state = $1 AND run IS DISTINCT FROM $2", [name, SEEDED_RUN]);
  return { url: server.url, forget, stop: async () => (await client.end(), server.stop()) };
}

export async function postgresJournalCase(ctx, rounds) {
  const s = JOURNAL_SETTINGS;
  ctx.log(`bench: journal: apply of ${(2 * s.organisations).toLocaleString('en-US')} one-shot changes on an empty PostgreSQL journal and on one of ${s.entries.toLocaleString('en-US')} entries (${rounds} round(s))...`);
  const fixtures = await writeStateFixtures(ctx.tmp, s.organisations);
  const postgres = await seedPostgres(s.entries);
  const runs = [];
  try {
    for (let r = 1; r <= rounds; r += 1) {
      for (const journal of r % 2 === 1 ? ['empty', 'big'] : ['big', 'empty']) {
        ctx.log(`bench: journal postgres ${journal} (${r}/${rounds})...`);
        const name = journal === 'big' ? 'big' : `empty-${r}`;
        const emulator = await startEmulatorProcess({ data: fixtures.dataFile, latencyMs: s.latencyMs, slugDelayMs: 0, cwd: ctx.tmp });
        try {
          const args = ['apply', '--auto-approve', '-f', fixtures.config, '--base-url', emulator.url, '--parallelism', String(s.parallelism), '--state', `${postgres.url}?state=${name}`, '--no-color'];
          const run = await runOrgform(args, { cwd: ctx.tmp, env: ctx.baseEnv(), timeoutMs: s.timeoutMs, ...ctx.files(`journal-postgres-${journal}-${r}`) });
          const applied = appliedCount(run.stdout);
          if (run.code !== 0 || applied !== fixtures.changes) throw ctx.fail(`orgform apply on the ${journal} PostgreSQL journal (${applied} applied of ${fixtures.changes})`, run);
          const p = run.probe;
          runs.push({ backend: 'postgres', journal, round: r, wallMs: run.wallMs, cpuMs: p ? p.userCpuMs + p.systemCpuMs : null, peakRssMB: run.peakRssKB / 1024 });
        } finally {
          await emulator.stop();
          if (journal === 'big') await postgres.forget('big');
        }
      }
    }
  } finally {
    await postgres.stop();
  }
  const medianOf = (journal, field) => median(runs.filter((x) => x.journal === journal && x[field] !== null).map((x) => x[field]));
  const summary = Object.fromEntries(['empty', 'big'].map((j) => [j, { wallMs: medianOf(j, 'wallMs'), cpuMs: medianOf(j, 'cpuMs'), peakRssMB: medianOf(j, 'peakRssMB') }]));
  return { case: `journal: apply of ${fixtures.changes.toLocaleString('en-US')} one-shot changes, PostgreSQL, empty and ${s.entries.toLocaleString('en-US')} entries`, kind: 'journal-postgres', settings: s, runs, byJournal: summary };
}

export function postgresJournalGoals(cases) {
  const out = [];
  for (const c of cases.filter((x) => x.kind === 'journal-postgres')) {
    const ratio = c.byJournal.big.cpuMs / c.byJournal.empty.cpuMs;
    out.push({ goal: `journal: apply 12,000 on 1M PostgreSQL entries <= ${JOURNAL_SETTINGS.maxCpuOverEmpty} x the empty journal's CPU (median)`, value: ratio, ok: ratio <= JOURNAL_SETTINGS.maxCpuOverEmpty });
    const rss = c.byJournal.big.peakRssMB;
    out.push({ goal: `journal: apply 12,000 on 1M PostgreSQL entries peak RSS <= ${JOURNAL_SETTINGS.maxRssMB} MB (median)`, value: rss, ok: rss <= JOURNAL_SETTINGS.maxRssMB });
  }
  return out;
}

export function renderPostgresJournalCase(cases, { table, ms }) {
  const out = [];
  for (const c of cases.filter((x) => x.kind === 'journal-postgres')) {
    out.push(
      table(
        ['journal (median)', 'runs', 'wall', 'client CPU', 'peak RSS'],
        Object.entries(c.byJournal).map(([j, v]) => [`postgres, ${j}`, c.runs.filter((x) => x.journal === j).length, ms(v.wallMs), ms(v.cpuMs), `${Math.round(v.peakRssMB)} MB`]),
      ),
    );
    out.push(`${c.case}; emulator latency ${c.settings.latencyMs} ms, --parallelism ${c.settings.parallelism}; the two journals paired in each round, in turn first.`);
    out.push('');
  }
  return out;
}
