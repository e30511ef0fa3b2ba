/**
 * Terraform's one-dash spellings, through the grammar and against the emulator: those orgform has
 * are taken, and those only Terraform has are answered with what to do instead.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { acceptTerraformSpellings, hintForUnknownOption } from '../../src/cli/terraform-spellings.js';
import { setupEmulatorWorkspace } from '../support/emulator-workspace.js';
import { runCli } from '../support/run-cli.js';
import { CHANGING_CONFIG, makeWorkspace } from '../support/workspace.js';

const APPLY = new Set(['--auto-approve', '--out', '--file', '--no-color', '--target']);

describe('acceptTerraformSpellings', () => {
  it('gives a one-dash spelling of a long option its second dash, with or without a value', () => {
    expect(acceptTerraformSpellings(['-auto-approve', '-out=plan.bin', '-target', 'acme', '-no-color'], APPLY)).toEqual(['--auto-approve', '--out=plan.bin', '--target', 'acme', '--no-color']);
  });

  it('leaves the value of an option that takes one as it is, whatever it looks like', () => {
    expect(acceptTerraformSpellings(['--filter', '-auto-approve', '-f', '-out', '-auto-approve'], APPLY, new Set(['--filter', '-f']))).toEqual(['--filter', '-auto-approve', '-f', '-out', '--auto-approve']);
  });

  it("takes Terraform's =true and =false after a switch as on and off, and leaves the value of an option that takes one", () => {
    const values = new Set(['--out', '--target']);
    expect(acceptTerraformSpellings(['-auto-approve=true', '-no-color=false', '-out=false', '-target=true'], APPLY, values)).toEqual(['--auto-approve', '--out=false', '--target=true']);
    expect(acceptTerraformSpellings(['-auto-approve=false'], APPLY, values)).toEqual([]);
  });

  it('leaves short options, unknown words and everything after -- as they are', () => {
    expect(acceptTerraformSpellings(['-forgs.yaml', '-f', 'x', '-input=false', '--', '-auto-approve'], APPLY)).toEqual(['-forgs.yaml', '-f', 'x', '-input=false', '--', '-auto-approve']);
  });
});

describe('hintForUnknownOption', () => {
  it('says what orgform does instead of a Terraform-only option', () => {
    expect(hintForUnknownOption('-input=false', APPLY)).toMatch(/^-input is Terraform's: .*--auto-approve/);
    expect(hintForUnknownOption('-json', APPLY)).toBe("-json is Terraform's: pass --format json.");
    expect(hintForUnknownOption('--lock=false', APPLY)).toMatch(/force-unlock/);
  });

  it('names the two-dash options for any other one-dash word, and has nothing to add to a two-dash one', () => {
    expect(hintForUnknownOption('-frobnicate', APPLY)).toBe("orgform's long options take two dashes; this command has --auto-approve, --out, --file, --no-color, --target.");
    expect(hintForUnknownOption('--frobnicate', APPLY)).toBeUndefined();
  });
});

describe('Terraform habits on the command line', () => {
  it('plan -out=plan.bin -detailed-exitcode saves the plan and exits 2, as Terraform would', async () => {
    const { cwd, env } = await setupEmulatorWorkspace({ 'orgs.yaml': CHANGING_CONFIG });
    const result = await runCli(['plan', '-input=false', '-out=plan.bin', '-detailed-exitcode', '-no-color'], { cwd, env });
    expect(result.stderr).toContain('Saved the plan to plan.bin.');
    expect(result.code).toBe(2);
    expect(existsSync(join(cwd, 'plan.bin'))).toBe(true);
  });

  it('apply -auto-approve=true applies without asking, and plan -detailed-exitcode=true exits 2, as Terraform would', async () => {
    const { cwd, env } = await setupEmulatorWorkspace({ 'orgs.yaml': CHANGING_CONFIG });
    const plan = await runCli(['plan', '-detailed-exitcode=true'], { cwd, env });
    expect(plan.stderr).toBe('');
    expect(plan.code).toBe(2);
    const apply = await runCli(['apply', '-auto-approve=true'], { cwd, env });
    expect(apply.stderr).not.toContain('unknown option');
    expect(apply.code).toBe(0);
  });

  it('apply -auto-approve applies without asking', async () => {
    const { cwd, env, emulator } = await setupEmulatorWorkspace({ 'orgs.yaml': CHANGING_CONFIG });
    const result = await runCli(['apply', '-auto-approve', '-parallelism=2'], { cwd, env });
    expect(result.code).toBe(0);
    expect(emulator.counters.writes).toBeGreaterThan(0);
  });

  it('orgform -version prints the version, as terraform -version does', async () => {
    const cwd = await makeWorkspace();
    const result = await runCli(['-version'], { cwd });
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
  });

  it('apply -input=false never asks, even on a terminal: it refuses, saying why, and with -auto-approve applies', async () => {
    const { cwd, env, emulator } = await setupEmulatorWorkspace({ 'orgs.yaml': CHANGING_CONFIG });
    const refused = await runCli(['apply', '-input=false'], { cwd, env, tty: true, stdin: 'yes\n' });
    expect(refused.code).toBe(1);
    expect(refused.stdout + refused.stderr).toContain('input is turned off (-input=false)');
    expect(emulator.counters.writes).toBe(0);
    const applied = await runCli(['apply', '-input=false', '-auto-approve'], { cwd, env });
    expect(applied.code).toBe(0);
    expect(emulator.counters.writes).toBeGreaterThan(0);
  });

  it('an option only Terraform has is answered with what to do instead, before anything is read', async () => {
    const { cwd, env, emulator } = await setupEmulatorWorkspace({ 'orgs.yaml': CHANGING_CONFIG });
    const result = await runCli(['plan', '-lock=false'], { cwd, env });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("error: unknown option '-lock=false'\n-lock is Terraform's: orgform always locks its state");
    expect(emulator.requestLog).toHaveLength(0);
  });
});
