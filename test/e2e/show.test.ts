/**
 * `orgform show PLANFILE`, end to end: a saved plan shown as plan showed it, offline, and refused
 * as apply refuses it when it is not one orgform wrote.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { setupEmulatorWorkspace } from '../support/emulator-workspace.js';
import { runCli } from '../support/run-cli.js';
import { CHANGING_CONFIG } from '../support/workspace.js';

describe('orgform show PLANFILE', () => {
  it('shows a saved plan exactly as plan showed it, in each format, without a request to the service', async () => {
    const { cwd, env, emulator } = await setupEmulatorWorkspace({ 'orgs.yaml': CHANGING_CONFIG });
    for (const format of ['text', 'json', 'markdown']) {
      const planned = await runCli(['plan', '--format', format, '--no-color', '--out', 'plan.json', '--force'], { cwd, env });
      expect(planned.code).toBe(0);
      const before = emulator.counters.total;
      // No base URL and no token: show never connects.
      const shown = await runCli(['show', 'plan.json', '--format', format, '--no-color'], { cwd, env: {} });
      expect(shown.code).toBe(0);
      expect(shown.stdout).toBe(planned.stdout);
      expect(shown.stdout).toContain('organisations.acme');
      expect(shown.stderr).toContain('orgform apply plan.json reads the service again first');
      expect(emulator.counters.total).toBe(before);
    }
  });

  it('refuses a plan file edited by hand, naming it, as apply would', async () => {
    const { cwd, env } = await setupEmulatorWorkspace({ 'orgs.yaml': CHANGING_CONFIG });
    expect((await runCli(['plan', '--out', 'plan.json'], { cwd, env })).code).toBe(0);
    const text = await readFile(join(cwd, 'plan.json'), 'utf8');
    await writeFile(join(cwd, 'plan.json'), text.replace('billing@acme', 'attacker@acme'));
    const shown = await runCli(['show', 'plan.json'], { cwd, env: {} });
    expect(shown.code).toBe(1);
    expect(shown.stderr).toContain('The saved plan plan.json was changed after it was written');
    expect(shown.stdout).toBe('');
  });

  it('says so when the file cannot be read', async () => {
    const { cwd } = await setupEmulatorWorkspace({});
    const shown = await runCli(['show', 'missing.json'], { cwd, env: {} });
    expect(shown.code).toBe(1);
    expect(shown.stderr).toContain('Cannot read the plan file missing.json: ENOENT');
  });
});
