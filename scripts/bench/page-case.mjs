// The bench's page case (issue 34): the plan page of a 100,000-change plan. How long orgform takes
// to write it (`orgform show PLANFILE --format html` of the plan saved, a process each run: reading
// and checking the saved plan included; the first run, then the median of the others), its size and
// the process's peak RSS, and how long Chromium (Debian's, driven by playwright-core) takes to open it (to the page's
// own `orgform-ready` mark, which its script sets once the first rows are drawn) and to filter it
// (by organisation, by field, and to one group at the press of its button: from the input to the
// frame after the rows are drawn).
import { mkdtempSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { median, ROOT, runOrgform } from './processes.mjs';

export const PAGE_SETTINGS = { changes: 100_000, writeRuns: 3, openRuns: 3, goals: { writeMs: 1_000, openMs: 2_000, filterMs: 200 } };

/**
 * `n` changes as a bulk move makes them: 60 % a platformID moved in three patterns, 20 % a billing
 * e-mail of their own, 10 % an invitation revoked, 10 % a notification channel removed; one an
 * organisation, sorted by slug as a plan is.
 */
export function bulkPlan(n) {
  const changes = [];
  for (let i = 0; i < n; i++) {
    const slug = `org-${String(i).padStart(6, '0')}`;
    const organisation = { slug, id: `org_${i}` };
    const k = i % 10;
    if (k < 6) {
      const to = `plat_bulk_${(k % 3) + 1}`;
      changes.push({ address: `organisations.${slug}.billing`, kind: 'billing', action: 'update', organisation, declared: { platformID: to }, seen: { platformID: 'plat_legacy' }, display: { fields: [{ field: 'platformID', before: 'plat_legacy', after: to }] } });
    } else if (k < 8) {
      const to = `billing+${i}@${slug}.example`;
      changes.push({ address: `organisations.${slug}.billing`, kind: 'billing', action: 'update', organisation, declared: { billingEmail: to }, seen: { billingEmail: `accounts+${i}@${slug}.example` }, display: { fields: [{ field: 'billingEmail', before: `accounts+${i}@${slug}.example`, after: to }] } });
    } else if (k === 8) {
      changes.push({ address: `organisations.${slug}.invitations.revoke.inv_${i}`, kind: 'revoke-invitation', action: 'delete', organisation, targetId: `inv_${i}`, display: { note: 'cannot be checked before apply: the interface cannot list invitations' } });
    } else {
      changes.push({ address: `organisations.${slug}.notificationChannels.remove.chn_${i}`, kind: 'remove-channel', action: 'delete', organisation, targetId: `chn_${i}`, display: { note: 'cannot be checked before apply: the interface cannot list notification channels' } });
    }
  }
  return { formatVersion: 3, baseUrl: 'https://orgs.example.test', changes, unchanged: [], problems: [], journaled: [], observed: {}, observedActiveId: null };
}

const FILTER = `async ({ selector, value, click }) => {
  const frame = () => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)));
  const t0 = performance.now();
  const el = document.querySelector(selector);
  if (click) el.click();
  else {
    el.value = value;
    el.dispatchEvent(new Event(el.tagName === 'SELECT' ? 'change' : 'input', { bubbles: true }));
  }
  await frame();
  return { ms: performance.now() - t0, status: document.getElementById('status').textContent };
}`;

export async function pageCase(ctx, rounds) {
  const { log, tmp } = ctx;
  const { SAVED_PLAN_VERSION, serializeSavedPlan } = await import(pathToFileURL(join(ROOT, 'dist', 'plan', 'saved-plan.js')).href);
  const { chromium } = await import('playwright-core');
  const n = PAGE_SETTINGS.changes;
  log(`bench: page: the plan page of ${n.toLocaleString('en-US')} changes...`);
  const planFile = join(tmp, 'plan-page.bin');
  const desired = { version: 1, organisations: [], files: [] };
  writeFileSync(planFile, serializeSavedPlan({ orgformSavedPlan: SAVED_PLAN_VERSION, createdAt: new Date(0).toISOString(), baseUrl: 'https://orgs.example.test', configFiles: [], workdir: '.', desired, selection: { targets: [], shard: null }, plan: bulkPlan(n) }));
  const file = join(tmp, 'plan-page.html');
  const writes = [];
  for (let r = 0; r < Math.max(PAGE_SETTINGS.writeRuns, rounds); r++) {
    const run = await runOrgform(['show', planFile, '--format', 'html'], { cwd: tmp, env: { PATH: process.env.PATH ?? '' }, outFile: file, errFile: join(tmp, 'plan-page.err'), timeFile: join(tmp, 'plan-page.time') });
    if (run.code !== 0) throw new Error(`page: orgform show --format html exited ${run.code}: ${run.stderr}`);
    writes.push({ ms: run.wallMs, peakRssKB: run.peakRssKB });
  }
  const bytes = statSync(file).size;
  const savedBytes = statSync(planFile).size;
  const profile = mkdtempSync(join(tmp, 'chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.ORGFORM_TEST_CHROMIUM ?? '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
    viewport: { width: 1280, height: 1000 },
  });
  const runs = [];
  try {
    for (let r = 0; r < Math.max(PAGE_SETTINGS.openRuns, rounds); r++) {
      const page = await context.newPage();
      const requests = [];
      page.on('request', (q) => requests.push(q.url()));
      const started = performance.now();
      await page.goto(pathToFileURL(file).href);
      await page.waitForSelector('html[data-ready="true"]', { timeout: 60_000 });
      const openWallMs = performance.now() - started;
      const openMs = await page.evaluate(() => performance.getEntriesByName('orgform-ready')[0].startTime);
      const byOrganisation = await page.evaluate(`(${FILTER})(${JSON.stringify({ selector: '#filter-organisation', value: 'org-054321' })})`);
      const cleared = await page.evaluate(`(${FILTER})(${JSON.stringify({ selector: '#filter-organisation', value: '' })})`);
      const byField = await page.evaluate(`(${FILTER})(${JSON.stringify({ selector: '#filter-field', value: 'billingEmail' })})`);
      await page.evaluate(`(${FILTER})(${JSON.stringify({ selector: '#filter-field', value: '' })})`);
      const byGroup = await page.evaluate(`(${FILTER})(${JSON.stringify({ selector: 'button[data-group="g0"]', click: true })})`);
      if (byOrganisation.status !== `1 of ${(n).toLocaleString('en')} rows match.`) throw new Error(`page: filtering by organisation said ${JSON.stringify(byOrganisation.status)}`);
      if (requests.length !== 1) throw new Error(`page: the page made requests: ${requests.slice(1).join(', ')}`);
      runs.push({ openMs, openWallMs, filterOrganisationMs: byOrganisation.ms, clearMs: cleared.ms, filterFieldMs: byField.ms, filterGroupMs: byGroup.ms });
      await page.close();
    }
  } finally {
    await context.close();
  }
  const m = (field) => median(runs.map((x) => x[field]));
  return {
    case: `plan page of ${n.toLocaleString('en-US')} changes`,
    kind: 'page',
    changes: n,
    bytes,
    savedBytes,
    writeColdMs: writes[0].ms,
    writeMs: median(writes.slice(1).map((w) => w.ms)),
    writePeakRssKB: Math.max(...writes.map((w) => w.peakRssKB ?? 0)),
    openMs: m('openMs'),
    openWallMs: m('openWallMs'),
    filterOrganisationMs: m('filterOrganisationMs'),
    clearMs: m('clearMs'),
    filterFieldMs: m('filterFieldMs'),
    filterGroupMs: m('filterGroupMs'),
    runs,
  };
}

export function renderPageCase(cases, { table, ms }) {
  const page = cases.filter((c) => c.kind === 'page');
  if (page.length === 0) return [];
  return [
    table(
      ['page (median)', 'size (saved plan)', 'write (first)', 'write', 'peak RSS', 'open in Chromium', 'open, seen from outside', 'filter: organisation', 'clear', 'filter: field', 'one group'],
      page.map((c) => [c.case, `${(c.bytes / 2 ** 20).toFixed(1)} MiB (${(c.savedBytes / 2 ** 20).toFixed(1)} MiB)`, ms(c.writeColdMs), ms(c.writeMs), c.writePeakRssKB > 0 ? `${Math.round(c.writePeakRssKB / 1024)} MiB` : '–', ms(c.openMs), ms(c.openWallMs), ms(c.filterOrganisationMs), ms(c.clearMs), ms(c.filterFieldMs), ms(c.filterGroupMs)]),
    ),
    'page: written by `orgform show PLANFILE --format html`, a process each run, from its start to its exit (reading and checking the saved plan included; the first run, then the median of the others); open = from navigation to the page’s orgform-ready mark (HTML and JSON parsed, first 500 rows drawn), and as playwright sees it from goto to the mark; filter = from the input to the second frame after.',
    '',
  ];
}

export function pageGoals(cases) {
  const g = PAGE_SETTINGS.goals;
  return cases
    .filter((c) => c.kind === 'page')
    .flatMap((c) => [
      { goal: `page of 100,000: written by orgform show < ${g.writeMs} ms (the first run)`, value: c.writeColdMs, ok: c.writeColdMs < g.writeMs },
      { goal: `page of 100,000: opened by Chromium < ${g.openMs} ms (seen from outside)`, value: c.openWallMs, ok: c.openWallMs < g.openMs },
      { goal: `page of 100,000: filtered < ${g.filterMs} ms (the slowest filter)`, value: Math.max(c.filterOrganisationMs, c.clearMs, c.filterFieldMs, c.filterGroupMs), ok: Math.max(c.filterOrganisationMs, c.clearMs, c.filterFieldMs, c.filterGroupMs) < g.filterMs },
    ]);
}
