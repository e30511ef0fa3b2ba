/**
 * `orgform export -f FILE --diff` / `--write` end to end against the emulator over loopback HTTP:
 * drift made behind orgform's back becomes a patch to the file people own, which `git apply`
 * accepts, after which plan has nothing to do and the file's comments are all still there.
 */
import { execFileSync } from 'node:child_process';
import { chmod, link, lstat, readFile, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Emulator } from '../../src/emulator/server.js';
import { setupEmulatorWorkspace } from '../support/emulator-workspace.js';
import { MATRIX_PROFILES } from '../support/profiles.js';
import { runCli } from '../support/run-cli.js';

const EXAMPLE = new URL('../../examples/orgs.yaml', import.meta.url);

function git(cwd: string, args: string[], input?: string): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8', ...(input !== undefined && { input }), stdio: ['pipe', 'pipe', 'pipe'] });
}

/** A git repository holding the repository's example orgs.yaml, with the service brought in line with it by apply. */
async function appliedExample(profile?: (typeof MATRIX_PROFILES)[number]) {
  const text = await readFile(EXAMPLE, 'utf8');
  const world = await setupEmulatorWorkspace({ 'orgs.yaml': text }, profile === undefined ? {} : { profile });
  git(world.cwd, ['init', '--quiet']);
  const applied = await runCli(['apply', '--auto-approve'], { cwd: world.cwd, env: world.env });
  expect(applied.code, applied.stderr).toBe(0);
  const plan = await runCli(['plan', '--detailed-exitcode'], { cwd: world.cwd, env: world.env });
  expect(plan.code, plan.stdout + plan.stderr).toBe(0);
  return { ...world, text };
}

/** One billing field changed in the store itself, whatever the profile's billing PUT does with the others. */
function changeBilling(emulator: Emulator, id: string, billing: Record<string, string>): void {
  const org = emulator.store.organisations.get(id)!;
  emulator.store.putOrganisation({ ...org, billing: { ...org.billing, ...billing } });
}

function comments(text: string): string[] {
  return text.split('\n').flatMap((line) => (line.includes('#') ? [line.slice(line.indexOf('#'))] : []));
}

describe.each(MATRIX_PROFILES)('orgform export -f --diff on the example config (%s)', (profile) => {
  it('prints a patch that git apply accepts; once applied, plan says No changes and every comment is still there', async () => {
    const { cwd, env, emulator, text } = await appliedExample(profile);
    changeBilling(emulator, 'org_acme', { customerId: 'cus_acme_2024', subscriptionId: 'on' });
    changeBilling(emulator, 'org_globex', { billingEmail: 'accounts@globex.example' });
    emulator.store.setActiveOrganisation('demo-token', 'org_initech');

    const exported = await runCli(['export', '-f', 'orgs.yaml', '--diff', '--detailed-exitcode'], { cwd, env });
    expect(exported.code, exported.stderr).toBe(2);
    const patch = exported.stdout;
    expect(patch).toMatch(/^diff --git a\/orgs\.yaml b\/orgs\.yaml\n--- a\/orgs\.yaml\n\+\+\+ b\/orgs\.yaml\n@@ /);
    // Only the values that differ, each on its own line, comments and their columns kept.
    expect(patch.split('\n').filter((line) => /^[-+](?![-+])/.test(line))).toEqual([
      '-activeOrganisation: acme           # optional: make acme the user\'s active organisation',
      '+activeOrganisation: initech        # optional: make acme the user\'s active organisation',
      '-      customerID: cus_acme         # the update spelling: customerID, subscriptionID, platformID',
      '-      subscriptionID: sub_acme',
      '+      customerID: cus_acme_2024    # the update spelling: customerID, subscriptionID, platformID',
      '+      subscriptionID: "on"',
      '-      billingEmail: billing@globex.example   # its own value wins over the default',
      '+      billingEmail: accounts@globex.example  # its own value wins over the default',
    ]);
    expect(exported.stderr).toContain('orgs.yaml: 4 values to bring in line with the service:\n');
    expect(exported.stderr).toContain('  ~ organisations.acme.billing.customerID: "cus_acme" -> "cus_acme_2024"\n');
    expect(await readFile(join(cwd, 'orgs.yaml'), 'utf8')).toBe(text); // --diff alone writes nothing

    git(cwd, ['apply', '--check'], patch);
    git(cwd, ['apply'], patch);
    const after = await readFile(join(cwd, 'orgs.yaml'), 'utf8');
    expect(comments(after)).toEqual(comments(text));
    expect(after).toContain('      subscriptionID: "on"\n');

    const plan = await runCli(['plan', '--detailed-exitcode'], { cwd, env });
    expect(plan.stdout).toContain('No changes.');
    expect(plan.code).toBe(0);
    const again = await runCli(['export', '-f', 'orgs.yaml', '--diff', '--detailed-exitcode'], { cwd, env });
    expect(again).toMatchObject({ code: 0, stdout: '' });
    expect(again.stderr).toContain('No differences: orgs.yaml matches the service.');
  });
});

describe('orgform export -f', () => {
  it('--write updates the file in place: plan then says No changes, and a second run finds nothing to do', async () => {
    const { cwd, env, emulator, text } = await appliedExample();
    changeBilling(emulator, 'org_acme', { platformId: 'plat_acme_eu' });
    const written = await runCli(['export', '-f', 'orgs.yaml', '--write', '--detailed-exitcode'], { cwd, env });
    expect(written).toMatchObject({ code: 2, stdout: '' });
    expect(written.stderr).toContain('Updated 1 file. Check with: orgform plan -f orgs.yaml\n');
    const after = await readFile(join(cwd, 'orgs.yaml'), 'utf8');
    expect(after).toBe(text.replace('      platformID: plat_acme\n', '      platformID: plat_acme_eu\n'));

    const plan = await runCli(['plan', '--detailed-exitcode'], { cwd, env });
    expect(plan.code, plan.stdout).toBe(0);
    const again = await runCli(['export', '--write', '--detailed-exitcode'], { cwd, env }); // ./orgs.yaml by default
    expect(again.code).toBe(0);
    expect(await readFile(join(cwd, 'orgs.yaml'), 'utf8')).toBe(after);
  });

  it('leaves drift that the file states as a rule (a default, a variable) as a warning with FILE:LINE:COL, never printing the variable', async () => {
    const config = [
      'version: 1',
      'defaults:',
      '  billing:',
      '    billingEmail: billing@acme.example',
      'organisations:',
      '  acme:',
      '    billing:',
      '      customerID: ${ORGFORM_VAR_ACME_CUSTOMER_ID}',
      '      platformID: plat_acme',
      '  initech: {}',
      '',
    ].join('\n');
    const { cwd, env, emulator } = await setupEmulatorWorkspace({ 'orgs.yaml': config });
    changeBilling(emulator, 'org_acme', { platformId: 'plat_acme_2' });
    const result = await runCli(['export', '-f', 'orgs.yaml', '--diff', '--detailed-exitcode'], { cwd, env: { ...env, ORGFORM_VAR_ACME_CUSTOMER_ID: 'cus_secret_1' } });
    expect(result.code).toBe(2);
    expect(result.stdout.split('\n').filter((line) => /^[-+](?![-+])/.test(line))).toEqual(['-      platformID: plat_acme', '+      platformID: plat_acme_2']);
    expect(result.stderr).toContain('Warning: orgs.yaml:8:19: organisation "acme": billing.customerID is ${ORGFORM_VAR_ACME_CUSTOMER_ID}, and the service has "cus_acme"; left as is');
    expect(result.stderr).toContain('Warning: orgs.yaml:10:3: organisation "initech": billing.billingEmail comes from defaults.billing ("billing@acme.example"), but the service has "billing@initech.example"; left as is');
    expect(result.stderr).toContain('2 differences left as they are: see the warnings above.');
    expect(result.stderr).not.toContain('cus_secret_1');
    // Without --detailed-exitcode, differences are not an error.
    expect((await runCli(['export', '-f', 'orgs.yaml', '--diff'], { cwd, env: { ...env, ORGFORM_VAR_ACME_CUSTOMER_ID: 'cus_secret_1' } })).code).toBe(0);
  });

  it('refuses an invalid file with every problem as FILE:LINE:COL, before asking the service anything', async () => {
    const { cwd, env, emulator } = await setupEmulatorWorkspace({ 'orgs.yaml': 'version: 1\norganisations:\n  acme:\n    id: 0123\n' });
    const result = await runCli(['export', '-f', 'orgs.yaml', '--diff'], { cwd, env });
    expect(result).toMatchObject({ code: 1, stdout: '' });
    expect(result.stderr).toContain('orgs.yaml:4:9: id: unquoted 0123 would be read as a number');
    expect(emulator.counters.total).toBe(0);
  });

  it('gives one patch for a directory of files, which git apply accepts; without --diff or --write it is refused', async () => {
    const { cwd, env, emulator } = await setupEmulatorWorkspace({
      'orgs/a.yaml': 'version: 1\norganisations:\n  acme:\n    billing:\n      customerID: cus_acme   # from the CRM\n',
      'orgs/b.yaml': 'version: 1\norganisations:\n  initech:\n    billing:\n      subscriptionID: sub_initech\n',
    });
    git(cwd, ['init', '--quiet']);
    const refused = await runCli(['export', '-f', 'orgs'], { cwd, env });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('2 files were read (orgs/a.yaml, orgs/b.yaml): pass --diff to see the changes as one patch, or --write to update them.');
    expect(emulator.counters.total).toBe(0);

    changeBilling(emulator, 'org_acme', { customerId: 'cus_acme_2' });
    changeBilling(emulator, 'org_initech', { subscriptionId: 'sub_initech_2' });
    const result = await runCli(['export', '-f', 'orgs', '--diff'], { cwd, env });
    expect(result.stdout.match(/^diff --git .*$/gm)).toEqual(['diff --git a/orgs/a.yaml b/orgs/a.yaml', 'diff --git a/orgs/b.yaml b/orgs/b.yaml']);
    git(cwd, ['apply'], result.stdout);
    expect(await readFile(join(cwd, 'orgs/a.yaml'), 'utf8')).toContain('      customerID: cus_acme_2 # from the CRM\n');
    const plan = await runCli(['plan', '-f', 'orgs', '--detailed-exitcode'], { cwd, env });
    expect(plan.code, plan.stdout).toBe(0);
  });

  it('without --diff or --write prints the updated file, or writes it to --out (never over a file without --force)', async () => {
    const config = 'version: 1\norganisations:\n  acme:\n    billing: { customerID: cus_acme }\n';
    const { cwd, env, emulator } = await setupEmulatorWorkspace({ 'orgs.yaml': config, 'taken.yaml': 'keep\n' });
    changeBilling(emulator, 'org_acme', { customerId: 'cus 2' });
    const printed = await runCli(['export', '-f', 'orgs.yaml'], { cwd, env });
    expect(printed).toMatchObject({ code: 0, stdout: config.replace('cus_acme', '"cus 2"') });
    const refused = await runCli(['export', '-f', 'orgs.yaml', '--out', 'taken.yaml'], { cwd, env });
    expect(refused.stderr).toContain('taken.yaml already exists. Nothing was written. Pass --force');
    expect(await readFile(join(cwd, 'taken.yaml'), 'utf8')).toBe('keep\n');
    const out = await runCli(['export', '-f', 'orgs.yaml', '--out', 'new.yaml'], { cwd, env });
    expect(out.code).toBe(0);
    expect(await readFile(join(cwd, 'new.yaml'), 'utf8')).toBe(printed.stdout);
    expect(await readFile(join(cwd, 'orgs.yaml'), 'utf8')).toBe(config);
  });

  it.each([
    [['export', '-f', 'orgs.yaml', '--filter', 'acme'], '--filter does not combine with -f, --diff or --write'],
    [['export', '-f', 'orgs.yaml', '--diff', '--out', 'x.yaml'], '--out writes the updated file elsewhere; it does not combine with --diff or --write'],
    [['export', '--detailed-exitcode'], '--detailed-exitcode compares the service with a file: add -f FILE'],
  ])('refuses %j before any request', async (args, message) => {
    const { cwd, env, emulator } = await setupEmulatorWorkspace({ 'orgs.yaml': 'version: 1\norganisations: {}\n' });
    const result = await runCli(args, { cwd, env });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(message);
    expect(emulator.counters.total).toBe(0);
  });

  it('brings an exported file in line byte for byte as a fresh export writes it', async () => {
    const { cwd, env, emulator } = await setupEmulatorWorkspace();
    expect((await runCli(['export', '--out', 'orgs.yaml'], { cwd, env })).code).toBe(0);
    changeBilling(emulator, 'org_umbrella', { customerId: '2024-01-02', billingEmail: 'ap@umbrella.example' });
    emulator.store.setActiveOrganisation('demo-token', 'org_acme');
    expect((await runCli(['export', '-f', 'orgs.yaml', '--write'], { cwd, env })).code).toBe(0);
    const fresh = await runCli(['export'], { cwd, env });
    expect(await readFile(join(cwd, 'orgs.yaml'), 'utf8')).toBe(fresh.stdout);
  });
});

describe('orgform export -f --write and the file it replaces', () => {
  const CONFIG = 'version: 1\norganisations:\n  acme:\n    billing: { customerID: cus_acme }\n';

  it('keeps the file’s mode, and writes through a symlink to the file it names', async () => {
    const { cwd, env, emulator } = await setupEmulatorWorkspace({ 'team/orgs.yaml': CONFIG });
    await chmod(join(cwd, 'team/orgs.yaml'), 0o664);
    await symlink('team/orgs.yaml', join(cwd, 'orgs.yaml'));
    changeBilling(emulator, 'org_acme', { customerId: 'cus_acme_2' });
    const result = await runCli(['export', '-f', 'orgs.yaml', '--write'], { cwd, env });
    expect(result.code, result.stderr).toBe(0);
    expect((await lstat(join(cwd, 'orgs.yaml'))).isSymbolicLink()).toBe(true);
    expect(await readFile(join(cwd, 'team/orgs.yaml'), 'utf8')).toContain('cus_acme_2');
    expect((await stat(join(cwd, 'team/orgs.yaml'))).mode & 0o777).toBe(0o664);
  });

  it('refuses a file with another hard link before asking the service anything, and leaves both names as they were', async () => {
    const { cwd, env, emulator } = await setupEmulatorWorkspace({ 'orgs.yaml': CONFIG });
    await link(join(cwd, 'orgs.yaml'), join(cwd, 'orgs.backup.yaml'));
    changeBilling(emulator, 'org_acme', { customerId: 'cus_acme_2' });
    const result = await runCli(['export', '-f', 'orgs.yaml', '--write'], { cwd, env });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('Cannot write orgs.yaml: it has 2 hard links, and replacing it would leave the other names with the old content. Nothing was written;');
    expect(emulator.counters.total).toBe(0);
    expect(await readFile(join(cwd, 'orgs.yaml'), 'utf8')).toBe(CONFIG);
    expect((await stat(join(cwd, 'orgs.yaml'))).nlink).toBe(2);
  });

  it.each([[['--write']], [['--out', 'orgs.yaml', '--force']]])('keeps an edit made while the service was being read (%j): nothing is written, and it says which file', async (how) => {
    const { cwd, env, emulator } = await setupEmulatorWorkspace({ 'orgs.yaml': CONFIG });
    changeBilling(emulator, 'org_acme', { customerId: 'cus_acme_2' });
    // The listing's answer is held back; the file is edited as soon as the request has arrived.
    emulator.faults.add({ operation: 'getOrganisations', fault: { kind: 'delay-headers', ms: 1500 } });
    const running = runCli(['export', '-f', 'orgs.yaml', ...how], { cwd, env });
    while (emulator.counters.total === 0) await new Promise((r) => setTimeout(r, 5));
    const edited = `${CONFIG}  initech: {} # added while export was reading\n`;
    await writeFile(join(cwd, 'orgs.yaml'), edited);
    const result = await running;
    expect(emulator.counters.byOperation.getOrganisations).toBeGreaterThan(0);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('orgs.yaml changed after orgform read it (an edit, a checkout?). Nothing was written, so that the change is kept; run the command again');
    expect(await readFile(join(cwd, 'orgs.yaml'), 'utf8')).toBe(edited);
    const again = await runCli(['export', '-f', 'orgs.yaml', ...how], { cwd, env });
    expect(again.code).toBe(0);
    expect(await readFile(join(cwd, 'orgs.yaml'), 'utf8')).toBe(edited.replace('cus_acme', 'cus_acme_2'));
  });

  it('writes none of several files when one of them was edited while the service was read', async () => {
    const { cwd, env, emulator } = await setupEmulatorWorkspace({
      'orgs/a.yaml': CONFIG,
      'orgs/b.yaml': 'version: 1\norganisations:\n  umbrella:\n    billing: { customerID: cus_umbrella }\n',
    });
    changeBilling(emulator, 'org_acme', { customerId: 'cus_acme_2' });
    changeBilling(emulator, 'org_umbrella', { customerId: 'cus_umbrella_2' });
    emulator.faults.add({ operation: 'getOrganisations', fault: { kind: 'delay-headers', ms: 1500 } });
    const running = runCli(['export', '-f', 'orgs', '--write'], { cwd, env });
    while (emulator.counters.total === 0) await new Promise((r) => setTimeout(r, 5));
    await writeFile(join(cwd, 'orgs/b.yaml'), 'version: 1\norganisations:\n  umbrella:\n    billing: { customerID: cus_mine }\n');
    const result = await running;
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/b\.yaml changed after orgform read it/);
    expect(await readFile(join(cwd, 'orgs/a.yaml'), 'utf8')).toBe(CONFIG);
  });
});
