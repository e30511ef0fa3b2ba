/**
 * Writes only from fresh reads, end to end against the emulator over loopback, under every profile:
 * a billing system renewing subscriptions while a bulk apply runs (issue 20, "What happened"), a
 * change made while apply waits for yes, an empty value the service holds, a declared field someone
 * else changed (stale), membership that only a listing proves, and saved plans that were edited.
 */
import { execFileSync } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { createClient } from '../../src/api/client.js';
import type { Organisation } from '../../src/api/types.js';
import type { ProfileName } from '../../src/emulator/behaviour.js';
import type { EmulatorOptions } from '../../src/emulator/server.js';
import type { EmulatorStore } from '../../src/emulator/store.js';
import { generateEmulatorData } from '../../src/emulator/generate-emulator-data.js';
import { runApply } from '../../src/commands/apply/flow.js';
import { recordingApplyView } from '../support/recording-view.js';
import { setupEmulatorWorkspace } from '../support/emulator-workspace.js';
import { MATRIX_PROFILES } from '../support/profiles.js';
import { runCli, spawnCli } from '../support/run-cli.js';
import { CHANGING_CONFIG } from '../support/workspace.js';
import { tamperedText } from '../support/saved-plan-lines.js';

let profile: ProfileName;

/** `n` generated organisations and an orgs.yaml declaring only each one's billing e-mail, against a service whose billing PUT replaces all four fields. */
async function bulkWorld(n: number, options: EmulatorOptions = {}) {
  const data = generateEmulatorData({ organisations: n });
  const lines = ['version: 1', 'organisations:'];
  for (const o of data.organisations) lines.push(`  ${o.slug}:`, '    billing:', `      billingEmail: new-${o.slug}@example.com`);
  const world = await setupEmulatorWorkspace({ 'orgs.yaml': `${lines.join('\n')}\n` }, { data, profile, ...options, behaviour: { 'billing-put': 'replace', ...options.behaviour } });
  return { ...world, data };
}

/** Calls `act` just before the store takes its `nth` call of `method` (1-based): someone else writing while apply runs. */
function beforeStoreCall(store: EmulatorStore, method: 'updateBillingDetails' | 'listOrganisations', nth: number, act: () => void): void {
  const target = store as unknown as Record<string, (...args: unknown[]) => unknown>;
  const original = target[method]!.bind(store);
  let seen = 0;
  target[method] = (...args: unknown[]) => {
    seen += 1;
    if (seen === nth) act();
    return original(...args);
  };
}

const bodies = (log: Array<{ method: string; path: string }>) => log.filter((r) => r.method === 'PUT' && r.path.endsWith('/billing'));

describe.each(MATRIX_PROFILES)('writes from fresh reads (%s)', (name) => {
  beforeEach(() => {
    profile = name;
  });

  it('keeps the subscriptions a billing system renews a moment into a bulk apply that declares only the e-mail, and sets every e-mail', async () => {
    const { cwd, env, emulator, data } = await bulkWorld(150);
    // Three organisations well into the listing (its order: by slug; pages of 50 under strict), renewed when the first write arrives.
    const renewed = [...data.organisations].sort((a, b) => (a.slug < b.slug ? -1 : 1)).filter((_, i) => [60, 100, 140].includes(i));
    beforeStoreCall(emulator.store, 'updateBillingDetails', 1, () => {
      for (const [i, o] of renewed.entries()) emulator.store.changeBilling(o.id, { subscriptionId: `sub_renewed_${i}`, customerId: `cus_renewed_${i}` });
    });
    const result = await runCli(['apply', '--auto-approve', '--parallelism', '4'], { cwd, env });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/Apply complete: 150 applied/);
    const after = new Map(emulator.store.dump().organisations.map((o) => [o.id, o]));
    for (const [i, o] of renewed.entries()) expect(after.get(o.id)?.billing).toMatchObject({ subscriptionId: `sub_renewed_${i}`, customerId: `cus_renewed_${i}`, billingEmail: `new-${o.slug}@example.com` });
    for (const o of data.organisations) expect(after.get(o.id)?.billing?.billingEmail).toBe(`new-${o.slug}@example.com`);
    const plan = await runCli(['plan', '--detailed-exitcode'], { cwd, env });
    expect(plan.code).toBe(0);
  }, 60_000);

  it('keeps a subscription renewed while apply waits at its question, and writes the e-mail over it', async () => {
    const { cwd, emulator } = await setupEmulatorWorkspace(
      { 'orgs.yaml': 'version: 1\norganisations:\n  acme:\n    billing:\n      billingEmail: finance@acme.example\n' },
      { profile, behaviour: { 'billing-put': 'replace' } },
    );
    const ask = async () => {
      emulator.store.changeBilling('org_acme', { subscriptionId: 'sub_renewed', customerId: 'cus_renewed' });
      return true;
    };
    const outcome = await runApply(
      { selection: { files: [] }, parallelism: 2, autoApprove: false },
      {
        cwd,
        now: Date.now,
        signal: new AbortController().signal,
        openClient: async () => ({ client: createClient({ baseUrl: emulator.url, token: 'demo-token' }) }),
        confirmation: { ask },
      },
      recordingApplyView(),
    );
    expect(outcome).toMatchObject({ kind: 'applied', summary: { applied: 1, failed: 0 } });
    expect(emulator.store.dump().organisations.find((o) => o.id === 'org_acme')?.billing).toMatchObject({
      billingEmail: 'finance@acme.example',
      subscriptionId: 'sub_renewed',
      customerId: 'cus_renewed',
    });
  });

  it('refuses as stale, with the reason, the organisation whose declared e-mail someone changed during the run, applies the rest and exits 1', async () => {
    const { cwd, env, emulator, data } = await bulkWorld(3);
    const [first, , last] = [...data.organisations].sort((a, b) => (a.slug < b.slug ? -1 : 1));
    // After the plan's read (one listing), before apply reads again (its own listing), someone sets the last one's e-mail.
    beforeStoreCall(emulator.store, 'listOrganisations', 2, () => emulator.store.changeBilling(last!.id, { billingEmail: 'someone@else.example' }));
    const result = await runCli(['apply', '--auto-approve', '--parallelism', '1', '--format', 'json'], { cwd, env });
    expect(result.code).toBe(1);
    const events = result.stdout.trim().split('\n').map((line) => JSON.parse(line) as Record<string, any>);
    const stale = events.find((e) => e.type === 'change_end' && e.outcome === 'stale');
    expect(stale).toMatchObject({ address: `organisations.${last!.slug}.billing`, reason: expect.stringContaining(`changed on the service since the plan, from "${last!.billing!.billingEmail}" to "someone@else.example"`) });
    expect(events.at(-1)).toMatchObject({ type: 'apply_end', summary: { applied: 2, stale: 1, failed: 0 } });
    const after = emulator.store.dump().organisations;
    expect(after.find((o) => o.id === last!.id)?.billing?.billingEmail).toBe('someone@else.example');
    expect(after.find((o) => o.id === first!.id)?.billing?.billingEmail).toBe(`new-${first!.slug}@example.com`);
    // A plan made now shows the change to review; applied, it converges.
    const again = await runCli(['apply', '--auto-approve'], { cwd, env });
    expect(again.stdout).toContain(`billingEmail: "someone@else.example" → "new-${last!.slug}@example.com"`);
    expect(again.code).toBe(0);
  });

  it('refuses as stale, writing nothing, an organisation you left between the plan and apply’s read, and applies the rest', async () => {
    const { cwd, env, emulator, data } = await bulkWorld(60);
    const left = [...data.organisations].sort((a, b) => (a.slug < b.slug ? -1 : 1))[40]!;
    beforeStoreCall(emulator.store, 'listOrganisations', 2, () => {
      const user = emulator.store.dump().users.find((u) => u.token === 'demo-token')!;
      emulator.store.putUser({ ...user, memberships: user.memberships.filter((id) => id !== left.id) });
    });
    const result = await runCli(['apply', '--auto-approve', '--parallelism', '4'], { cwd, env });
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(`! organisations.${left.slug}.billing stale, not written: organisation "${left.slug}" (${left.id}) is no longer among your organisations`);
    expect(result.stdout).toMatch(/59 applied, 0 already done, 0 skipped, 0 not started, 1 stale, 0 failed/);
    expect(emulator.requestLog.filter((r) => r.method === 'PUT' && r.path.includes(encodeURIComponent(left.id)))).toEqual([]);
  });

  it('never sends back an empty e-mail the service holds, so apply converges, nor after joining', async () => {
    const { cwd, env, emulator } = await setupEmulatorWorkspace(
      {
        'orgs.yaml': 'version: 1\norganisations:\n  acme:\n    billing:\n      customerID: cus_new\n  wonka:\n    id: org_wonka\n    invitations:\n      accept: [inv_wonka_ada]\n    billing:\n      customerID: cus_wonka_new\n',
      },
      { profile },
    );
    emulator.store.changeBilling('org_acme', { billingEmail: '' });
    emulator.store.changeBilling('org_wonka', { billingEmail: '' });
    const result = await runCli(['apply', '--auto-approve'], { cwd, env });
    expect(result.stdout + result.stderr).not.toMatch(/validation_failed|invalid_email/);
    expect(result.code).toBe(0);
    const puts = emulator.requestLog.filter((r) => r.method === 'PUT' && r.path.endsWith('/billing'));
    expect(puts).toHaveLength(2);
    expect(emulator.store.dump().organisations.find((o) => o.id === 'org_acme')?.billing?.customerId).toBe('cus_new');
    expect(emulator.store.dump().organisations.find((o) => o.id === 'org_wonka')?.billing?.customerId).toBe('cus_wonka_new');
    const plan = await runCli(['plan', '--detailed-exitcode'], { cwd, env });
    expect(plan.code).toBe(0);
  });

  it('takes membership from the listing, never from a readable organisation: billing for a non-member is a problem, and nothing is written', async () => {
    const { cwd, env, emulator } = await setupEmulatorWorkspace(
      { 'orgs.yaml': 'version: 1\norganisations:\n  globex:\n    id: org_globex\n    billing:\n      billingEmail: finance@globex.example\n' },
      { profile, behaviour: { 'non-member-reads': 'readable' } },
    );
    const plan = await runCli(['plan'], { cwd, env });
    expect(plan.code).toBe(1);
    expect(plan.stdout + plan.stderr).toContain('you are not a member of organisation id "org_globex"');
    const apply = await runCli(['apply', '--auto-approve'], { cwd, env });
    expect(apply.code).toBe(1);
    expect(apply.stderr).toMatch(/could not be read, so the plan is incomplete\. Nothing was changed/);
    expect(bodies(emulator.requestLog)).toEqual([]);
    expect(emulator.store.dump().organisations.find((o) => o.id === 'org_globex')?.billing?.billingEmail).toBe('billing@globex.example');
  });
});

describe('the listing read again behind the writes, whatever its pages look like', () => {
  it.each([
    ['cursors, billing listed, response spelling', { 'next-link': 'cursor', 'last-next': 'omit', 'page-size': 'client', 'listing-billing': 'full', 'read-spelling': 'response' }],
    ['relative links ending in null', { 'next-link': 'relative', 'last-next': 'null', 'page-size': 'client', 'listing-billing': 'full', 'read-spelling': 'update' }],
    ['absolute links ending in "", pages of 50', { 'next-link': 'absolute', 'last-next': 'empty', 'page-size': 'fixed-50', 'listing-billing': 'full', 'read-spelling': 'response' }],
    ['pages of 50 without billing', { 'next-link': 'cursor', 'last-next': 'omit', 'page-size': 'fixed-50', 'listing-billing': 'omitted', 'read-spelling': 'update' }],
  ] as const)('%s: every renewal made ahead of the listing is kept, at one listing more than the plan’s', async (_what, behaviour) => {
    profile = 'lenient';
    const { cwd, env, emulator, data } = await bulkWorld(130, { behaviour });
    const sorted = [...data.organisations].sort((a, b) => (a.slug < b.slug ? -1 : 1));
    // Renewed after the plan's listing, before apply's own: every one must be kept.
    beforeStoreCall(emulator.store, 'listOrganisations', 2, () => {
      for (const o of sorted.filter((_, i) => i % 10 === 3)) emulator.store.changeBilling(o.id, { subscriptionId: `sub_renewed_${o.id}` });
    });
    const result = await runCli(['apply', '--auto-approve', '--parallelism', '4'], { cwd, env });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/Apply complete: 130 applied/);
    const after = new Map(emulator.store.dump().organisations.map((o) => [o.id, o.billing]));
    for (const o of sorted.filter((_, i) => i % 10 === 3)) expect(after.get(o.id)?.subscriptionId).toBe(`sub_renewed_${o.id}`);
    // The plan's listing and apply's: pages of 50 (fixed, or 2 × --parallelism asked for, at least 50).
    expect(emulator.counters.byOperation.getOrganisations).toBe(behaviour['page-size'] === 'fixed-50' ? 3 + 3 : 1 + 3);
    expect(emulator.counters.byOperation.getOrganisation).toBe(behaviour['listing-billing'] === 'omitted' ? 260 : 0);
  }, 60_000);
});

describe.each(MATRIX_PROFILES)('saved plans checked against their own derivation (%s)', (name) => {
  beforeEach(() => {
    profile = name;
  });

  /** Rewrites the saved plan as anyone could, checksum included. */
  async function tamper(path: string, edit: (saved: Record<string, any>) => void): Promise<void> {
    await writeFile(path, tamperedText(await readFile(path, 'utf8'), edit));
  }

  it('refuses a plan edited to send acme’s e-mail to org_globex, its checksum recomputed, and writes nothing', async () => {
    const { cwd, env, emulator } = await setupEmulatorWorkspace({ 'orgs.yaml': CHANGING_CONFIG }, { profile, behaviour: { 'billing-put': 'replace' } });
    expect((await runCli(['plan', '--out', 'plan.json'], { cwd, env })).code).toBe(0);
    const globexBefore = emulator.store.dump().organisations.find((o) => o.id === 'org_globex')?.billing;
    await tamper(join(cwd, 'plan.json'), (saved) => {
      const change = saved.plan.changes.find((c: { kind: string }) => c.kind === 'billing');
      change.organisation.id = 'org_globex';
    });
    const result = await runCli(['apply', 'plan.json'], { cwd, env });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('holds a change that its own desired state and the service do not give');
    expect(result.stderr).toContain('organisations.acme.billing');
    expect(emulator.requestLog.filter((r) => r.method !== 'GET')).toEqual([]);
    expect(emulator.store.dump().organisations.find((o) => o.id === 'org_globex')?.billing).toEqual(globexBefore);
  });

  it.each([
    ['a change without its organisation', (saved: Record<string, any>) => (saved.plan.changes[0].organisation = null), '(change organisations.acme.billing) has a malformed field: change.organisation must be object'],
    ['invitations that are not a list', (saved: Record<string, any>) => (saved.desired.organisations[0].invitations = 'all of them'), '(organisation acme) has a malformed field: organisation.invitations must be object'],
  ])('refuses a plan with a malformed field (%s) as PLAN_INVALID naming the field, never as a bug, and writes nothing', async (_what, edit, message) => {
    const { cwd, env, emulator } = await setupEmulatorWorkspace({ 'orgs.yaml': CHANGING_CONFIG }, { profile });
    await runCli(['plan', '--out', 'plan.json'], { cwd, env });
    await tamper(join(cwd, 'plan.json'), edit);
    const result = await runCli(['apply', 'plan.json'], { cwd, env });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/The saved plan plan\.json:\d+ /);
    expect(result.stderr).toContain(message);
    expect(result.stderr).not.toMatch(/bug in orgform/);
    expect(emulator.requestLog.filter((r) => r.method !== 'GET')).toEqual([]);
  });

  it('with ORGFORM_PLAN_KEY signs the plan, applies it with the same key, and refuses it unsigned or edited', async () => {
    const { cwd, env, emulator } = await setupEmulatorWorkspace({ 'orgs.yaml': CHANGING_CONFIG }, { profile });
    const key = { ...env, ORGFORM_PLAN_KEY: 'a-plan-key-of-at-least-32-characters!' };
    expect((await runCli(['plan', '--out', 'unsigned.json'], { cwd, env })).code).toBe(0);
    expect((await runCli(['plan', '--out', 'signed.json'], { cwd, env: key })).code).toBe(0);
    const unsigned = await runCli(['apply', 'unsigned.json'], { cwd, env: key });
    expect(unsigned.code).toBe(1);
    expect(unsigned.stderr).toContain('is not signed, and ORGFORM_PLAN_KEY is set');
    await writeFile(join(cwd, 'edited.json'), (await readFile(join(cwd, 'signed.json'), 'utf8')).replace('finance@acme.example', 'thief@evil.example'));
    await tamper(join(cwd, 'edited.json'), () => undefined);
    const edited = await runCli(['apply', 'edited.json'], { cwd, env: key });
    expect(edited.code).toBe(1);
    expect(edited.stderr).toContain('is not signed with ORGFORM_PLAN_KEY');
    expect(emulator.requestLog.filter((r) => r.method !== 'GET')).toEqual([]);
    const short = await runCli(['apply', 'signed.json'], { cwd, env: { ...env, ORGFORM_PLAN_KEY: 'short' } });
    expect(short.stderr).toContain('ORGFORM_PLAN_KEY must be at least 32 characters long');
    const applied = await runCli(['apply', 'signed.json'], { cwd, env: key });
    expect(applied.stderr).toBe('');
    expect(applied.code).toBe(0);
    expect(emulator.store.dump().organisations.find((o: Organisation) => o.id === 'org_acme')?.billing?.billingEmail).toBe('finance@acme.example');
  });
});

describe.each(MATRIX_PROFILES)('a billing write held until its read is old (%s)', (name) => {
  it('is not sent from that read: a renewal made while a 429 held it is kept, and the write is built again under a new Idempotency-Key', async () => {
    const { cwd, env, emulator } = await setupEmulatorWorkspace(
      { 'orgs.yaml': 'version: 1\norganisations:\n  acme:\n    billing:\n      billingEmail: finance@acme.example\n' },
      { profile: name, behaviour: { 'billing-put': 'replace' } },
    );
    // The first billing write is answered 429 with a pause longer than the read bound; the billing
    // system renews the subscription during that pause.
    emulator.faults.add({ operation: 'updateBillingDetails', fault: { kind: 'status', status: 429, retryAfter: 2 } });
    const faults = emulator.faults as unknown as { take: (...args: unknown[]) => unknown };
    const take = faults.take.bind(emulator.faults);
    faults.take = (...args: unknown[]) => {
      const fault = take(...args);
      if (fault !== undefined) emulator.store.changeBilling('org_acme', { subscriptionId: 'sub_renewed', customerId: 'cus_renewed' });
      return fault;
    };
    const result = await runCli(['apply', '--auto-approve'], { cwd, env: { ...env, ORGFORM_READ_MAX_AGE_MS: '1000' } });
    expect(result.code).toBe(0);
    expect(emulator.store.dump().organisations.find((o) => o.id === 'org_acme')?.billing).toMatchObject({
      billingEmail: 'finance@acme.example',
      subscriptionId: 'sub_renewed',
      customerId: 'cus_renewed',
    });
    const keys = bodies(emulator.requestLog).map((r) => (r as { idempotencyKey?: string }).idempotencyKey);
    expect(keys).toHaveLength(2);
    expect(new Set(keys).size).toBe(2);
  }, 30_000);

  it('fails the change, writing nothing, when every one of three builds is held until its read is old', async () => {
    const { cwd, env, emulator } = await setupEmulatorWorkspace(
      { 'orgs.yaml': 'version: 1\norganisations:\n  acme:\n    billing:\n      billingEmail: finance@acme.example\n' },
      { profile: name, behaviour: { 'billing-put': 'replace' } },
    );
    emulator.faults.add({ operation: 'updateBillingDetails', times: 3, fault: { kind: 'status', status: 429, retryAfter: 2 } });
    const result = await runCli(['apply', '--auto-approve'], { cwd, env: { ...env, ORGFORM_READ_MAX_AGE_MS: '1000' } });
    expect(result.code).toBe(1);
    expect(result.stdout).toContain('was read 3 times, and each time its write was held (rate limit, retries) until the read was older than 1000 ms, so it was not sent. Nothing was written');
    expect(bodies(emulator.requestLog)).toHaveLength(3);
    expect(emulator.store.dump().organisations.find((o) => o.id === 'org_acme')?.billing?.billingEmail).toBe('billing@acme.example');
  }, 30_000);
});

describe('a saved plan naming a config file that is not one', () => {
  it('refuses it as stale at once, without reading a FIFO it names (which blocked apply past every signal, SIGKILL apart)', async () => {
    const { cwd, env, emulator } = await setupEmulatorWorkspace({ 'orgs.yaml': CHANGING_CONFIG });
    expect((await runCli(['plan', '--out', 'plan.json'], { cwd, env })).code).toBe(0);
    execFileSync('mkfifo', [join(cwd, 'fifo')]);
    const text = tamperedText(await readFile(join(cwd, 'plan.json'), 'utf8'), (body) => {
      body.configFiles[0].path = 'fifo';
      body.desired.files[0].path = 'fifo';
    });
    await writeFile(join(cwd, 'plan.json'), text);
    let pid: number | undefined;
    const killer = setTimeout(() => pid !== undefined && process.kill(pid, 'SIGKILL'), 15_000);
    const result = await spawnCli(['apply', 'plan.json'], { cwd, env, onSpawn: (p) => (pid = p) }).finally(() => clearTimeout(killer));
    expect(result.signal).toBeNull();
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('config file fifo cannot be read now');
    expect(emulator.requestLog.filter((r) => r.method !== 'GET')).toEqual([]);
  }, 30_000);
});

describe('an answer that is not UTF-8', () => {
  it('is not read, so that no value it garbles is written back: a Latin-1 é in an undeclared field fails the change, and nothing is sent', async () => {
    const { cwd, env, emulator } = await setupEmulatorWorkspace(
      { 'orgs.yaml': 'version: 1\norganisations:\n  acme:\n    billing:\n      billingEmail: finance@acme.example\n' },
      { behaviour: { 'billing-put': 'replace' } },
    );
    // Apply's read of acme just before the write, answered by a legacy service in Latin-1.
    const body = JSON.stringify({ id: 'org_acme', slug: 'acme', billing: { billingEmail: 'billing@acme.example', customerId: 'cus_acme', subscriptionId: 'sub_acme', platformId: 'plat_café' } });
    emulator.faults.add({ operation: 'getOrganisation', fault: { kind: 'status', status: 200, body, contentType: 'application/json', bodyEncoding: 'latin1' } });
    const result = await runCli(['apply', '--auto-approve'], { cwd, env });
    expect(result.code).toBe(1);
    expect(result.stdout + result.stderr).toContain('the answer is not valid UTF-8');
    expect(bodies(emulator.requestLog)).toEqual([]);
    expect(emulator.store.dump().organisations.find((o) => o.id === 'org_acme')?.billing?.platformId).toBe('plat_acme');
  });
});
