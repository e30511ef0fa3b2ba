/**
 * `--no-color` on every command, and FORCE_COLOR and NO_COLOR as people set them, end to end.
 */
import { describe, expect, it } from 'vitest';
import { setupEmulatorWorkspace } from '../support/emulator-workspace.js';
import { runCli } from '../support/run-cli.js';
import { CHANGING_CONFIG } from '../support/workspace.js';

const ESC = '\u001b[';

describe('colour on the command line', () => {
  it.each([
    [['validate']],
    [['slugs', 'check', 'a-fresh-slug']],
    [['export']],
    [['state', 'list']],
    [['plan']],
  ])('%j takes --no-color', async (command) => {
    const { cwd, env } = await setupEmulatorWorkspace({ 'orgs.yaml': CHANGING_CONFIG });
    const result = await runCli([...command, '--no-color'], { cwd, env });
    expect(result.stderr).not.toContain('unknown option');
    expect(result.code).not.toBe(1);
    expect(result.stdout + result.stderr).not.toContain(ESC);
  });

  it('takes --no-color before the command too, even with FORCE_COLOR set', async () => {
    const { cwd, env } = await setupEmulatorWorkspace({ 'orgs.yaml': CHANGING_CONFIG });
    const before = await runCli(['--no-color', 'plan'], { cwd, env: { ...env, FORCE_COLOR: '1' } });
    expect(before.stderr).not.toContain('unknown option');
    expect(before.code).toBe(0);
    expect(before.stdout).toContain('organisations.acme');
    expect(before.stdout).not.toContain(ESC);
  });

  it('colours a plan written to a log when FORCE_COLOR is set', async () => {
    const { cwd, env } = await setupEmulatorWorkspace({ 'orgs.yaml': CHANGING_CONFIG });
    const plain = await runCli(['plan'], { cwd, env });
    const forced = await runCli(['plan'], { cwd, env: { ...env, FORCE_COLOR: '1' } });
    expect(plain.stdout).not.toContain(ESC);
    expect(forced.stdout).toContain(ESC);
  });

  it('colours the slug table on a terminal, and not with NO_COLOR or FORCE_COLOR=0', async () => {
    const { cwd, env } = await setupEmulatorWorkspace();
    const tty = await runCli(['slugs', 'check', 'acme'], { cwd, env, tty: true });
    const noColor = await runCli(['slugs', 'check', 'acme'], { cwd, env: { ...env, NO_COLOR: '1' }, tty: true });
    const forcedOff = await runCli(['slugs', 'check', 'acme'], { cwd, env: { ...env, FORCE_COLOR: '0' }, tty: true });
    expect(tty.stdout).toContain(ESC);
    expect(noColor.stdout).not.toContain(ESC);
    expect(forcedOff.stdout).not.toContain(ESC);
  });
});
