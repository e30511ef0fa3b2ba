/**
 * `orgform apply` end to end against the emulator over loopback HTTP, under every profile of the
 * matrix (lenient: the project's answers to the interface's open points; strict: the hardest
 * plausible answer of each).
 */
import { existsSync } from 'node:fs';
import { appendFile, mkdir, mkdtemp, readdir, readFile, rename, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import type { ProfileName } from '../../src/emulator/behaviour.js';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { lockFileState, readJournalFile } from '../support/file-state.js';
import { setupEmulatorWorkspace } from '../support/emulator-workspace.js';
import { MATRIX_PROFILES } from '../support/profiles.js';
import { runCli, spawnCli } from '../support/run-cli.js';
import { editRecords, recordOf, tamperedText } from '../support/saved-plan-lines.js';
import { CHANGING_CONFIG, makeWorkspace } from '../support/workspace.js';

let emulator: Emulator;
let profile: ProfileName;

async function setup(config = CHANGING_CONFIG, options: Parameters<typeof startEmulator>[0] = {}) {
  const world = await setupEmulatorWorkspace({ 'orgs.yaml': config }, { profile, ...options });
  emulator = world.emulator;
  return world;
}

const org = (id: string) => emulator.store.dump().organisations.find((o) => o.id === id);
const user = () => emulator.store.dump().users.find((u) => u.token === 'demo-token');

describe.each(MATRIX_PROFILES)('orgform apply (%s)', (name) => {
  beforeEach(() => {
    profile = name;
  });

  it('applies every change with --auto-approve, and the next plan shows No changes', async () => {
    const { cwd, env } = await setup();
    const result = await runCli(['apply', '--auto-approve'], { cwd, env });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/Apply complete: 5 applied/);
    expect(org('org_acme')?.billing?.billingEmail).toBe('finance@acme.example');
    expect(org('org_acme')?.billing?.customerId).toBe('cus_acme');
    expect(user()?.memberships).toContain('org_globex');
    expect(user()?.active).toBe('org_acme');
    const again = await runCli(['plan', '--detailed-exitcode'], { cwd, env });
    expect(again.stdout).toContain('No changes.');
    expect(again.code).toBe(0);
  });

  it('records revocations and channel removals in the state journal beside the config file, and not accepts (membership decides those)', async () => {
    const { cwd, env } = await setup();
    await runCli(['apply', '--auto-approve'], { cwd, env });
    const journal = await readJournalFile(join(cwd, '.orgform', 'state.json'));
    const entries = journal.services[emulator.url];
    expect(Object.keys(entries ?? {}).sort()).toEqual([
      'remove-channel org_acme chn_acme_slack',
      'revoke-invitation org_acme inv_acme_carol',
    ]);
    expect(existsSync(join(cwd, '.orgform', 'state.json.lock'))).toBe(false);
  });

  it('refuses at once without a terminal or --auto-approve, and writes nothing', async () => {
    const { cwd, env } = await setup();
    const result = await runCli(['apply'], { cwd, env });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/--auto-approve/);
    expect(result.stderr).toMatch(/Nothing was changed/);
    expect(emulator.counters.total).toBe(0);
    expect(existsSync(join(cwd, '.orgform'))).toBe(false);
  });

  it('applies on a terminal only after the answer yes', async () => {
    const { cwd, env } = await setup();
    const no = await runCli(['apply'], { cwd, env, tty: true, stdin: 'no\n' });
    expect(no.code).toBe(1);
    expect(no.stdout).toMatch(/Apply cancelled/);
    expect(emulator.counters.writes).toBe(0);
    const yes = await runCli(['apply', '--no-color'], { cwd, env, tty: true, stdin: 'yes\n' });
    expect(yes.code).toBe(0);
    expect(emulator.counters.writes).toBe(5);
  });

  it('on a terminal, cancels instead of asking when interrupted before the question, and writes nothing', async () => {
    const { cwd, env } = await setup();
    const controller = new AbortController();
    controller.abort();
    // A terminal that nobody types into: the question must not wait for it.
    const result = await runCli(['apply', '--no-color'], { cwd, env, tty: true, signal: controller.signal });
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/Apply cancelled\. Nothing was changed\./);
    expect(emulator.counters.writes).toBe(0);
  }, 5_000);

  it('with --format json on a terminal, asks on stderr and keeps stdout to the events', async () => {
    const { cwd, env } = await setup();
    const result = await runCli(['apply', '--format', 'json'], { cwd, env, tty: true, stdin: 'yes\n' });
    expect(result.code).toBe(0);
    expect(result.stderr).toContain('Plan: 2 to change, 2 to remove, 1 to accept.');
    expect(result.stderr).toContain("Only 'yes' will be accepted");
    const events = result.stdout.trim().split('\n').map((line) => JSON.parse(line));
    expect(events.at(-1).type).toBe('apply_end');
  });

  it('refuses a plan over --max-changes and says how to proceed', async () => {
    const { cwd, env } = await setup();
    const result = await runCli(['apply', '--auto-approve', '--max-changes', '2'], { cwd, env });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/5 changes, more than --max-changes 2/);
    expect(result.stderr).toMatch(/--target or --shard/);
    expect(emulator.counters.writes).toBe(0);
  });

  it('applies a saved plan without asking', async () => {
    const { cwd, env } = await setup();
    expect((await runCli(['plan', '--out', 'plan.json'], { cwd, env })).code).toBe(0);
    const result = await runCli(['apply', 'plan.json'], { cwd, env });
    expect(result.code).toBe(0);
    expect(emulator.counters.writes).toBe(5);
  });

  it('applies a saved plan from another directory, with the files and the state of the directory plan ran in', async () => {
    const { cwd, env } = await setup();
    await mkdir(join(cwd, 'out'));
    expect((await runCli(['plan', '--out', 'out/plan.json'], { cwd, env })).code).toBe(0);
    const elsewhere = await mkdtemp(join(tmpdir(), 'orgform-elsewhere-'));
    const result = await runCli(['apply', join(cwd, 'out', 'plan.json')], { cwd: elsewhere, env });
    expect(result.stderr).not.toMatch(/stale/);
    expect(result.code).toBe(0);
    expect(emulator.counters.writes).toBe(5);
    // The journal is the one beside orgs.yaml, not one made where apply ran.
    expect(existsSync(join(cwd, '.orgform', 'state.json'))).toBe(true);
    expect(existsSync(join(elsewhere, '.orgform'))).toBe(false);
  });

  it('finds the files from here when the plan file was moved on its own, and still refuses one edited since', async () => {
    const { cwd, env } = await setup();
    expect((await runCli(['plan', '--out', 'plan.json'], { cwd, env })).code).toBe(0);
    const away = await mkdtemp(join(tmpdir(), 'orgform-artifact-'));
    await rename(join(cwd, 'plan.json'), join(away, 'plan.json'));
    await appendFile(join(cwd, 'orgs.yaml'), '# edited\n');
    const result = await runCli(['apply', join(away, 'plan.json')], { cwd, env });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('config file orgs.yaml changed since the plan');
    expect(emulator.counters.writes).toBe(0);
  });

  it('refuses a saved plan whole when billing changed since, naming the field, and writes nothing', async () => {
    const { cwd, env } = await setup();
    await runCli(['plan', '--out', 'plan.json'], { cwd, env });
    const acme = org('org_acme')!;
    emulator.store.putOrganisation({ ...acme, billing: { ...acme.billing, billingEmail: 'someone-else@acme.example' } });
    const result = await runCli(['apply', 'plan.json'], { cwd, env });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/is stale/);
    expect(result.stderr).toContain('organisations.acme.billing.billingEmail changed from "billing@acme.example" to "someone-else@acme.example"');
    expect(emulator.counters.writes).toBe(0);
  });

  it('refuses a saved plan when the active organisation changed since', async () => {
    const { cwd, env } = await setup();
    await runCli(['plan', '--out', 'plan.json'], { cwd, env });
    emulator.store.setActiveOrganisation('demo-token', 'org_umbrella');
    const result = await runCli(['apply', 'plan.json'], { cwd, env });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/activeOrganisation: the active organisation changed/);
    expect(emulator.counters.writes).toBe(0);
  });

  it('refuses a saved plan when a config file changed since', async () => {
    const { cwd, env } = await setup();
    await runCli(['plan', '--out', 'plan.json'], { cwd, env });
    await writeFile(join(cwd, 'orgs.yaml'), CHANGING_CONFIG.replace('finance@', 'accounts@'));
    const result = await runCli(['apply', 'plan.json'], { cwd, env });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/config file orgs.yaml changed since the plan/);
    expect(emulator.counters.writes).toBe(0);
  });

  it('refuses a saved plan made for another base URL', async () => {
    const { cwd, env } = await setup();
    await runCli(['plan', '--out', 'plan.json'], { cwd, env });
    const other = await startEmulator({ slugDelayMs: 0 });
    try {
      const result = await runCli(['apply', 'plan.json'], { cwd, env: { ...env, ORGFORM_BASE_URL: other.url } });
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(/was made for http:\/\/127\.0\.0\.1:\d+, not/);
      expect(other.counters.total).toBe(0);
    } finally {
      await other.stop();
    }
  });

  it('refuses a saved plan edited by hand or truncated', async () => {
    const { cwd, env } = await setup();
    await runCli(['plan', '--out', 'plan.json'], { cwd, env });
    const text = await readFile(join(cwd, 'plan.json'), 'utf8');
    await writeFile(join(cwd, 'edited.json'), text.replace('finance@acme.example', 'evil@acme.example'));
    await writeFile(join(cwd, 'truncated.json'), text.slice(0, text.length / 2));
    const edited = await runCli(['apply', 'edited.json'], { cwd, env });
    expect(edited.stderr).toMatch(/was changed after it was written/);
    const truncated = await runCli(['apply', 'truncated.json'], { cwd, env });
    expect(truncated.stderr).toMatch(/The saved plan truncated\.json ends (in the middle of line \d+|at line \d+ without its trailer line)/);
    expect(emulator.counters.writes).toBe(0);
  });

  it('keeps going after a failure, names it, exits 1, and a second run retries only what is left', async () => {
    const { cwd, env } = await setup();
    emulator.faults.add({ operation: 'updateBillingDetails', times: Infinity, fault: { kind: 'status', status: 500 } });
    // Short backoff: the retries of the 500s are not what this test is about (it runs under both profiles).
    const first = await runCli(['apply', '--auto-approve'], { cwd, env: { ...env, ORGFORM_RETRY_BASE_MS: '5' } });
    expect(first.code).toBe(1);
    expect(first.stdout).toMatch(/organisations\.acme\.billing/);
    expect(first.stdout).toMatch(/updateBillingDetails/);
    expect(first.stdout).toMatch(/internal/);
    expect(user()?.memberships).toContain('org_globex');
    emulator.faults.clear();
    emulator.resetCounters();
    const second = await runCli(['apply', '--auto-approve'], { cwd, env });
    expect(second.code).toBe(0);
    expect(emulator.counters.writes).toBe(1);
    expect(org('org_acme')?.billing?.billingEmail).toBe('finance@acme.example');
  });

  it('skips the changes that depend on a failed accept, and says so', async () => {
    const { cwd, env } = await setup(`version: 1
activeOrganisation: globex
organisations:
  globex:
    id: org_globex
    invitations:
      accept: [inv_missing]
    billing:
      billingEmail: ada@globex.example
`);
    const result = await runCli(['apply', '--auto-approve'], { cwd, env });
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/organisations\.globex\.billing.*skipped/s);
    expect(result.stdout).toMatch(/activeOrganisation.*skipped/s);
    expect(emulator.counters.byOperation.updateBillingDetails).toBe(0);
    expect(emulator.counters.byOperation.setActiveOrganisation).toBe(0);
  });

  it('refuses at once while another apply holds the lock, naming the holder', async () => {
    const { cwd, env } = await setup();
    const lock = await lockFileState(join(cwd, '.orgform', 'state.json'));
    try {
      const result = await runCli(['apply', '--auto-approve'], { cwd, env });
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(`pid ${process.pid}`);
      expect(result.stderr).toContain(`force-unlock ${lock.lock.id}`);
      expect(emulator.counters.writes).toBe(0);
    } finally {
      await lock.release();
    }
  });

  it('emits one JSON object per event with --format json', async () => {
    const { cwd, env } = await setup();
    const result = await runCli(['apply', '--auto-approve', '--format', 'json'], { cwd, env });
    const events = result.stdout.trim().split('\n').map((line) => JSON.parse(line));
    expect(events[0].type).toBe('apply_start');
    expect(events.at(-1).type).toBe('apply_end');
    expect(events.filter((e) => e.type === 'change_end')).toHaveLength(5);
  });

  it('with --format json and nothing to do, still emits apply_start and an apply_end with the whole summary', async () => {
    const { cwd, env } = await setup();
    expect((await runCli(['apply', '--auto-approve'], { cwd, env })).code).toBe(0);
    const result = await runCli(['apply', '--auto-approve', '--format', 'json'], { cwd, env });
    expect(result.code).toBe(0);
    const events = result.stdout.trim().split('\n').map((line) => JSON.parse(line));
    expect(events.map((e) => e.type)).toEqual(['apply_start', 'apply_end']);
    expect(events[1].summary).toMatchObject({ total: 0, applied: 0, already_done: 0, skipped: 0, not_started: 0, failed: 0, interrupted: false });
  });

  it('reports a retry as an event of the change it belongs to', async () => {
    const { cwd, env } = await setup();
    emulator.faults.add({ operation: 'updateBillingDetails', fault: { kind: 'status', status: 503 } });
    const result = await runCli(['apply', '--auto-approve', '--format', 'json'], { cwd, env: { ...env, ORGFORM_RETRY_BASE_MS: '5' } });
    const retries = result.stdout.trim().split('\n').map((line) => JSON.parse(line)).filter((e) => e.type === 'change_retry');
    expect(retries).toHaveLength(1);
    expect(retries[0]).toMatchObject({ address: 'organisations.acme.billing', attempt: 1, status: 503 });
    expect(result.code).toBe(0);
  });

  it('writes a line for a retry in a log', async () => {
    const { cwd, env } = await setup();
    emulator.faults.add({ operation: 'deleteNotificationChannel', fault: { kind: 'drop' } });
    const result = await runCli(['apply', '--auto-approve'], { cwd, env: { ...env, ORGFORM_RETRY_BASE_MS: '5' } });
    expect(result.stdout).toMatch(/organisations\.acme\.notificationChannels\.remove\.chn_acme_slack.*retrying/);
    expect(result.code).toBe(0);
  });

  it('converges through lost responses on every kind of write', async () => {
    const { cwd, env } = await setup();
    for (const operation of ['updateBillingDetails', 'acceptInvitation', 'deleteInvitation', 'deleteNotificationChannel', 'setActiveOrganisation'] as const) {
      emulator.faults.add({ operation, fault: { kind: 'lost-response' } });
    }
    const result = await runCli(['apply', '--auto-approve'], { cwd, env });
    expect(result.stdout + result.stderr).not.toMatch(/✗|[1-9]\d* failed/);
    expect(result.code).toBe(0);
    expect(user()?.active).toBe('org_acme');
    const again = await runCli(['plan', '--detailed-exitcode'], { cwd, env });
    expect(again.code).toBe(0);
  });

  it('as a process, waits out the backoff after a dropped connection, then applies the change and releases the lock', async () => {
    const { cwd, env } = await setup('version: 1\norganisations:\n  acme:\n    billing:\n      billingEmail: finance@acme.example\n');
    emulator.faults.add({ operation: 'updateBillingDetails', fault: { kind: 'drop' } });
    const result = await spawnCli(['apply', '--auto-approve'], { cwd, env: { ...env, ORGFORM_RETRY_BASE_MS: '300' } });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/Apply complete: 1 applied/);
    expect(org('org_acme')?.billing?.billingEmail).toBe('finance@acme.example');
    expect(existsSync(join(cwd, '.orgform', 'state.json.lock'))).toBe(false);
  });

  it('when interrupted before anything was read, sends nothing more, writes nothing and says it was cancelled', async () => {
    const config = `version: 1
activeOrganisation: globex
organisations:
  globex:
    id: org_globex
    billing:
      billingEmail: finance@globex.example
    invitations:
      accept: [inv_globex_ada]
`;
    const { cwd, env } = await setup(config);
    const controller = new AbortController();
    controller.abort();
    const result = await runCli(['apply', '--auto-approve'], { cwd, env, signal: controller.signal });
    expect(result.code).toBe(1);
    // Only requests on the wire are waited for; the rest are not sent. (That an interrupted accept
    // leaves what depends on it not started, not skipped, is apply-plan's test.)
    expect(result.stdout).toMatch(/Apply cancelled\. Nothing was changed\./);
    expect(result.stderr).toBe('');
    expect(emulator.counters.total).toBe(0);
  });

  it('on interrupt finishes what is in flight, starts nothing new, writes the journal and exits 1', async () => {
    const { cwd, env } = await setup(CHANGING_CONFIG, { latencyMs: 150 });
    const controller = new AbortController();
    const run = runCli(['apply', '--auto-approve', '--parallelism', '1'], { cwd, env, signal: controller.signal });
    // Let the plan's reads and the first write start, then interrupt.
    const started = Date.now();
    while (emulator.counters.writes === 0 && Date.now() - started < 10_000) await new Promise((r) => setTimeout(r, 10));
    controller.abort();
    const result = await run;
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/interrupted/i);
    expect(emulator.counters.writes).toBeGreaterThanOrEqual(1);
    expect(emulator.counters.writes).toBeLessThan(5);
    const second = await runCli(['apply', '--auto-approve'], { cwd, env });
    expect(second.code).toBe(0);
    expect((await runCli(['plan', '--detailed-exitcode'], { cwd, env })).code).toBe(0);
  });
});

describe('orgform apply PLANFILE and the directories it leaves', () => {
  it('never leaves out a one-shot change that an edited plan file calls journaled while the journal does not: the plan is stale, and nothing is written', async () => {
    const { cwd, env, emulator } = await setupEmulatorWorkspace({ 'orgs.yaml': CHANGING_CONFIG });
    expect((await runCli(['plan', '--out', 'plan.json'], { cwd, env })).code).toBe(0);
    const revoke = 'organisations.acme.invitations.revoke.inv_acme_carol';
    const text = tamperedText(await readFile(join(cwd, 'plan.json'), 'utf8'), (saved) => {
      saved.plan.changes = saved.plan.changes.filter((c: { address: string }) => c.address !== revoke);
      saved.plan.journaled.push(revoke);
    });
    await writeFile(join(cwd, 'plan.json'), text);
    const result = await runCli(['apply', 'plan.json', '--auto-approve'], { cwd, env });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`${revoke}: the plan lists this change as done by the journal when it was made, but the journal does not record it now`);
    expect(emulator.requestLog.filter((r) => r.method !== 'GET')).toEqual([]);
  });

  it('places the state by the config files, never where an edited plan file lists them (outside the tree), and calls the plan stale', async () => {
    const { cwd, env, emulator } = await setupEmulatorWorkspace({ 'orgs.yaml': CHANGING_CONFIG });
    expect((await runCli(['plan', '--out', 'plan.json'], { cwd, env })).code).toBe(0);
    const outside = await makeWorkspace();
    // A file where the state's directory would go: anything done there fails loudly.
    await writeFile(join(outside, '.orgform'), 'not a directory');
    const text = tamperedText(await readFile(join(cwd, 'plan.json'), 'utf8'), (saved) => (saved.desired.files[0].path = join(outside, 'orgs.yaml')));
    await writeFile(join(cwd, 'plan.json'), text);
    const result = await runCli(['apply', 'plan.json'], { cwd, env });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('the desired state the plan holds is not what its config files give now');
    expect(result.stderr).not.toMatch(/bug in orgform|ENOTDIR/);
    expect(await readdir(outside)).toEqual(['.orgform']);
    expect(emulator.requestLog.filter((r) => r.method !== 'GET')).toEqual([]);
  });

  it('refuses a plan whose desired state was edited with its change to match (an e-mail of no config file), its checksum recomputed, and writes nothing', async () => {
    const { cwd, env, emulator } = await setupEmulatorWorkspace({ 'orgs.yaml': CHANGING_CONFIG });
    expect((await runCli(['plan', '--out', 'plan.json'], { cwd, env })).code).toBe(0);
    // The config files stay as planned (their hashes match): only the plan file says otherwise.
    const text = tamperedText(await readFile(join(cwd, 'plan.json'), 'utf8'), (saved) => {
      saved.desired.organisations.find((o: { slug: string }) => o.slug === 'acme').billing.billingEmail = 'evil@attacker.example';
      saved.plan.changes.find((c: { kind: string; organisation: { slug: string } }) => c.kind === 'billing' && c.organisation.slug === 'acme').declared.billingEmail = 'evil@attacker.example';
    });
    await writeFile(join(cwd, 'plan.json'), text);
    const result = await runCli(['apply', 'plan.json'], { cwd, env });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('the desired state the plan holds is not what its config files give now');
    expect(emulator.requestLog.filter((r) => r.method !== 'GET')).toEqual([]);
    expect(JSON.stringify(emulator.store.dump())).not.toContain('evil@attacker.example');
  });

  it('with ORGFORM_PLAN_KEY, refuses an unsigned plan naming files that do not load as unsigned, before anything the files say', async () => {
    const { cwd, env, emulator } = await setupEmulatorWorkspace({ 'orgs.yaml': CHANGING_CONFIG, 'other.yaml': 'version: 1\norganisations:\n  acme:\n    billing:\n      billingEmail: ${ORGFORM_VAR_UNSET}\n' });
    expect((await runCli(['plan', '--out', 'plan.json'], { cwd, env })).code).toBe(0);
    // Its first line (read before the rest is checked) now names a file that does not load.
    await writeFile(join(cwd, 'plan.json'), tamperedText(await readFile(join(cwd, 'plan.json'), 'utf8'), (saved) => {
      saved.configFiles = [{ path: 'other.yaml', sha256: saved.configFiles[0].sha256 }];
    }));
    const result = await runCli(['apply', 'plan.json'], { cwd, env: { ...env, ORGFORM_PLAN_KEY: 'a-plan-key-of-at-least-32-characters!' } });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('is not signed, and ORGFORM_PLAN_KEY is set');
    expect(result.stderr).not.toContain('ORGFORM_VAR_UNSET');
    expect(emulator.requestLog.filter((r) => r.method !== 'GET')).toEqual([]);
  });

  it('made from files split in a subdirectory with a configuration variable, applies where the variable is the same, and otherwise says which organisation or which variable', async () => {
    const a = 'version: 1\nactiveOrganisation: acme\norganisations:\n  acme:\n    billing:\n      billingEmail: ${ORGFORM_VAR_FINANCE_EMAIL}\n';
    const b = 'version: 1\norganisations:\n  globex:\n    id: org_globex\n    invitations:\n      accept: [inv_globex_ada]\n';
    const { cwd, env, emulator } = await setupEmulatorWorkspace({ 'teams/a.yaml': a, 'teams/b.yaml': b });
    const planned = { ...env, ORGFORM_VAR_FINANCE_EMAIL: 'finance@acme.example' };
    const made = await runCli(['plan', '-f', 'a.yaml', '-f', 'b.yaml', '--out', '../plans/plan.bin'], { cwd: join(cwd, 'teams'), env: planned });
    expect(made.code).toBe(0);
    const elsewhere = await makeWorkspace();
    const plan = join(cwd, 'plans', 'plan.bin');

    // The variable not set where it is applied: the problem is named (never a value), as data too.
    const unset = await runCli(['apply', plan, '--format', 'json'], { cwd: elsewhere, env });
    expect(unset.code).toBe(1);
    expect(unset.stderr).toContain('a.yaml:6:21: billing.billingEmail: environment variable ORGFORM_VAR_FINANCE_EMAIL is not set');
    const refusal = JSON.parse(unset.stdout.trim().split('\n').at(-1) ?? '{}');
    expect(refusal).toMatchObject({ type: 'refused', reason: 'stale' });
    expect(refusal.message).toContain(`The saved plan ${plan} is stale`);
    expect(refusal.details.join('\n')).toContain('ORGFORM_VAR_FINANCE_EMAIL is not set');

    // Another value: stale, naming the organisation whose desired state differs.
    const other = await runCli(['apply', plan], { cwd: elsewhere, env: { ...env, ORGFORM_VAR_FINANCE_EMAIL: 'other@acme.example' } });
    expect(other.code).toBe(1);
    expect(other.stderr).toContain('organisations.acme: the desired state the plan holds is not what its config files give now');
    expect(other.stderr).not.toContain('organisations.globex');
    expect(other.stderr).not.toContain('other@acme.example');
    expect(emulator.requestLog.filter((r) => r.method !== 'GET')).toEqual([]);

    const applied = await runCli(['apply', plan], { cwd: elsewhere, env: planned });
    expect(applied.stderr).toBe('');
    expect(applied.code).toBe(0);
    expect(emulator.store.dump().organisations.find((o) => o.id === 'org_acme')?.billing?.billingEmail).toBe('finance@acme.example');
    expect(await readdir(elsewhere)).toEqual([]);
  });

  it('names no value of a file outside the tree that an edited plan points its workdir at: files not as planned are only named changed', async () => {
    const { cwd, env, emulator } = await setupEmulatorWorkspace({ 'orgs.yaml': CHANGING_CONFIG });
    expect((await runCli(['plan', '--out', 'plan.json'], { cwd, env })).code).toBe(0);
    // A YAML file of the runner whose problems would quote its values (an unsupported version).
    const outside = await makeWorkspace({ 'runner.yaml': 'version: SECRET_OF_THE_RUNNER\norganisations: {}\n' });
    const text = editRecords(await readFile(join(cwd, 'plan.json'), 'utf8'), (records) => {
      const header = recordOf(records, 'header');
      header.workdir = relative(cwd, outside);
      header.configFiles = [{ path: 'runner.yaml', sha256: '0'.repeat(64) }];
    });
    await writeFile(join(cwd, 'plan.json'), text);
    const result = await runCli(['apply', 'plan.json'], { cwd, env });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('config file runner.yaml changed since the plan');
    expect(result.stderr + result.stdout).not.toContain('SECRET_OF_THE_RUNNER');
    expect(emulator.requestLog.filter((r) => r.method !== 'GET')).toEqual([]);
  });

  it('run from another directory, leaves nothing behind there (no empty .orgform)', async () => {
    const { cwd, env } = await setupEmulatorWorkspace({ 'orgs.yaml': CHANGING_CONFIG });
    expect((await runCli(['plan', '--out', 'plan.json'], { cwd, env })).code).toBe(0);
    const elsewhere = await makeWorkspace();
    const result = await runCli(['apply', join(cwd, 'plan.json')], { cwd: elsewhere, env });
    // The plan's files and state are where it was made: it applies from here, and writes only there.
    expect(result.code).toBe(0);
    expect(await readdir(elsewhere)).toEqual([]);
    expect((await readdir(cwd)).sort()).toEqual(['.orgform', 'orgs.yaml', 'plan.json']);
  });

  it('leaves no empty state directory when nothing was journaled, and keeps it when something was', async () => {
    const billingOnly = 'version: 1\norganisations:\n  acme:\n    billing:\n      billingEmail: finance@acme.example\n';
    const { cwd, env } = await setupEmulatorWorkspace({ 'orgs.yaml': billingOnly });
    expect((await runCli(['apply', '--auto-approve'], { cwd, env })).code).toBe(0);
    expect((await readdir(cwd)).sort()).toEqual(['orgs.yaml']);
    await writeFile(join(cwd, 'orgs.yaml'), CHANGING_CONFIG);
    expect((await runCli(['apply', '--auto-approve'], { cwd, env })).code).toBe(0);
    expect(await readdir(join(cwd, '.orgform'))).toEqual(['state.json']);
  });
});
