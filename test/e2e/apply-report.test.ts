/**
 * `apply --report html=FILE` end to end against the emulator: the page is written at the end of
 * the run however it ends (done under a 429, failed, interrupted, refused), says what was done and
 * what was not, and its path is checked before anything is read. The job summary draws the run.
 */
import { mkdir, readFile, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { setupBillingWorld } from '../support/emulator-workspace.js';
import { runCli } from '../support/run-cli.js';

const REPORT = 'reports/apply.html';

/** The page's table rows (outcome, organisation, kind, change, why, took), as its script draws them. */
function rows(page: string): string[][] {
  const json = /<script type="application\/json" id="orgform-data">([^<]*)<\/script>/.exec(page)![1]!;
  return (JSON.parse(json) as { rows: string[][] }).rows;
}

async function apply(world: { cwd: string; env: Record<string, string> }, extra: string[] = [], options: { env?: Record<string, string>; signal?: AbortSignal } = {}) {
  const result = await runCli(['apply', '--auto-approve', '--parallelism', '2', '--report', `html=${REPORT}`, ...extra], { cwd: world.cwd, env: { ...world.env, ...options.env }, ...(options.signal ? { signal: options.signal } : {}) });
  const page = await readFile(join(world.cwd, REPORT), 'utf8').catch(() => undefined);
  return { ...result, page };
}

describe('apply --report html=FILE', () => {
  it('writes the run as a page, every request counted, with its wait for a 429 in the chart, and the job summary draws it too', async () => {
    const world = await setupBillingWorld(6);
    world.emulator.faults.add({ operation: 'updateBillingDetails', fault: { kind: 'status', status: 429, retryAfter: 1 } });
    const summaryFile = join(world.cwd, 'summary.md');
    const { code, page } = await apply(world, [], { env: { GITHUB_ACTIONS: 'true', GITHUB_WORKSPACE: world.cwd, GITHUB_STEP_SUMMARY: summaryFile } });
    expect(code).toBe(0);
    expect(page).toContain('<p><strong>Complete: 6 changes applied, 0 already done.</strong></p>');
    expect(page).toContain(`for <code>${world.emulator.url.replace(/\/$/, '')}</code>`);
    // Counted as the transport tells them: every request the service was sent, the plan's reads and the retried 429 included.
    expect(page).toContain(`<li>${world.emulator.counters.total} requests in `);
    expect(world.emulator.counters.total).toBeGreaterThan(7);
    expect(page).toContain('<li>1 answer was 429 (too many requests).</li>');
    expect(page).toMatch(/<li>Every request was held back once, 1 s in all;/);
    expect(page).toMatch(/<svg class="chart"[^>]*>[\s\S]*<rect class="pause"/);
    expect(rows(page!).map((r) => r[0])).toEqual(Array(6).fill('applied'));
    const summary = await readFile(summaryFile, 'utf8');
    expect(summary.indexOf('#### The run over time')).toBeGreaterThan(summary.indexOf('| ✗ failed | 0 |'));
    expect(summary).toContain('- 1 answer was 429 (too many requests).');
    expect(summary.match(/```mermaid\n%%\{init: [^\n]*\}%%\nxychart-beta\n/g)).toHaveLength(3);
  });

  it('of a failed apply, puts the failures first and in full, and says what was applied', async () => {
    const world = await setupBillingWorld(5);
    world.emulator.faults.add({ operation: 'updateBillingDetails', times: 2, fault: { kind: 'status', status: 422, body: '{"code":"invalid","message":"<b>not</b> an address"}', contentType: 'application/json' } });
    const { code, page } = await apply(world);
    expect(code).toBe(1);
    expect(page).toContain('<p><strong>Finished with 2 failures; run orgform apply again to retry what is left.</strong></p>');
    expect(page).toContain('<h2 id="failures-heading">Failures (2)</h2>');
    expect(page).toContain('<dt>error</dt><dd>invalid: &lt;b&gt;not&lt;/b&gt; an address</dd>');
    const outcomes = rows(page!).map((r) => r[0]);
    expect(outcomes).toEqual(['failed', 'failed', 'applied', 'applied', 'applied']);
    expect(world.changed()).toBe(3);
  });

  it('of an interrupted apply, says what was applied and what was not started, as the service holds it', async () => {
    const world = await setupBillingWorld(6);
    // The first write is held at the emulator while the run is interrupted.
    world.emulator.faults.add({ operation: 'updateBillingDetails', fault: { kind: 'delay-headers', ms: 1_500 } });
    const controller = new AbortController();
    const run = apply(world, ['--parallelism', '1'], { signal: controller.signal });
    const started = Date.now();
    while (world.emulator.counters.writes === 0 && Date.now() - started < 10_000) await new Promise((r) => setTimeout(r, 5));
    controller.abort();
    const { code, page } = await run;
    expect(code).toBe(1);
    const applied = world.changed();
    expect(applied).toBeGreaterThanOrEqual(1);
    expect(page).toContain(`<p><strong>Interrupted: ${applied} applied, ${6 - applied} not started; run orgform apply again to finish.</strong></p>`);
    expect(rows(page!).filter((r) => r[0] === 'not started')).toHaveLength(6 - applied);
  });

  it('of a refused apply, says that it stopped before changing anything, and why', async () => {
    const world = await setupBillingWorld(3);
    const { code, stderr, page } = await apply(world, ['--max-changes', '1']);
    expect(code).toBe(1);
    expect(stderr).toContain('more than --max-changes 1');
    expect(page).toContain('<p><strong>Apply stopped before it changed anything.</strong></p>');
    expect(page).toContain('<strong>Why apply stopped:</strong> The plan has 3 changes, more than --max-changes 1. Nothing was changed.');
    expect(world.changed()).toBe(0);
  });

  it('refuses a path it could not write before anything is read: a directory, a link out of the working tree', async () => {
    const world = await setupBillingWorld(2);
    await mkdir(join(world.cwd, '.git'));
    await mkdir(join(world.cwd, 'reports'));
    await symlink(join(tmpdir(), 'elsewhere.html'), join(world.cwd, 'reports', 'out.html'));
    for (const [path, said] of [
      ['reports', 'Cannot write reports: it is a directory.'],
      ['reports/out.html', 'Cannot write reports/out.html: '],
    ] as const) {
      const result = await runCli(['apply', '--auto-approve', '--report', `html=${path}`], { cwd: world.cwd, env: world.env });
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(said);
    }
    expect(world.emulator.counters.total).toBe(0);
    const wrongKind = await runCli(['apply', '--auto-approve', '--report', 'codequality=cq.json'], { cwd: world.cwd, env: world.env });
    expect(wrongKind.stderr).toContain('--report must be KIND=FILE with KIND one of html (got "codequality=cq.json")');
  });
});
