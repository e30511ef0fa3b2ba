/**
 * Invisible and bidirectional characters end to end, against the emulator over loopback (issue 25,
 * defect 5): a billing value that differs by a zero-width space, and an active organisation whose
 * slug (from the service) holds U+202E. Every human output shows them escaped and marked; the JSON
 * plan keeps the exact values. Nothing here depends on how the service answers the interface's open
 * points, so one profile is enough.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { setupEmulatorWorkspace } from '../support/emulator-workspace.js';
import { runCli } from '../support/run-cli.js';

const CONFIG = `version: 1
activeOrganisation: acme
organisations:
  acme:
    billing:
      subscriptionID: "sub\\u200b_acme"
`;

const HIDDEN = /[\u200B\u202E]/;

async function setup() {
  const world = await setupEmulatorWorkspace({ 'orgs.yaml': CONFIG });
  // The organisation active now, named by the service with a right-to-left override.
  const initech = world.emulator.store.organisations.get('org_initech')!;
  world.emulator.store.putOrganisation({ ...initech, slug: 'evil\u202Egnp.exe' });
  return world;
}

describe('invisible characters in what people read', () => {
  it('shows them escaped and marked in the text plan, the Markdown plan, apply’s output and the job summary, and exact in the JSON plan', async () => {
    const { cwd, env } = await setup();

    const text = await runCli(['plan'], { cwd, env });
    expect(text.stdout).not.toMatch(HIDDEN);
    expect(text.stdout).toContain('subscriptionID: "sub_acme" → "sub\\u200B_acme" (contains invisible characters)');
    expect(text.stdout).toContain('activeOrganisation: evil\\u202Egnp.exe (contains invisible characters) → acme');

    const markdown = await runCli(['plan', '--format', 'markdown'], { cwd, env });
    expect(markdown.stdout).not.toMatch(HIDDEN);
    expect(markdown.stdout).toContain('| &quot;sub&#95;acme&quot; → &quot;sub&#92;u200B&#95;acme&quot; (contains invisible characters) | acme |');
    expect(markdown.stdout).toContain('| evil&#92;u202Egnp.exe (contains invisible characters) → acme | acme |');

    const json = JSON.parse((await runCli(['plan', '--format', 'json'], { cwd, env })).stdout);
    expect(json.changes[0].after).toEqual({ subscriptionID: 'sub\u200b_acme' });
    expect(json.changes[1].before).toEqual({ organisation: 'evil\u202Egnp.exe' });

    const summaryFile = join(cwd, 'step-summary.md');
    const apply = await runCli(['apply', '--auto-approve'], { cwd, env: { ...env, GITHUB_ACTIONS: 'true', GITHUB_WORKSPACE: cwd, GITHUB_STEP_SUMMARY: summaryFile } });
    expect(apply.code).toBe(0);
    expect(apply.stdout + apply.stderr).not.toMatch(HIDDEN);
    expect(apply.stdout).toContain('"sub\\u200B_acme" (contains invisible characters)');
    const summary = await readFile(summaryFile, 'utf8');
    expect(summary).not.toMatch(HIDDEN);
    expect(summary).toContain('### orgform apply');
  });
});
