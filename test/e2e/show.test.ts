/**
 * `orgform show PLANFILE`, end to end: a saved plan shown as plan showed it, offline, and refused
 * as apply refuses it when it is not one orgform wrote.
 */
import { readFile, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MAX_TEXT_BYTES } from '../../src/work-tree.js';
import { setupEmulatorWorkspace } from '../support/emulator-workspace.js';
import { runCli } from '../support/run-cli.js';
import { CHANGING_CONFIG } from '../support/workspace.js';

describe('orgform show PLANFILE', () => {
  it('shows a saved plan exactly as plan showed it, in each format, without a request to the service', async () => {
    const { cwd, env, emulator } = await setupEmulatorWorkspace({ 'orgs.yaml': CHANGING_CONFIG });
    for (const format of ['text', 'json', 'markdown', 'html'] as const) {
      const planned = await runCli(['plan', '--format', format, '--no-color', '--out', 'plan.json', '--force'], { cwd, env });
      expect(planned.code).toBe(0);
      const before = emulator.counters.total;
      // No base URL and no token: show never connects.
      const shown = await runCli(['show', 'plan.json', '--format', format, '--no-color'], { cwd, env: {} });
      expect(shown.code).toBe(0);
      expect(shown.stdout).toBe(planned.stdout);
      expect(shown.stdout).toContain({ text: 'organisations.acme', json: 'organisations.acme', markdown: '| acme |', html: '"acme"' }[format]);
      expect(shown.stderr).toContain('orgform apply plan.json reads the service again first');
      expect(emulator.counters.total).toBe(before);
    }
  });

  it('writes the comment’s links to the page’s address with --page-url, and refuses an address that is not http or https before anything is read', async () => {
    const { cwd, env, emulator } = await setupEmulatorWorkspace({ 'orgs.yaml': CHANGING_CONFIG });
    const url = 'https://gitlab.example/acme/config/-/jobs/7/artifacts/file/plan.html';
    const planned = await runCli(['plan', '--format', 'markdown', '--page-url', url, '--out', 'plan.json'], { cwd, env });
    expect(planned.code).toBe(0);
    expect(planned.stdout).toContain(`[the plan page](${url})`);
    const shown = await runCli(['show', 'plan.json', '--format', 'markdown', '--page-url', url], { cwd, env: {} });
    expect(shown.stdout).toBe(planned.stdout);
    const before = emulator.counters.total;
    for (const args of [['plan'], ['show', 'plan.json']]) {
      const refused = await runCli([...args, '--format', 'markdown', '--page-url', 'javascript:alert(1)'], { cwd, env });
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain('--page-url: it must be an http or https URL of printable ASCII, not "javascript:alert(1)"');
      expect(refused.stdout).toBe('');
    }
    expect(emulator.counters.total).toBe(before);
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

  it('judges a plan file longer than the longest string by its first line, reading no further than a line may be', async () => {
    const { cwd } = await setupEmulatorWorkspace({ 'big.json': '' });
    // A hole: longer than any one text, without the disk or the time to write it. Read a line at a
    // time, a saved plan may be any size: this one is refused by its first line.
    await truncate(join(cwd, 'big.json'), MAX_TEXT_BYTES + 1);
    const shown = await runCli(['show', 'big.json'], { cwd, env: {} });
    expect(shown.code).toBe(1);
    expect(shown.stderr).toContain('The saved plan big.json is not an orgform plan file.');
    expect(shown.stdout).toBe('');
  });
});
