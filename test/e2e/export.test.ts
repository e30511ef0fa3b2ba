/**
 * `orgform export` end to end against the emulator over loopback HTTP: what it writes must plan
 * as No changes, under every profile of the matrix (lenient: the project's answers to the
 * interface's open points; strict: the hardest plausible answer of each).
 */
import { execFileSync } from 'node:child_process';
import { lstat, readFile, readlink, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import type { ProfileName } from '../../src/emulator/behaviour.js';
import { generateEmulatorData } from '../../src/emulator/generate-emulator-data.js';
import type { Emulator, EmulatorOptions } from '../../src/emulator/server.js';
import { runCli } from '../support/run-cli.js';
import { setupEmulatorWorkspace } from '../support/emulator-workspace.js';
import { MATRIX_PROFILES } from '../support/profiles.js';

let emulator: Emulator;
let profile: ProfileName;

async function setup(options: EmulatorOptions = {}) {
  const world = await setupEmulatorWorkspace({}, { profile, ...options });
  emulator = world.emulator;
  return world;
}

describe.each(MATRIX_PROFILES)('orgform export (%s)', (name) => {
  beforeEach(() => {
    profile = name;
  });

  it('writes the organisations you belong to, and plan on the file says No changes', async () => {
    const { cwd, env } = await setup();
    const exported = await runCli(['export', '--out', 'orgs.yaml'], { cwd, env });
    expect(exported.code).toBe(0);
    expect(exported.stderr).toBe('Exported 5 organisations (active: initech) to orgs.yaml. Check it with: orgform plan -f orgs.yaml\n');
    const text = await readFile(join(cwd, 'orgs.yaml'), 'utf8');
    expect(text).toContain('activeOrganisation: initech\n');
    expect(text).toContain('  hooli-eu:\n    id: "org:hooli/eu"\n');
    expect(text).toContain('      customerID: cus_acme\n');
    expect(text).not.toContain('globex'); // ada is not a member

    const plan = await runCli(['plan', '--detailed-exitcode'], { cwd, env });
    expect(plan.stderr).toBe('');
    expect(plan.stdout).toContain('No changes.');
    expect(plan.code).toBe(0);
  });

  it('exports 501 organisations over several pages, and plan on the file says No changes', async () => {
    // One more than the 500 a page orgform asks for: a second page under every profile.
    const { cwd, env } = await setup({ data: generateEmulatorData({ organisations: 501 }) });
    const exported = await runCli(['export', '--out', 'orgs.yaml'], { cwd, env });
    expect(exported.code).toBe(0);
    // The page size is an open point: lenient honours the limit orgform asks for (500 a page);
    // strict answers pages of 50 whatever the limit, so every page is followed, and the empty page
    // it answers before the second too (empty-pages one).
    expect(emulator.counters.byOperation.getOrganisations).toBe(emulator.behaviour['page-size'] === 'fixed-50' ? 12 : 2);
    const text = await readFile(join(cwd, 'orgs.yaml'), 'utf8');
    expect(text.match(/^ {4}id: /gm)).toHaveLength(501);
    expect(text).toContain('activeOrganisation: org-00001\n');

    const plan = await runCli(['plan', '--detailed-exitcode'], { cwd, env });
    expect(plan.stdout).toContain('No changes.');
    expect(plan.code).toBe(0);
  });

  it('gives byte-identical files when nothing changed, and a one-line diff when one field did', async () => {
    const { cwd, env } = await setup();
    const first = await runCli(['export'], { cwd, env });
    const second = await runCli(['export'], { cwd, env });
    expect(first.code).toBe(0);
    expect(second.stdout).toBe(first.stdout);

    // One field changed behind orgform's back, whatever the profile's billing PUT does with the
    // fields left out of a body (strict's replace would clear them): set in the store directly.
    const umbrella = emulator.store.organisations.get('org_umbrella')!;
    emulator.store.putOrganisation({ ...umbrella, billing: { ...umbrella.billing, customerId: 'cus_umbrella_2' } });
    const third = await runCli(['export'], { cwd, env });
    const before = first.stdout.split('\n');
    const after = third.stdout.split('\n');
    expect(after).toHaveLength(before.length);
    expect(after.filter((line, i) => line !== before[i])).toEqual(['      customerID: cus_umbrella_2']);
  });

  it('writes to standard output without --out, with nothing on standard error', async () => {
    const { cwd, env } = await setup();
    const result = await runCli(['export'], { cwd, env });
    expect(result.stderr).toBe('');
    expect(result.stdout).toMatch(/^# yaml-language-server: \$schema=\.\/node_modules\/orgform\/schemas\/orgs\.schema\.json\n/);
    expect(result.stdout).toContain(`# Written by \`orgform export\` from ${emulator.url}.`);
  });

  it('points the schema modeline at node_modules relative to the file it writes', async () => {
    const { cwd, env } = await setup();
    await runCli(['export', '--out', 'config/orgs.yaml'], { cwd, env });
    const text = await readFile(join(cwd, 'config', 'orgs.yaml'), 'utf8');
    expect(text.split('\n')[0]).toBe('# yaml-language-server: $schema=../node_modules/orgform/schemas/orgs.schema.json');
  });

  it('refuses to overwrite an existing file without --force, naming it, before asking the service anything', async () => {
    const { cwd, env } = await setup();
    await writeFile(join(cwd, 'orgs.yaml'), 'keep me\n');
    const refused = await runCli(['export', '--out', 'orgs.yaml'], { cwd, env });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/orgs\.yaml already exists\. Nothing was written\. Pass --force/);
    expect(await readFile(join(cwd, 'orgs.yaml'), 'utf8')).toBe('keep me\n');
    expect(emulator.counters.total).toBe(0);

    const forced = await runCli(['export', '--out', 'orgs.yaml', '--force'], { cwd, env });
    expect(forced.code).toBe(0);
    expect(await readFile(join(cwd, 'orgs.yaml'), 'utf8')).toMatch(/^version: 1$/m);
  });

  it('with --filter exports only the matching organisations, and activeOrganisation only when it is one of them', async () => {
    const { cwd, env } = await setup();
    const acme = await runCli(['export', '--filter', 'ACME', '--out', 'acme.yaml'], { cwd, env });
    expect(acme.stderr).toMatch(/^Exported 1 organisation to acme\.yaml\./);
    const acmeText = await readFile(join(cwd, 'acme.yaml'), 'utf8');
    expect(acmeText).toContain('(only organisations matching "ACME")');
    expect(acmeText).toContain('  acme:\n');
    expect(acmeText).not.toContain('activeOrganisation');

    const initech = await runCli(['export', '--filter', 'init'], { cwd, env });
    expect(initech.stdout).toContain('activeOrganisation: initech\n');
    expect(initech.stdout.match(/^ {2}\S+:$/gm)).toEqual(['  initech:']);

    const plan = await runCli(['plan', '-f', 'acme.yaml', '--detailed-exitcode'], { cwd, env });
    expect(plan.stdout).toContain('No changes.');
    expect(plan.code).toBe(0);
  });

  it('leaves out, with a warning, an organisation whose slug orgs.yaml cannot declare, and still plans No changes', async () => {
    const { cwd, env } = await setup();
    emulator.store.putOrganisation({ id: 'org_odd', slug: 'odd slug', billing: {} });
    emulator.store.addMembership('demo-token', 'org_odd');
    const result = await runCli(['export', '--out', 'orgs.yaml'], { cwd, env });
    expect(result.code).toBe(0);
    expect(result.stderr).toContain('Warning: left out organisation "odd slug" (id "org_odd"): the slug contains whitespace');
    expect(result.stderr).toMatch(/Exported 5 organisations.*; 1 left out/);
    const plan = await runCli(['plan', '--detailed-exitcode'], { cwd, env });
    expect(plan.code).toBe(0);
  });

  it('refuses to replace what is not a regular file, even with --force, and writes nothing', async () => {
    const { cwd, env } = await setup();
    // A named pipe in the workspace stands in for a device: a regression must not replace a real one.
    execFileSync('mkfifo', [join(cwd, 'pipe.yaml')]);
    const result = await runCli(['export', '--out', 'pipe.yaml', '--force'], { cwd, env });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('Cannot write pipe.yaml: it is not a regular file (a named pipe). Nothing was written');
    expect((await lstat(join(cwd, 'pipe.yaml'))).isFIFO()).toBe(true);
  });

  it('writes through a symlink to the file it names, and the link stays a link', async () => {
    const { cwd, env } = await setup();
    await writeFile(join(cwd, 'real.yaml'), 'old\n');
    await symlink('real.yaml', join(cwd, 'orgs.yaml'));
    const result = await runCli(['export', '--out', 'orgs.yaml', '--force'], { cwd, env });
    expect(result.code).toBe(0);
    expect((await lstat(join(cwd, 'orgs.yaml'))).isSymbolicLink()).toBe(true);
    expect(await readlink(join(cwd, 'orgs.yaml'))).toBe('real.yaml');
    expect(await readFile(join(cwd, 'real.yaml'), 'utf8')).toContain('activeOrganisation: initech');
  });
});
