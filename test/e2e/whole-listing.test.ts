/**
 * The listing is whole, or the run says it is not (issue 31): against the emulator over loopback,
 * an empty page in the middle of the listing is read past by plan, export and apply's listing behind
 * the writes; a listing whose last page links back to the first under fresh cursors, with no
 * totalCount, stops plan, export and apply on the organisation listed again, at once, exit 1.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createClient } from '../../src/api/client.js';
import { runApply } from '../../src/commands/apply/flow.js';
import { generateEmulatorData } from '../../src/emulator/generate-emulator-data.js';
import type { EmulatorOptions } from '../../src/emulator/server.js';
import { setupEmulatorWorkspace } from '../support/emulator-workspace.js';
import { recordingApplyView } from '../support/recording-view.js';
import { runCli } from '../support/run-cli.js';

/** 60 organisations in pages of 50, the second page coming empty first; orgs.yaml changes the e-mail of the last few by slug. */
async function pagedWorld(options: EmulatorOptions = {}) {
  const data = generateEmulatorData({ organisations: 60 });
  const late = [...data.organisations].sort((a, b) => (a.slug < b.slug ? -1 : 1)).slice(-3);
  const lines = ['version: 1', 'organisations:'];
  for (const o of late) lines.push(`  ${o.slug}:`, '    billing:', `      billingEmail: new-${o.slug}@example.com`);
  const world = await setupEmulatorWorkspace({ 'orgs.yaml': `${lines.join('\n')}\n` }, { data, ...options, behaviour: { 'page-size': 'fixed-50', 'empty-pages': 'one', ...options.behaviour } });
  return { ...world, late };
}

describe('an empty page in the middle of the listing', () => {
  it('is read past: plan finds the organisations after it, and apply sets them', async () => {
    const { cwd, env, emulator, late } = await pagedWorld();
    const plan = await runCli(['plan', '--detailed-exitcode'], { cwd, env });
    expect(plan.stdout).not.toContain('not among the organisations you belong to');
    expect([plan.code, plan.stderr]).toEqual([2, '']);
    for (const o of late) expect(plan.stdout).toContain(`new-${o.slug}@example.com`);

    const apply = await runCli(['apply', '--auto-approve'], { cwd, env });
    expect(apply.code, apply.stdout + apply.stderr).toBe(0);
    for (const o of late) expect(emulator.store.organisations.get(o.id)?.billing?.billingEmail).toBe(`new-${o.slug}@example.com`);
  });

  it('is read past by export: every organisation is in the file', async () => {
    const { cwd, env } = await pagedWorld();
    const result = await runCli(['export', '--out', 'all.yaml'], { cwd, env });
    expect(result.code, result.stderr).toBe(0);
    expect((await readFile(join(cwd, 'all.yaml'), 'utf8')).match(/^ {4}id: /gm)).toHaveLength(60);
  });
});

describe('a listing that cycles under fresh cursors, without totalCount', () => {
  const cycling = { behaviour: { 'fresh-cursors': 'on' as const } };

  it('stops plan at the organisation listed again, naming it and the pages, after a handful of requests, exit 1', async () => {
    const { cwd, env, emulator } = await pagedWorld(cycling);
    emulator.faults.add({ operation: 'getOrganisations', times: Infinity, fault: { kind: 'cycle' } });
    const plan = await runCli(['plan'], { cwd, env });
    expect(plan.code).toBe(1);
    expect(plan.stderr).toMatch(/organisation "[^"]+" is listed again on page 4, after page 1: the "next" links lead back over pages already read \(a cycle\)/);
    expect(plan.stderr).toContain('The listing stopped at page 4, after 60 organisations; nothing is made from a partial listing');
    expect(plan.stdout).not.toContain('Plan:');
    expect(emulator.counters.byOperation.getOrganisations).toBeLessThanOrEqual(5);
  });

  it('stops export the same way, and writes no file', async () => {
    const { cwd, env, emulator } = await pagedWorld(cycling);
    emulator.faults.add({ operation: 'getOrganisations', times: Infinity, fault: { kind: 'cycle' } });
    const result = await runCli(['export', '--out', 'all.yaml'], { cwd, env });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('is listed again on page 4');
    await expect(readFile(join(cwd, 'all.yaml'), 'utf8')).rejects.toThrow(/ENOENT/);
  });

  it("fails the change apply's listing behind the writes cannot reach because it cycles, naming the cycle, and writes nothing for it", async () => {
    const { cwd, emulator, late } = await pagedWorld(cycling);
    const [first, second, gone] = late as [(typeof late)[0], (typeof late)[0], (typeof late)[0]];
    // 60 organisations in pages of 50: one listing costs fewer requests than 3 reads by id.
    const outcome = await runApply(
      { selection: { files: [] }, parallelism: 2, autoApprove: false, backoffBaseMs: 5 },
      {
        cwd,
        now: Date.now,
        signal: new AbortController().signal,
        openClient: async () => ({ client: createClient({ baseUrl: emulator.url, token: 'demo-token' }) }),
        // Approved; then one organisation is deleted, so that the listing behind the writes reads on
        // to its end looking for it, and from here on the listing cycles.
        confirmation: {
          ask: async () => {
            emulator.store.removeOrganisation(gone.id);
            emulator.faults.add({ operation: 'getOrganisations', times: Infinity, fault: { kind: 'cycle' } });
            return true;
          },
        },
      },
      recordingApplyView(),
    );
    expect(outcome).toMatchObject({ kind: 'applied', summary: { failed: 1, applied: 2 } });
    const [failed] = (outcome as { summary: { notApplied: Array<{ organisation: string; failure?: { message: string } }> } }).summary.notApplied;
    expect(failed?.organisation).toBe(gone.slug);
    expect(failed?.failure?.message).toMatch(/is listed again on page 4, after page 1: .*\(a cycle\).*; the listing apply reads just before writing failed before it reached organisation/);
    for (const o of [first, second]) expect(emulator.store.organisations.get(o.id)?.billing?.billingEmail).toBe(`new-${o.slug}@example.com`);
    expect(emulator.counters.byOperation.getOrganisations).toBeLessThanOrEqual(10);
  });
});
