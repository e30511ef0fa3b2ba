/**
 * What a long apply prints in a log (CI: no terminal, text format), end to end against the
 * emulator: a digest of the plan instead of the whole plan, progress lines instead of one line per
 * change, every failure in full, the summary; and --format json still one event per change.
 */
import { describe, expect, it } from 'vitest';
import { COMPACT_THRESHOLD } from '../../src/text/plan/render-text.js';
import { setupBillingWorld } from '../support/emulator-workspace.js';
import { runCli } from '../support/run-cli.js';

// Above the compact threshold (50) with room for the digest's first ten and its "… and N more".
const ORGANISATIONS = 80;
const PROGRESS_MS = 50;
const PROGRESS_LINE = /^\[ *\d+\/\d+ \] /;
const FINANCE = (slug: string) => `finance+${slug}@example.com`;

/** Every organisation's billing e-mail changed: one billing change each. */
async function setup() {
  // A little latency, so that the apply lasts long enough for a progress line or two.
  const world = await setupBillingWorld(ORGANISATIONS, { latencyMs: 25 }, FINANCE);
  return { ...world, env: { ...world.env, ORGFORM_PROGRESS_INTERVAL_MS: String(PROGRESS_MS) } };
}

describe('apply output in a log, above the compact threshold', () => {
  it('summarises the plan, prints progress lines and every failure in full rather than a line per change, then the summary', async () => {
    expect(ORGANISATIONS).toBeGreaterThan(COMPACT_THRESHOLD);
    const { cwd, env, emulator } = await setup();
    emulator.faults.add({ operation: 'updateBillingDetails', fault: { kind: 'status', status: 422 } });
    const started = Date.now();
    const result = await runCli(['apply', '--auto-approve'], { cwd, env });
    const tookMs = Date.now() - started;
    expect(result.stderr).toBe('');
    expect(result.code).toBe(1);
    const out = result.stdout;
    const lines = out.trimEnd().split('\n');

    // The plan's digest: counts, the same change said once (a few of the single changes), where to see them all; not the whole plan.
    expect(out).toContain(`orgform will perform ${ORGANISATIONS} changes:\n  ~ update  ${ORGANISATIONS}: ${ORGANISATIONS} billing updates\n`);
    expect(out).toContain(`  ~ Billing: billingEmail — ${ORGANISATIONS} organisations: ${ORGANISATIONS} single changes\n`);
    expect(out).toContain('      org-00001: "billing+00001@example.com" → "finance+org-00001@example.com"\n');
    expect(out).toContain(`      … and ${ORGANISATIONS - 5} more single changes\n`);
    expect(out).toContain('See every change with `orgform plan`');
    expect(out).not.toContain(`organisations.org-${String(ORGANISATIONS).padStart(5, '0')}.billing: billingEmail`);
    expect(out).toContain(`Plan: ${ORGANISATIONS} to change, 0 to remove, 0 to accept.`);

    // Progress lines, no more often than the interval; no line per applied change.
    const progress = lines.filter((l) => PROGRESS_LINE.test(l));
    expect(progress.length).toBeGreaterThanOrEqual(1);
    expect(progress.length).toBeLessThanOrEqual(Math.ceil(tookMs / PROGRESS_MS) + 1);
    expect(progress[0]).toMatch(new RegExp(`^\\[ *\\d+/${ORGANISATIONS} \\] .*elapsed \\d+s$`));
    expect(out).not.toMatch(/^✓ /m);
    expect(lines.length - progress.length).toBeLessThan(40);

    // The failure in full as it happened, and again in the summary, with its organisation.
    const failed = /^✗ organisations\.(org-\d{5})\.billing failed: updateBillingDetails: HTTP 422 .*$/m.exec(out);
    expect(failed, out).not.toBeNull();
    const slug = failed![1];
    expect(out).toContain(`Failures:\n  ✗ ${slug}: organisations.${slug}.billing\n      operation: updateBillingDetails (HTTP 422)\n      error: `);
    expect(out).toContain(`Apply results: ${ORGANISATIONS - 1} applied, 0 already done, 0 skipped, 0 not started, 1 failed (${ORGANISATIONS} changes in `);
    expect(lines.at(-1)).toBe('Apply finished with 1 failure: run orgform apply again to retry what is left.');
  });

  it('folds the progress section in a GitHub Actions group, its content guarded', async () => {
    const { cwd, env } = await setup();
    const result = await runCli(['apply', '--auto-approve'], { cwd, env: { ...env, GITHUB_ACTIONS: 'true', GITHUB_WORKSPACE: cwd } });
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(new RegExp(`::group::Applying ${ORGANISATIONS} changes\\n::stop-commands::([0-9a-f]{32})\\nApplying ${ORGANISATIONS} changes, 10 at a time\\.[^\\n]*\\n(\\[ *\\d+/${ORGANISATIONS} \\][^\\n]*\\n)*::\\1::\\n::endgroup::\\n`));
    expect(result.stdout).toContain(`Apply complete: ${ORGANISATIONS} applied, 0 already done.`);
  });

  it('still prints one change_end event per change with --format json', async () => {
    const { cwd, env } = await setup();
    const result = await runCli(['apply', '--auto-approve', '--format', 'json'], { cwd, env });
    expect(result.code).toBe(0);
    const events = result.stdout.trim().split('\n').map((line) => JSON.parse(line) as { type: string; address?: string });
    const ends = events.filter((e) => e.type === 'change_end');
    expect(ends).toHaveLength(ORGANISATIONS);
    expect(new Set(ends.map((e) => e.address)).size).toBe(ORGANISATIONS);
    expect(events.at(-1)?.type).toBe('apply_end');
  });

  it('refuses a progress interval that is not a whole number of milliseconds, changing nothing', async () => {
    const { cwd, env, emulator } = await setup();
    const result = await runCli(['apply', '--auto-approve'], { cwd, env: { ...env, ORGFORM_PROGRESS_INTERVAL_MS: '5s' } });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('ORGFORM_PROGRESS_INTERVAL_MS must be a whole number from 10 to 3600000 (got "5s").');
    expect(emulator.counters.writes).toBe(0);
  });
});

describe('apply output in a log, at or below the compact threshold', () => {
  it('prints the whole plan and one line per change, as always', async () => {
    const { cwd, env } = await setupBillingWorld(COMPACT_THRESHOLD, {}, FINANCE);
    const result = await runCli(['apply', '--auto-approve'], { cwd, env });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('  # org-00050 (org_00050)\n  ~ organisations.org-00050.billing\n');
    expect(result.stdout.match(/^✓ organisations\.org-\d{5}\.billing applied/gm)).toHaveLength(COMPACT_THRESHOLD);
    expect(result.stdout).not.toMatch(/^\[ *\d+\/\d+ \] /m);
  });
});
